import Logging
import RelayTestSupport

/// What a `--voice` run adds: a voice note spoken once with espeak-ng and encoded as Telegram
/// encodes one (the clip every command carries), and a transcription service on 127.0.0.1 that
/// answers at once, so the CPU the server spends beyond a typed command's is the relay's own:
/// `getFile`, the capped streamed download, the multipart call and its answer.
final class VoiceNotes: Sendable {
    let clip: [UInt8]
    let service: FakeOpenAIServer

    private init(clip: [UInt8], service: FakeOpenAIServer) {
        self.clip = clip
        self.service = service
    }

    /// - Parameter paddedToKB: pads the clip with zeros to this size (a longer note's bytes;
    ///   the fake service does not decode them); 0 keeps it as spoken.
    static func start(paddedToKB: Int, logger: Logger) async throws -> VoiceNotes {
        let spoken = try await SpeechSample.oggOpus("Good morning, this is a voice note for the bench.")
        let clip = spoken + [UInt8](repeating: 0, count: max(0, paddedToKB * 1024 - spoken.count))
        let service = try await FakeOpenAIServer.start(persona: .agree, logger: logger)
        return VoiceNotes(clip: clip, service: service)
    }

    /// The relay's transcription settings for the service.
    var environment: [String: String] { ["TRANSCRIPTION_BASE_URL": service.url, "TRANSCRIPTION_MODEL": "whisper-1"] }

    /// Transcriptions the service answered (since the last `reset`, the whole run).
    var transcriptions: Int { service.requests().filter { $0.path.hasSuffix("/audio/transcriptions") }.count }

    func stop() async { await service.stop() }
}
