/// The bot token from @BotFather (`TELEGRAM_BOT_TOKEN`), kept out of every description, debug
/// dump and mirror.
///
/// The Bot API takes the token in the path of every call (`/bot<token>/sendMessage`), so any
/// URL of a call is as secret as the token itself. Wrapping it means that interpolating a token
/// (or a value that holds one) into a log line or an error prints `<telegram token>`.
public struct TelegramToken: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The token itself: read it only to put it on the wire.
    public let secret: String

    /// Wraps `secret`; surrounding whitespace (a trailing newline from a secrets file) is dropped.
    public init(_ secret: String) {
        let words = secret.split(whereSeparator: \.isWhitespace)
        self.secret = words.count == 1 ? String(words[0]) : secret
    }

    public var description: String { "<telegram token>" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
