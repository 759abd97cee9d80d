public import RelayPlatform

/// Slack's `response_url`s wait in the outbox sealed with the outbox's box, keyed from the Slack
/// signing secret or token.
public typealias SlackSecretBox = OutboxSecretBox

extension OutboxSecretBox {
    /// The box for Slack's values (its derivation is unchanged, so what was sealed before opens).
    public init(secret: String) {
        self.init(secret: secret, purpose: "slack")
    }
}
