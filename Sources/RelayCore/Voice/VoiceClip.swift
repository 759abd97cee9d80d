/// A voice note (or audio clip) an event carries: how to fetch it from its platform, never the
/// audio itself. Audio is fetched only when a command needs its words, held in memory for the
/// transcription, and then dropped: it never reaches the store, the outbox or a log.
public struct VoiceClip: Sendable, Hashable, Codable {
    /// Whose clip it is: the message's own (a voice note captioned `/translate fr`), or the one of
    /// the message it replies to (`/transcribe` sent as a reply).
    public enum Origin: String, Sendable, Hashable, Codable {
        case own
        case repliedTo
    }

    /// The platform's reference to the file (Telegram's `file_id`): something the platform's
    /// own API resolves, never a URL taken from a message.
    public var file: String
    /// The MIME type the platform declares (`audio/ogg`), if any.
    public var mimeType: String?
    /// The size the platform declares, in bytes; checked before anything is fetched.
    public var byteSize: Int?
    /// The length the platform declares, in whole seconds; checked before anything is fetched.
    public var duration: Int?
    public var origin: Origin

    public init(file: String, mimeType: String? = nil, byteSize: Int? = nil, duration: Int? = nil, origin: Origin = .own) {
        self.file = file
        self.mimeType = mimeType
        self.byteSize = byteSize
        self.duration = duration
        self.origin = origin
    }
}
