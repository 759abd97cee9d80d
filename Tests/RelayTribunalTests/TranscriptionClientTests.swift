import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import RelayCore
import RelayHTTP
import RelayTestSupport
import RelayTestTags
import Testing

@testable import RelayTribunal

/// The transcription client against a real speech model (faster-whisper-server with Whisper
/// tiny.en, `SpeechTestServer`) and, for the failures a real server will not stage on demand,
/// the fake OpenAI server. Speech is made at test time (`SpeechSample`).
@Suite("Transcription client", .serialized, .timeLimit(.minutes(5)), .tags(.peers))
struct TranscriptionClientTests {
    @Test func transcribesASpokenSentenceWithTheRealModel() async throws {
        let server = try await SpeechTestServer.shared()
        let audio = try await SpeechSample.oggOpus("Please translate good morning into French.")
        let text = try await withClient(baseURL: server.baseURL) { client in
            try await client.transcribe(TranscriptionAudio(bytes: audio, mimeType: "audio/ogg", language: "en"))
        }
        let lowered = text.lowercased()
        #expect(lowered.contains("translate") && lowered.contains("morning"), "\(text)")
        #expect(text == text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test func sendsAMultipartFormWithTheFileModelAndLanguage() async throws {
        try await withFakeOpenAIServer { fake in
            let audio = try await SpeechSample.oggOpus("Hello.")
            let text = try await withClient(baseURL: fake.url, apiKey: "sk-voice-0123456789") { client in
                try await client.transcribe(TranscriptionAudio(bytes: audio, mimeType: "audio/ogg", language: "fr"))
            }
            #expect(text == "The fake heard a voice note.")
            let sent = try #require(fake.lastRequest())
            #expect(sent.method == "POST")
            #expect(sent.path == "/v1/audio/transcriptions")
            #expect(sent.header("authorization") == "Bearer sk-voice-0123456789")
            let contentType = try #require(sent.header("content-type"))
            #expect(contentType.hasPrefix("multipart/form-data; boundary="))
            let body = sent.rawBody
            #expect(body.contains(#"Content-Disposition: form-data; name="file"; filename="voice.ogg""#))
            #expect(body.contains("Content-Type: audio/ogg"))
            #expect(body.contains("name=\"model\"\r\n\r\n\(SpeechTestServer.model)\r\n"))
            #expect(body.contains("name=\"response_format\"\r\n\r\njson\r\n"))
            #expect(body.contains("name=\"language\"\r\n\r\nfr\r\n"))
        }
    }

