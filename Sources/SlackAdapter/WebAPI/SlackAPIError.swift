public import RelayPlatform

/// Why a Slack Web API call or `response_url` post failed: the shared platform-call error with
/// Slack's refusals. Its `endpoint` is the Web API method (`chat.postMessage`) or `response_url`;
/// nothing in it ever holds a token or a `response_url`.
public typealias SlackAPIError = PlatformCallError<SlackRefusal>

/// Slack said no: `{"ok":false,"error":code}` (usually with HTTP 200), or a 4xx such as a 404
/// from an expired `response_url`.
public struct SlackRefusal: PlatformRefusal {
    public static let platform = "Slack"

    /// Slack's error string (`channel_not_found`), sanitised to `[a-z0-9_.-]` and bounded, or one
    /// of ours in its style (`http_403`, `expired_url`).
    public var code: String
    /// The HTTP status it came with.
    public var status: Int

    public init(code: String, status: Int) {
        self.code = code
        self.status = status
    }

    /// The codes Slack answers for a token that is wrong, revoked or no longer valid.
    public var refusesCredentials: Bool {
        ["invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired", "not_allowed_token_type"].contains(code)
    }

    /// Slack's code: bounded, so fit for a metric label.
    public var label: String { code }

    /// "channel_not_found (the channel does not exist or the bot cannot see it)".
    public var reason: String {
        Self.explanations[code].map { "\(code) (\($0))" } ?? code
    }

    /// Slack's own codes for a passing failure on its side.
    public var isTransient: Bool { Self.transientCodes.contains(code) }

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
}
