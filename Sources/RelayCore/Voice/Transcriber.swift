/// Speech to text: the backend protocol voice notes go through (`OpenAITranscriptionClient` over
/// any OpenAI-compatible `/audio/transcriptions` endpoint, and test fakes).
///
/// A transcript is untrusted text, like a model's answer: it is what someone said, and it goes on
/// as a command's input and into replies, where every renderer escapes it.
public protocol Transcriber: Sendable {
    /// The caps voice notes are held to before and while they are fetched.
    var limits: TranscriptionLimits { get }
    /// The words spoken in `audio`.
    func transcribe(_ audio: TranscriptionAudio) async throws(TranscriptionError) -> String
}

/// How large and how long a voice note the relay accepts (`transcription.maxBytes`,
/// `transcription.maxSeconds`), and how much audio it holds at once (`transcription.memoryBudget`).
public struct TranscriptionLimits: Sendable, Hashable {
    /// 25 MB: what OpenAI's endpoint accepts.
    public static let defaultMaxBytes = 25 * 1024 * 1024
    /// Five minutes.
    public static let defaultMaxSeconds = 300

    /// 64 MB: a note at the 25 MB cap (held twice: as downloaded, and as the upload's body) and
    /// many small ones beside it.
    public static let defaultMemoryBudget = 64 * 1024 * 1024

    public var maxBytes: Int
    public var maxSeconds: Int
    /// Bytes of audio all the notes being heard may hold at once (`transcription.memoryBudget`):
    /// beyond it, a note waits for room, then is refused with a reply that says so.
    public var memoryBudget: Int

    public init(maxBytes: Int = defaultMaxBytes, maxSeconds: Int = defaultMaxSeconds, memoryBudget: Int = defaultMemoryBudget) {
        self.maxBytes = maxBytes
        self.maxSeconds = maxSeconds
        self.memoryBudget = memoryBudget
    }
}

/// One clip to transcribe: its bytes (in memory only), what the platform called its type, and
/// the language to expect when the user set one.
public struct TranscriptionAudio: Sendable {
    public var bytes: [UInt8]
    public var mimeType: String?
    /// An ISO 639-1 code (`fr`); nil lets the service detect it.
    public var language: String?

    public init(bytes: [UInt8], mimeType: String? = nil, language: String? = nil) {
        self.bytes = bytes
        self.mimeType = mimeType
        self.language = language
    }
}

/// Why a voice note could not be turned into text: each case says to the user which it was and
/// what to do. Reasons are fixed phrases or the service's status, never a URL or a key.
public enum TranscriptionError: Error, Sendable, Hashable {
    /// The bytes are no audio format the relay knows, or the service refused them as such
    /// (400, 415, 422): not audio, or corrupt.
    case notAudio(detail: String)
    /// No connection to the service.
    case unreachable(reason: String)
    /// No whole answer within the time limit.
    case timedOut(after: Duration)
    /// 429.
    case rateLimited(retryAfter: Duration?)
    /// 401 or 403: the key is missing or wrong.
    case unauthorized(status: Int)
    /// Any other refusal or a 5xx.
    case serviceError(status: Int)
    /// A 2xx whose body is not `{"text": …}`.
    case malformed(reason: String)
    /// The calling task was cancelled (shutdown).
    case cancelled

    /// A bounded label for logs and metrics.
    public var label: String {
        switch self {
        case .notAudio: "not_audio"
        case .unreachable: "unreachable"
        case .timedOut: "timed_out"
        case .rateLimited: "rate_limited"
        case .unauthorized: "unauthorized"
        case .serviceError(let status): "http_\(status)"
        case .malformed: "malformed"
        case .cancelled: "cancelled"
        }
    }

    /// What went wrong and what to do, for the chat.
    public var userMessage: String {
        switch self {
        case .notAudio:
            "The transcription service could not read this voice note as audio: it is not audio, or the file is corrupt. Record it again, or send a common audio format (OGG/Opus, MP3, M4A, WAV)."
        case .unreachable:
            "The transcription service is down or cannot be reached, so this voice note was not transcribed. Try again later; if it keeps failing, tell the relay's operator."
        case .timedOut(let after):
            "The transcription service did not answer within \(Int(after.seconds.rounded(.up))) s, so this voice note was not transcribed. Try again later or send a shorter note; if it keeps happening, tell the relay's operator (transcription.timeout)."
        case .rateLimited(let retryAfter):
            "The transcription service is rate-limiting the relay"
                + (retryAfter.map { " for \(Int($0.seconds.rounded(.up))) s" } ?? "") + ". Try again in a moment."
        case .unauthorized:
            "The transcription service refused the relay's credentials. Tell the relay's operator to check transcription.apiKeyEnv."
        case .serviceError(let status) where status >= 500:
            "The transcription service failed on this voice note (HTTP \(status)): the file may be corrupt, or the service is having trouble. Record it again; if every voice note fails, tell the relay's operator."
        case .serviceError(413):
            "This voice note is too large for the transcription service (HTTP 413). Send a shorter one; the relay's operator can lower transcription.maxBytes to the service's limit."
        case .serviceError(let status):
            "The transcription service refused this voice note (HTTP \(status)). Tell the relay's operator to check transcription.model and transcription.baseURL."
        case .malformed:
            "The transcription service sent an answer the relay could not read. Tell the relay's operator to check that transcription.baseURL is an OpenAI-compatible /v1 endpoint."
        case .cancelled:
            "The relay stopped before this voice note was transcribed. Send it again."
        }
    }

    /// One line for the operator's log.
    public var reason: String {
        switch self {
        case .notAudio(let detail): "not audio: \(detail)"
        case .unreachable(let reason): "unreachable: \(reason)"
        case .timedOut(let after): "timed out after \(after.seconds) s"
        case .rateLimited: "rate limited"
        case .unauthorized(let status): "unauthorized (HTTP \(status))"
        case .serviceError(let status): "HTTP \(status)"
        case .malformed(let reason): "unreadable answer: \(reason)"
        case .cancelled: "cancelled"
        }
    }
}
