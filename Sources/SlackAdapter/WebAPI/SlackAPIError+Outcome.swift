import RelayCore
public import RelayPipeline

extension SlackAPIError {
    /// Slack error codes that describe a passing failure on Slack's side.
    static let transientCodes: Set<String> = ["internal_error", "fatal_error", "service_unavailable", "request_timeout"]

    /// What the codes a relay meets most often mean, in words an operator can act on.
    static let explanations: [String: String] = [
        "invalid_auth": "the token was refused",
        "not_authed": "no token was sent",
        "account_inactive": "the token belongs to a deleted user or workspace",
        "token_revoked": "the token was revoked",
        "token_expired": "the token has expired",
        "not_allowed_token_type": "this method needs another kind of token",
        "missing_scope": "the token lacks a scope this method needs",
        "channel_not_found": "the channel does not exist or the bot cannot see it",
        "not_in_channel": "the bot is not a member of the channel; invite it",
        "is_archived": "the channel is archived",
        "msg_too_long": "the message is too long",
        "no_text": "the message has no text",
        "invalid_blocks": "the blocks are not valid Block Kit",
        "message_not_found": "the message to update does not exist",
        "cant_update_message": "the message was not posted by this bot",
        "user_not_in_channel": "the user is not in the channel",
        "restricted_action": "the workspace does not allow the bot to post here",
        "expired_url": "the response_url has expired",
        "used_url": "the response_url was already used as often as allowed",
    ]

    /// One line for logs and the outbox: "chat.postMessage: channel_not_found (the channel
    /// does not exist or the bot cannot see it)". Never holds a token or a `response_url`.
    public var reason: String {
        switch self {
        case .rateLimited(let method, let retryAfter):
            "\(method): rate limited (retry after \(Self.format(retryAfter)) s)"
        case .api(let method, let code, _):
            Self.explanations[code].map { "\(method): \(code) (\($0))" } ?? "\(method): \(code)"
        case .server(let method, let status):
            "\(method): Slack answered HTTP \(status)"
        case .timedOut(let method, let seconds):
            "\(method): no answer within \(Self.format(seconds)) s"
        case .unreachable(let method, let reason):
            "\(method): \(reason)"
        case .malformed(let method, let reason):
            "\(method): unexpected answer (\(reason))"
        case .invalidRequest(let method, let reason):
            "\(method): \(reason)"
        case .cancelled(let method):
            "\(method): cancelled"
        }
    }

    /// Whether trying the same call again later may succeed.
    public var isRetryable: Bool {
        switch deliveryOutcome {
        case .rateLimited, .retryable: true
        case .sent, .partDelivered, .rejected: false
        }
    }

    /// What the outbox should do with the entry whose delivery failed this way.
    ///
    /// Timeouts, 5xx, connection failures, malformed answers and cancellation are retryable:
    /// the message may not have arrived, and a duplicate is better than a lost answer.
    /// Anything Slack refused by name is final, except its own transient codes
    /// (`internal_error`, `service_unavailable`…).
    public var deliveryOutcome: DeliveryOutcome {
        switch self {
        case .rateLimited(_, let retryAfter):
            .rateLimited(retryAfter: retryAfter, reason: reason)
        case .api(_, let code, _) where Self.transientCodes.contains(code):
            .retryable(reason: reason)
        case .api, .invalidRequest:
            .rejected(reason: reason)
        case .server, .timedOut, .unreachable, .malformed, .cancelled:
            .retryable(reason: reason)
        }
    }

    /// "2", "0.5": whole seconds without a fraction.
    private static func format(_ duration: Duration) -> String {
        let seconds = duration.seconds
        guard seconds.isFinite, abs(seconds) < 1e9 else { return "\(seconds)" }
        let rounded = (seconds * 100).rounded() / 100
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}
