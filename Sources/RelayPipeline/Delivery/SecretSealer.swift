/// Seals and opens what must wait in the outbox but is itself a secret (a console sign-in link):
/// `serve` makes one from the relay's lasting secret (RelayPlatform's `OutboxSecretBox`), which
/// every replica sharing the store derives alike.
public struct SecretSealer: Sendable {
    public let seal: @Sendable (String) -> String
    /// The text, or nil when it was not sealed with this key (or was altered).
    public let open: @Sendable (String) -> String?

    public init(seal: @escaping @Sendable (String) -> String, open: @escaping @Sendable (String) -> String?) {
        self.seal = seal
        self.open = open
    }
}
