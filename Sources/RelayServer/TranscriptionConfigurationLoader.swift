import RelayCore
import RelayPlatform
import RelayTribunal

/// Reads the transcription service voice notes go to:
///
/// ```yaml
/// transcription:
///   baseURL: https://api.openai.com/v1   # TRANSCRIPTION_BASE_URL; unset: voice notes are off
///   model: whisper-1                      # TRANSCRIPTION_MODEL
///   apiKeyEnv: OPENAI_API_KEY             # optional: the variable that holds the key
///   maxBytes: 26214400                    # 25 MB
///   maxSeconds: 300                       # 5 minutes
///   memoryBudget: 67108864                # 64 MB of audio held at once, across notes
///   timeout: 60                           # seconds, one call
/// ```
///
/// Off (nil) when `baseURL` is unset. Every problem is refused at start with the key and its
/// variable named, as the council's models are.
enum TranscriptionConfigurationLoader {
    static func load(_ values: ConfigValues) throws -> TranscriptionConfiguration? {
        func fail(_ field: String, _ problem: String) -> ConfigurationError {
            let key = "transcription." + field
            return ConfigurationError("\(key) (\(ConfigValues.envName(key))) \(problem)")
        }
        // Read before deciding it is off, so that a variable set beside an unset base URL is not
        // also warned about as unknown: the refusal below says what is missing.
        let model = values.string("transcription.model")
        let keyEnv = values.string("transcription.apiKeyEnv")
        guard let baseURL = try values.url("transcription.baseURL") else {
            if model != nil || keyEnv != nil {
                throw fail("baseURL", "is missing: voice notes need the transcription service's OpenAI-compatible /v1 base, e.g. https://api.openai.com/v1.")
            }
            return nil
        }
        guard let model else {
            throw fail("model", "is missing: give the transcription service's model id (e.g. whisper-1).")
        }
        var apiKey: String?
        if let keyEnv {
            guard let value = values.environment[keyEnv], !value.isEmpty else {
                throw fail("apiKeyEnv", "names \(keyEnv), which is not set in the environment. Export it, or remove apiKeyEnv for a service without keys.")
            }
            apiKey = value
        }
        var limits = TranscriptionLimits()
        limits.maxBytes = try values.int("transcription.maxBytes", in: 1024...(1024 * 1024 * 1024)) ?? limits.maxBytes
        limits.maxSeconds = try values.int("transcription.maxSeconds", in: 1...(4 * 3600)) ?? limits.maxSeconds
        limits.memoryBudget =
            try values.int("transcription.memoryBudget", in: (1024 * 1024)...(64 * 1024 * 1024 * 1024)) ?? limits.memoryBudget
        let timeout = try values.seconds("transcription.timeout") ?? TranscriptionConfiguration.defaultTimeout
        return TranscriptionConfiguration(baseURL: baseURL, model: model, apiKeyEnv: keyEnv, apiKey: apiKey, limits: limits, timeout: timeout)
    }
}
