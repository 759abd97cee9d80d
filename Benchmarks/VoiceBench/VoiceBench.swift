import ArgumentParser
import AsyncHTTPClient
import Foundation
import Logging
import RelayCore
import RelayHTTP
import RelayTestSupport
import RelayTribunal
import TelegramAdapter

/// The relay's own cost per voice command, without the speech model's: a voice note fetched as
/// Telegram serves it (`getFile`, then the file, from the fake Bot API on 127.0.0.1) and sent to
/// a transcription endpoint that answers at once (the fake OpenAI server), so every millisecond
/// measured is the relay's — the two exchanges, the capped streamed read, the multipart body,
/// the answer's parsing.
///
///     swift run -c release voice-bench [--runs 200]
@main
struct VoiceBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "voice-bench", abstract: "Measure the relay's overhead per voice command.")

    @Option(help: "Voice commands per measured case.")
    var runs = 200

    func run() async throws {
        let logger = Logger(label: "voice-bench", factory: { _ in SwiftLogNoOpLogHandler() })
        let http = HTTPTransport.makeClient()
        let transport = HTTPTransport(client: http)
        let telegram = try await FakeTelegramBotAPI.start(logger: logger)
        let speech = try await FakeOpenAIServer.start(persona: .agree, logger: logger)
        let bot = TelegramBotClient(transport: transport, apiURL: telegram.url, token: TelegramToken(telegram.token), logger: logger)
        let transcriber = OpenAITranscriptionClient(
            configuration: TranscriptionConfiguration(baseURL: speech.url, model: "whisper-1"), transport: transport, logger: logger)

        // A three-second sentence as Telegram sends it, and a one-minute note's worth of bytes
        // (an OGG header and padding: the fake service does not decode it).
        let sentence = try await SpeechSample.oggOpus("Please translate good morning into French.")
        let minute = sentence + [UInt8](repeating: 0, count: 240 * 1024 - sentence.count)
        print("voice-bench: fake Bot API and fake transcription service on 127.0.0.1, \(runs) runs per case")
        print(String(repeating: "-", count: 78))
        for (name, clip) in [("3 s voice note (\(sentence.count / 1024) KB)", sentence), ("1 min voice note (240 KB)", minute)] {
            let file = telegram.addFile(clip)
            let step = { () async throws -> (Duration, Duration) in
                let started = ContinuousClock.now
                let answer = try await bot.call("getFile", ["file_id": .string(file)])
                guard let path = answer["file_path"]?.stringValue,
                    case .bytes(let bytes) = try await bot.downloadFile(path: path, maxBytes: 25 * 1024 * 1024, timeout: .seconds(30))
                else { throw VoiceBenchError(reason: "the fake Bot API did not serve the file") }
                let fetched = ContinuousClock.now
                _ = try await transcriber.transcribe(TranscriptionAudio(bytes: bytes, mimeType: "audio/ogg", language: "en"))
                return (started.duration(to: fetched), fetched.duration(to: .now))
            }
            for _ in 0..<20 { _ = try await step() }  // warm the pools and code paths
            var fetches: [Duration] = []
            var calls: [Duration] = []
            for _ in 0..<runs {
                let (fetch, call) = try await step()
                fetches.append(fetch)
                calls.append(call)
            }
            print(name)
            report("  fetch (getFile + streamed download)", fetches)
            report("  transcription call (multipart + answer)", calls)
            report("  total per voice command", zip(fetches, calls).map { $0 + $1 })
        }
        await telegram.stop()
        await speech.stop()
        try await http.shutdown()
    }

    func report(_ name: String, _ samples: [Duration]) {
        let sorted = samples.sorted()
        func ms(_ duration: Duration) -> String { String(format: "%7.2f ms", duration.seconds * 1000) }
        let mean = sorted.reduce(Duration.zero, +) / sorted.count
        let p50 = sorted[sorted.count / 2]
        let p99 = sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
        print("\(name.padding(toLength: 44, withPad: " ", startingAt: 0)) mean \(ms(mean))  p50 \(ms(p50))  p99 \(ms(p99))")
    }
}

struct VoiceBenchError: Error, CustomStringConvertible {
    var reason: String
    var description: String { reason }
}
