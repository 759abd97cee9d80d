import Foundation
import Hummingbird
import HummingbirdTesting
import RelayCore
import RelayServer
import RelayTestSupport
import RelayTestTags
import RelayTribunal
import SlackAdapter
import Testing

/// Slack audio files shared with a mention, through the real server, with the real speech model:
/// the fake Web API serves the file to the bot token as `files.slack.com` does.
@Suite("Slack audio files, through the server", .serialized, .timeLimit(.minutes(5)), .tags(.peers))
struct SlackVoiceTests {
    /// `mention` with an audio file shared along (`files`, as Slack's `app_mention` carries it).
    static func withAudio(_ mention: JSONValue, url: String, size: Int) -> JSONValue {
        guard case .object(var body) = mention, case .object(var event)? = body["event"] else { return mention }
        event["files"] = audioFiles(url: url, size: size)
        body["event"] = .object(event)
        return .object(body)
    }

    /// `files` with one audio clip, as Slack shows a voice clip recorded in the client.
    static func audioFiles(url: String, size: Int) -> JSONValue {
        [
            [
                "id": "F0AUDIO1", "name": "audio_message.ogg", "mimetype": "audio/ogg", "filetype": "ogg", "size": .int(size),
                "url_private": .string(url), "url_private_download": .string(url), "duration_ms": 3100, "subtype": "slack_audio",
            ]
        ]
    }

    static func configuration(_ fakes: SlackFakes) async throws -> AppConfiguration {
        var configuration = fakes.configuration()
        let speech = try await SpeechTestServer.shared()
        configuration.transcription = TranscriptionConfiguration(baseURL: speech.baseURL, model: SpeechTestServer.model)
        return configuration
    }

    /// Every text the relay left in `channel`, once it is idle (not what the test seeded).
    static func posted(_ relay: RelayUnderTest, channel: String) async throws -> String {
        let bot = { relay.slack.messages(channel: channel).filter { $0.user == FakeSlackWebAPI.botUserID } }
        try await eventually("a reply", safety: .seconds(180)) { !bot().isEmpty }
        try await eventually("the relay to be idle", safety: .seconds(180)) {
            let report = try await relay.readiness()
            return report?["runs"]?["inFlight"]?.intValue == 0 && report?["store"]?["outboxDepth"]?.intValue == 0
        }
        return bot().map { $0.text + "\n" + ($0.blocks.map { String(decoding: $0.encoded(), as: UTF8.self) } ?? "") }
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

    @Test func aMentionInAThreadHearsTheAudioOfTheThreadsParent() async throws {
        try await SlackFakes.with { fakes in
            let audio = try await SpeechSample.oggOpus("Please translate good morning into French.")
            let url = fakes.slack.addFile(audio)
            // The parent: a voice clip someone recorded, with no words typed.
            fakes.slack.seed(
                FakeSlackMessage(
                    channel: "C0VOICE3", ts: "1700000000.000910", text: "", user: "U0AUTHOR", files: Self.audioFiles(url: url, size: audio.count)))
            try await fakes.withRelay(try await Self.configuration(fakes)) { relay in
                let mention = SlackFakes.mention(
                    "translate fr", eventID: "Ev0VOICE3", channel: "C0VOICE3", ts: "1700000000.000911", threadTS: "1700000000.000910")
                #expect(try await relay.event(mention).status == .ok)
                let text = try await Self.posted(relay, channel: "C0VOICE3").lowercased()
                #expect(text.contains("translate:fr") && text.contains("good morning"), "\(text)")
                #expect(relay.slack.fileRequests == 1)
            }
        }
    }

    @Test func aMentionAloneInAThreadUnderAnAudioFileIsTranscribed() async throws {
        try await SlackFakes.with { fakes in
            let audio = try await SpeechSample.oggOpus("The meeting moves to Thursday morning.")
            let url = fakes.slack.addFile(audio)
            fakes.slack.seed(
                FakeSlackMessage(
                    channel: "C0VOICE4", ts: "1700000000.000920", text: "", user: "U0AUTHOR", files: Self.audioFiles(url: url, size: audio.count)))
            fakes.slack.seed(
                FakeSlackMessage(
                    channel: "C0VOICE4", ts: "1700000000.000921", text: "Can someone type this up?", threadTS: "1700000000.000920", user: "U0OTHER"))
            try await fakes.withRelay(try await Self.configuration(fakes)) { relay in
                let mention = SlackFakes.mention("", eventID: "Ev0VOICE4", channel: "C0VOICE4", ts: "1700000000.000922", threadTS: "1700000000.000920")
                #expect(try await relay.event(mention).status == .ok)
                let text = try await Self.posted(relay, channel: "C0VOICE4")
                #expect(text.contains("Transcript") && text.lowercased().contains("thursday"), "\(text)")
            }
        }
    }

    @Test func aThreadParentsFileOffTheConfiguredHostIsAnsweredAndNotFetched() async throws {
        try await SlackFakes.with { fakes in
            // The same path on another host: the bot token must not go there.
            let url = "https://evil.example/files-pri/T0E2E-F01AUDIO/download/audio_message.ogg"
            fakes.slack.seed(
                FakeSlackMessage(channel: "C0VOICE5", ts: "1700000000.000930", text: "", user: "U0AUTHOR", files: Self.audioFiles(url: url, size: 12_000)))
            try await fakes.withRelay(try await Self.configuration(fakes)) { relay in
                let mention = SlackFakes.mention("summarize", eventID: "Ev0VOICE5", channel: "C0VOICE5", ts: "1700000000.000931", threadTS: "1700000000.000930")
                #expect(try await relay.event(mention).status == .ok)
                let text = try await Self.posted(relay, channel: "C0VOICE5")
                #expect(text.contains("could not fetch this voice note"), "\(text)")
                #expect(relay.slack.fileRequests == 0)
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
