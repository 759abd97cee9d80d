/// A Discord secret — the bot token (`DISCORD_BOT_TOKEN`) or an interaction token — kept out
/// of every description, debug dump and mirror,
/// so a token inside an action, a payload or an error cannot reach a log by interpolation.
public struct DiscordToken: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The token itself: read it only to put it on the wire.
    public let secret: String

    /// Wraps `secret`; surrounding whitespace (a trailing newline from a secrets file) is dropped.
    public init(_ secret: String) {
        let words = secret.split(whereSeparator: \.isWhitespace)
        self.secret = words.count == 1 ? String(words[0]) : secret
    }

    /// `Bot <token>`, the REST `Authorization` header value.
    public var authorization: String { "Bot " + secret }

    public var description: String { "DiscordToken(redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
