/// Why a platform could not hand over a voice note's audio (`ConversationReader.audio`).
public enum VoiceFetchError: Error, Sendable, Hashable {
    /// Larger than the cap: `size` is the file's size when the platform said it, nil when the
    /// download passed the cap and was cut off there.
    case tooLarge(limit: Int, size: Int?)
    /// The platform would not give the file (refused, unreachable, gone); `reason` names the call
    /// and the failure, never a URL or a token.
    case unavailable(reason: String)
    /// The platform does not pass voice notes to the relay yet.
    case notSupported

    /// What went wrong and what to do, for the chat.
    public var userMessage: String {
        switch self {
        case .tooLarge(let limit, let size?):
            "This voice note is \(Self.megabytes(size)); the relay takes voice notes up to \(Self.megabytes(limit)). Send a shorter one."
        case .tooLarge(let limit, nil):
            "This voice note is larger than \(Self.megabytes(limit)), the most the relay takes. Send a shorter one."
        case .unavailable:
            "The relay could not fetch this voice note from the chat platform. Try again in a minute; if it keeps failing, tell the relay's operator."
        case .notSupported:
            "Voice notes from this chat do not reach the relay yet: type the text instead, or send the voice note in Telegram, Discord, Slack, Matrix or Mattermost."
        }
    }

    /// "1.5 MB", "25 MB", "800 KB".
    public static func megabytes(_ bytes: Int) -> String {
        if bytes < 1024 * 1024 { return "\(max(1, (bytes + 1023) / 1024)) KB" }
        let tenths = (Double(bytes) / (1024 * 1024) * 10).rounded() / 10
        return tenths == tenths.rounded() ? "\(Int(tenths)) MB" : "\(tenths) MB"
    }
}