    /// The form is streamed around the clip (issue 47, point 4: a note held once, not three
    /// times): the bytes sent are exactly the form, and no piece is larger than 1 MiB.
    @Test func theFormIsStreamedAroundTheClipInPiecesOfAtMostOneMebibyte() async throws {
        let clip = Array("OggS".utf8) + (0..<(2 * 1024 * 1024 + 512 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let format = try #require(AudioFormat.sniff(clip))
        let upload = try MultipartUpload(clip, format: format, fields: [("model", "m"), ("language", "fr")], boundary: "B")
        var sent: [UInt8] = []
        var largest = 0
        for await piece in upload {
            largest = max(largest, piece.readableBytes)
            sent += piece.readableBytesView
        }
        let head = "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"voice.ogg\"\r\nContent-Type: audio/ogg\r\n\r\n"
        let tail =
            "\r\n--B\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nm\r\n--B\r\nContent-Disposition: form-data; name=\"language\"\r\n\r\nfr\r\n--B--\r\n"
        #expect(sent.count == upload.length)
        #expect(
            sent == Array(head.utf8) + clip + Array(tail.utf8),
            "\(String(decoding: sent.prefix(200), as: UTF8.self))…\(String(decoding: sent.suffix(200), as: UTF8.self))")
        #expect(largest <= 1024 * 1024)
    }

    @Test func bytesThatAreNoAudioAreRefusedWithoutACall() async throws {
        try await withFakeOpenAIServer { fake in
            let noise = (0..<4000).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }
            let error = await #expect(throws: TranscriptionError.self) {
                try await withClient(baseURL: fake.url) { client in try await client.transcribe(TranscriptionAudio(bytes: noise)) }
            }
            guard case .notAudio = error else {
                Issue.record("\(String(describing: error))")
                return
            }
            #expect(error?.userMessage.contains("not audio") == true)
            #expect(fake.requestCount() == 0)
        }
    }

    @Test func aCorruptClipIsTheServicesFailureToSay() async throws {
        let server = try await SpeechTestServer.shared()
        let audio = try await SpeechSample.oggOpus("Please translate good morning into French.")
        // An OGG header and then nothing the decoder can use: faster-whisper-server answers 500.
        let truncated = Array(audio.prefix(3000))
        let error = await #expect(throws: TranscriptionError.self) {
            try await withClient(baseURL: server.baseURL) { client in try await client.transcribe(TranscriptionAudio(bytes: truncated)) }
        }
        #expect(error == .serviceError(status: 500))
        #expect(error?.userMessage.contains("may be corrupt") == true)
    }

    @Test func refusedAsNotAudioByTheServiceSaysSo() async throws {
        try await withFakeOpenAIServer(persona: .fail(status: 400, message: "Invalid file format.")) { fake in
            let audio = try await SpeechSample.oggOpus("Hello.")
            let error = await #expect(throws: TranscriptionError.self) {
                try await withClient(baseURL: fake.url) { client in try await client.transcribe(TranscriptionAudio(bytes: audio)) }
            }
            guard case .notAudio = error else {
                Issue.record("\(String(describing: error))")
                return
            }
        }
    }

    @Test func aServiceThatIsDownIsUnreachable() async throws {
        let audio = try await SpeechSample.oggOpus("Hello.")
        let error = try await withRefusingLoopbackPort { port in
            await #expect(throws: TranscriptionError.self) {
                try await withClient(baseURL: "http://127.0.0.1:\(port)/v1") { client in try await client.transcribe(TranscriptionAudio(bytes: audio)) }
            }
        }
        guard case .unreachable = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(error?.userMessage.contains("down or cannot be reached") == true)
    }

    @Test func aServiceThatHangsTimesOutAtTheLimit() async throws {
        try await withFakeOpenAIServer(persona: .hang) { fake in
            let audio = try await SpeechSample.oggOpus("Hello.")
            let started = ContinuousClock.now
            let error = await #expect(throws: TranscriptionError.self) {
                try await withClient(baseURL: fake.url, timeout: .milliseconds(500)) { client in
                    try await client.transcribe(TranscriptionAudio(bytes: audio))
                }
            }
            #expect(error == .timedOut(after: .milliseconds(500)))
            // A hanging service would hold the call until the fake stops; 15 s leaves room for a
            // loaded machine.
            #expect(started.duration(to: .now) < .seconds(15))
            #expect(error?.userMessage.contains("did not answer within 1 s") == true)
        }
    }

    @Test func statusesMapToWhatTheUserIsTold() {
        #expect(OpenAITranscriptionClient.error(status: 415, retryAfter: nil) == .notAudio(detail: "the service refused the file (HTTP 415)"))
        #expect(OpenAITranscriptionClient.error(status: 401, retryAfter: nil) == .unauthorized(status: 401))
        #expect(OpenAITranscriptionClient.error(status: 429, retryAfter: .seconds(3)) == .rateLimited(retryAfter: .seconds(3)))
        #expect(OpenAITranscriptionClient.error(status: 503, retryAfter: nil) == .serviceError(status: 503))
        #expect(OpenAITranscriptionClient.endpoint(baseURL: "http://h/v1/") == "http://h/v1/audio/transcriptions")
    }

    private func withClient<T: Sendable>(
        baseURL: String, apiKey: String? = nil, timeout: Duration = .seconds(60), _ body: (OpenAITranscriptionClient) async throws -> T
    ) async throws -> T {
        let http = HTTPTransport.makeClient(maxConnectionsPerHost: 4)
        let client = OpenAITranscriptionClient(
            configuration: TranscriptionConfiguration(baseURL: baseURL, model: SpeechTestServer.model, apiKey: apiKey, timeout: timeout),
            transport: HTTPTransport(client: http), logger: Logger(label: "test.transcription"))
        do {
            let result = try await body(client)
            try await http.shutdown()
            return result
        } catch {
            try? await http.shutdown()
            throw error
        }
    }
}
