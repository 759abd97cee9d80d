import Foundation
import Hummingbird
import HummingbirdTesting
import RelayCore
import RelayServer
import RelayTestSupport
import RelayTribunal
import SlackAdapter
import Testing

/// Slack audio files shared with a mention, through the real server, with the real speech model:
/// the fake Web API serves the file to the bot token as `files.slack.com` does.
@Suite("Slack audio files, through the server", .serialized, .timeLimit(.minutes(5)))
struct SlackVoiceTests {
    /// `mention` with an audio file shared along (`files`, as Slack's `app_mention` carries it).
    static func withAudio(_ mention: JSONValue, url: String, size: Int) -> JSONValue {
        guard case .object(var body) = mention, case .object(var event)? = body["event"] else { return mention }
        event["files"] = [
            [
                "id": "F0AUDIO1", "name": "audio_message.ogg", "mimetype": "audio/ogg", "filetype": "ogg", "size": .int(size),
                "url_private": .string(url), "url_private_download": .string(url), "duration_ms": 3100, "subtype": "slack_audio",
            ]
        ]
        body["event"] = .object(event)
        return .object(body)
    }

    static func configuration(_ fakes: SlackFakes) async throws -> AppConfiguration {
        var configuration = fakes.configuration()
        let speech = try await SpeechTestServer.shared()
        configuration.transcription = TranscriptionConfiguration(baseURL: speech.baseURL, model: SpeechTestServer.model)
        return configuration
    }

    /// Every text the relay left in `channel`, once it is idle.
    static func posted(_ relay: RelayUnderTest, channel: String) async throws -> String {
        try await eventually("a reply", safety: .seconds(180)) { !relay.slack.messages(channel: channel).isEmpty }
        try await eventually("the relay to be idle", safety: .seconds(180)) {
            let report = try await relay.readiness()
            return report?["runs"]?["inFlight"]?.intValue == 0 && report?["store"]?["outboxDepth"]?.intValue == 0
        }
        return relay.slack.messages(channel: channel).map { $0.text + "\n" + ($0.blocks.map { String(decoding: $0.encoded(), as: UTF8.self) } ?? "") }
            .joined(separator: "\n---\n")
    }

    @Test func aMentionWithAnAudioFileRunsItsCommandOnTheTranscript() async throws {
        try await SlackFakes.with { fakes in
            let audio = try await SpeechSample.oggOpus("Please translate good morning into French.")
            let url = fakes.slack.addFile(audio)
            try await fakes.withRelay(try await Self.configuration(fakes)) { relay in
                let mention = SlackFakes.mention("translate fr", eventID: "Ev0VOICE1", channel: "C0VOICE", ts: "1700000000.000900")
                #expect(try await relay.event(Self.withAudio(mention, url: url, size: audio.count)).status == .ok)
                let text = try await Self.posted(relay, channel: "C0VOICE").lowercased()
                #expect(text.contains("translate:fr") && text.contains("good morning"), "\(text)")
                #expect(relay.slack.fileRequests == 1)
            }
        }
    }

    @Test func aMentionAloneWithAnAudioFileIsTranscribed() async throws {
        try await SlackFakes.with { fakes in
            let audio = try await SpeechSample.oggOpus("The meeting moves to Thursday morning.")
            let url = fakes.slack.addFile(audio)
            try await fakes.withRelay(try await Self.configuration(fakes)) { relay in
                let mention = SlackFakes.mention("", eventID: "Ev0VOICE2", channel: "C0VOICE2", ts: "1700000000.000901")
                #expect(try await relay.event(Self.withAudio(mention, url: url, size: audio.count)).status == .ok)
                let text = try await Self.posted(relay, channel: "C0VOICE2")
                #expect(text.contains("Transcript") && text.lowercased().contains("thursday"), "\(text)")
            }
        }
    }

    @Test func aFileOffTheConfiguredHostIsNotFetched() {
        let host = "https://files.slack.com"
        #expect(SlackConversationReader.isPrivateFile("https://files.slack.com/files-pri/T1-F1/download/a.ogg", host: host))
        #expect(!SlackConversationReader.isPrivateFile("https://evil.example/files-pri/T1-F1/download/a.ogg", host: host))
        #expect(!SlackConversationReader.isPrivateFile("https://files.slack.com/files-pri/../api/x", host: host))
        #expect(!SlackConversationReader.isPrivateFile("https://files.slack.com/avatars/a.png", host: host))
    }
}
