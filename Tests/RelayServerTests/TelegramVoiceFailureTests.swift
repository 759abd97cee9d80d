import Foundation
import Hummingbird
import HummingbirdTesting
import RelayCore
import RelayServer
import RelayTestSupport
import RelayTestTags
import RelayTribunal
import Testing

/// What a Telegram user is told when a voice note cannot be heard: each failure says which it
/// was and what to do, and none crashes the relay or leaves the user without an answer.
@Suite("Telegram voice notes that cannot be heard", .serialized, .timeLimit(.minutes(5)), .tags(.peers))
struct TelegramVoiceFailureTests {
    typealias Fakes = TelegramFakes

    /// Delivers a private voice note (`voice`) captioned `caption` and returns what the chat was sent.
    static func answer(
        _ relay: TelegramRelay, voice: JSONValue, caption: String? = "/transcribe", update: Int = 1
    ) async throws -> [String] {
        let message = TelegramUpdates.voiceMessage(
            updateID: update, messageID: 100 + update, chat: Fakes.alice, from: Fakes.alice, voice: voice, caption: caption)
        #expect(try await relay.deliver(message).status == .ok)
        try await relay.settled(safety: .seconds(180))
        return relay.telegram.messages(chat: Fakes.alice).map(\.text)
    }

    static func withRelay(
        transcription: TranscriptionConfiguration?, _ body: @escaping @Sendable (TelegramRelay) async throws -> Void
    ) async throws {
        try await Fakes.with { fakes in
            var configuration = fakes.configuration()
            configuration.transcription = transcription
            try await fakes.withRelay(configuration, body)
        }
    }

    static func speech(limits: TranscriptionLimits = TranscriptionLimits()) async throws -> TranscriptionConfiguration {
        TranscriptionConfiguration(baseURL: try await SpeechTestServer.shared().baseURL, model: SpeechTestServer.model, limits: limits)
    }

    @Test func bytesThatAreNoAudioAreCalledThat() async throws {
        try await Self.withRelay(transcription: try await Self.speech()) { relay in
            let noise = (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }
            let voice = TelegramUpdates.voiceObject(fileID: relay.telegram.addFile(noise), size: noise.count)
            let posted = try await Self.answer(relay, voice: voice)
            #expect(posted.count == 1 && posted[0].contains("not audio, or the file is corrupt"), "\(posted)")
        }
    }

    @Test func aVoiceNoteDeclaredLargerThanTheCapIsRefusedBeforeAnyDownload() async throws {
        try await Self.withRelay(transcription: try await Self.speech()) { relay in
            let voice = TelegramUpdates.voiceObject(fileID: "AwACAgIAAxkBAAF-unknown", duration: 60, size: 30 * 1024 * 1024)
            let posted = try await Self.answer(relay, voice: voice)
            #expect(posted.count == 1 && posted[0].contains("This voice note is 30 MB; the relay takes voice notes up to 25 MB"), "\(posted)")
            #expect(relay.telegram.calls("getFile").isEmpty)
        }
    }

    @Test func aVoiceNoteLargerThanItsDeclaredSizeIsCutOffAtTheCap() async throws {
        try await Self.withRelay(transcription: try await Self.speech(limits: TranscriptionLimits(maxBytes: 4096))) { relay in
            let audio = try await SpeechSample.oggOpus("Please translate good morning into French.")
            #expect(audio.count > 4096)
            // Telegram's numbers say it is small; the file itself is not.
            let voice = TelegramUpdates.voiceObject(fileID: relay.telegram.addFile(audio, reportedSize: 1000), size: 1000)
            let posted = try await Self.answer(relay, voice: voice)
            #expect(posted.count == 1 && posted[0].contains("4 KB") && posted[0].contains("Send a shorter one"), "\(posted)")
            #expect(relay.telegram.calls("file").count == 1)
        }
    }

    @Test func aVoiceNoteLongerThanTheCapIsRefusedWithBothDurations() async throws {
        try await Self.withRelay(transcription: try await Self.speech()) { relay in
            let voice = TelegramUpdates.voiceObject(fileID: "AwACAgIAAxkBAAF-long", duration: 630, size: 900_000)
            let posted = try await Self.answer(relay, voice: voice)
            #expect(posted.count == 1 && posted[0].contains("This voice note is 10 min 30 s long; the relay transcribes voice notes up to 5 min"), "\(posted)")
            #expect(relay.telegram.calls("getFile").isEmpty)
        }
    }

    @Test func aTranscriptionServiceThatIsDownIsSaidToBe() async throws {
        try await withRefusingLoopbackPort { port in
            try await Self.withRelay(transcription: TranscriptionConfiguration(baseURL: "http://127.0.0.1:\(port)/v1", model: "whisper-1")) { relay in
                let audio = try await SpeechSample.oggOpus("Hello there.")
                let voice = TelegramUpdates.voiceObject(fileID: relay.telegram.addFile(audio), size: audio.count)
                let posted = try await Self.answer(relay, voice: voice)
                #expect(posted.count == 1 && posted[0].contains("transcription service is down or cannot be reached"), "\(posted)")
                #expect(posted.first?.contains("error id") == true, "the operator finds the details by the id: \(posted)")
                #expect(posted.first?.contains("127.0.0.1") == false, "no address in the chat: \(posted)")
            }
        }
    }

    @Test func aTranscriptionServiceThatIsSlowIsSaidToBe() async throws {
        try await withFakeOpenAIServer(persona: .hang) { fake in
            try await Self.withRelay(transcription: TranscriptionConfiguration(baseURL: fake.url, model: "whisper-1", timeout: .seconds(1))) { relay in
                let audio = try await SpeechSample.oggOpus("Hello there.")
                let voice = TelegramUpdates.voiceObject(fileID: relay.telegram.addFile(audio), size: audio.count)
                let posted = try await Self.answer(relay, voice: voice)
                #expect(posted.count == 1 && posted[0].contains("did not answer within 1 s"), "\(posted)")
            }
        }
    }

    @Test func withoutATranscriptionServiceTheReplySaysHowToSetOneUp() async throws {
        try await Self.withRelay(transcription: nil) { relay in
            let voice = TelegramUpdates.voiceObject(fileID: "AwACAgIAAxkBAAF-any", duration: 3, size: 12_000)
            let posted = try await Self.answer(relay, voice: voice, caption: nil)
            #expect(posted.count == 1, "\(posted)")
            #expect(posted.first?.contains("Voice notes are not set up") == true, "\(posted)")
            #expect(posted.first?.contains("TRANSCRIPTION_BASE_URL") == true && posted.first?.contains("TRANSCRIPTION_MODEL") == true, "\(posted)")
            #expect(relay.telegram.calls("getFile").isEmpty)
        }
    }

    @Test func aFileTelegramNoLongerHasIsAFetchFailureNotACrash() async throws {
        try await Self.withRelay(transcription: try await Self.speech()) { relay in
            let voice = TelegramUpdates.voiceObject(fileID: "AwACAgIAAxkBAAF-gone", duration: 3, size: 12_000)
            let posted = try await Self.answer(relay, voice: voice)
            #expect(posted.count == 1 && posted[0].contains("could not fetch this voice note"), "\(posted)")
        }
    }
}
