public import RelayCore

/// The transcription service voice notes go to (`transcription.*`, `TRANSCRIPTION_*`): any
/// OpenAI-compatible `/v1` base (OpenAI, Groq, a local faster-whisper-server), the model to ask
/// for, an optional key, the caps, and the time limit of one call.
public struct TranscriptionConfiguration: Sendable {
    /// The `/v1` base; `{baseURL}/audio/transcriptions` is called.
    public var baseURL: String
    /// The model id the service expects (`whisper-1`, `Systran/faster-whisper-small`).
    public var model: String
    /// The environment variable the key was read from, for messages; nil without a key.
    public var apiKeyEnv: String?
    /// Sent as `Authorization: Bearer`; never logged.
    public var apiKey: String?
    public var limits: TranscriptionLimits
    /// One call, the upload and the whole answer included.
    public var timeout: Duration

    public static let defaultTimeout: Duration = .seconds(60)

    public init(
        baseURL: String, model: String, apiKeyEnv: String? = nil, apiKey: String? = nil, limits: TranscriptionLimits = TranscriptionLimits(),
        timeout: Duration = defaultTimeout
    ) {
        self.baseURL = baseURL
        self.model = model
        self.apiKeyEnv = apiKeyEnv
        self.apiKey = apiKey
        self.limits = limits
        self.timeout = timeout
    }
}
