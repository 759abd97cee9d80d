import RelayCore
import RelayPipeline
public import RelayPlatform

/// Why a Discord REST call failed: the shared platform-call error with Discord's refusals. Its
/// `endpoint` is the method and path template (`PATCH /webhooks/{application_id}/{interaction_token}/messages/@original`),
/// never the path itself, which may hold an interaction token.
public typealias DiscordAPIError = PlatformCallError<DiscordRefusal>

/// Discord said no with a 4xx (a 429 is a rate limit, a 5xx the server's failure).
public struct DiscordRefusal: PlatformRefusal {
    public static let platform = "Discord"

    /// A 401: the bot token is wrong or was reset.
    public var refusesCredentials: Bool { status == 401 }

    /// The HTTP status.
    public var status: Int
    /// Discord's JSON error code (10015 unknown webhook, 50001 missing access…), when it sent one.
    public var code: Int?
    /// Discord's text, bounded.
    public var message: String

    public init(status: Int, code: Int?, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    public var label: String { "http_\(status)" }

    /// "HTTP 404 code 10015 (Unknown Webhook): the interaction token has expired or was never valid".
    public var reason: String {
        "HTTP \(status)" + (code.map { " code \($0)" } ?? "") + (message.isEmpty ? "" : " (\(message))")
            + (code.flatMap { Self.explanations[$0] }.map { ": \($0)" } ?? "")
    }

    /// A 408 is Discord timing out on our request: worth another try.
    public var isTransient: Bool { status == 408 }

    /// What the JSON codes a relay meets most often mean, in words an operator can act on.
    static let explanations: [Int: String] = [
        10003: "the channel does not exist or the bot cannot see it",
        10008: "the message does not exist",
        10015: "the interaction token has expired or was never valid",
        50001: "the bot cannot see this channel; check its permissions there",
        50013: "the bot lacks a permission here (Send Messages, Embed Links, Read Message History)",
        50035: "Discord refused the message as malformed",
        50006: "the message is empty",
        50007: "the user does not accept direct messages from the bot",
    ]
}
