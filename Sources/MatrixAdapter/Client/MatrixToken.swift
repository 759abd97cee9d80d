/// The bot's access token (`MATRIX_ACCESS_TOKEN`), kept out of every description, debug dump and
/// mirror: interpolating it into a log line or an error prints `<matrix token>`.
public struct MatrixToken: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The token itself: read it only to put it in the `Authorization` header.
    public let secret: String

    /// Wraps `secret`; surrounding whitespace (a trailing newline from a secrets file) is dropped.
    public init(_ secret: String) {
        let words = secret.split(whereSeparator: \.isWhitespace)
        self.secret = words.count == 1 ? String(words[0]) : secret
    }

    public var description: String { "<matrix token>" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
