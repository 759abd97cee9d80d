import Foundation
import MattermostAdapter
import RelayCore
import RelayServer
import RelayTestSupport
import RelayTestTags
import RelayTribunal
import Testing

/// Mattermost audio attachments through the real server, with the real speech model: the fake
/// server keeps the file and serves `GET /api/v4/files/{id}` to the bot token, and the post
/// carries it in `metadata.files`, as Mattermost's websocket `posted` event does.
@Suite("Mattermost audio attachments, through the server", .serialized, .timeLimit(.minutes(5)), .tags(.peers))
struct MattermostVoiceTests {
    static let channel = "chan0000000000000000000077"

    static func configuration(_ fakes: MattermostFakes) async throws -> AppConfiguration {
        var configuration = fakes.configuration(websocket: true)
        let speech = try await SpeechTestServer.shared()
        configuration.transcription = TranscriptionConfiguration(baseURL: speech.baseURL, model: SpeechTestServer.model)
        return configuration
    }

    /// The bot's posts in `channel` once it has answered and the relay is idle.
    static func answers(_ relay: MattermostRelay, channel: String) async throws -> String {
        let bot = { relay.mattermost.posts(channel: channel).filter { $0.userID == FakeMattermost.botUserID && !$0.message.hasPrefix("⏳") } }
        try await eventually("the bot to answer", safety: .seconds(180)) { !bot().isEmpty }
        try await relay.settled()
        return bot().map { MattermostMarkdown.unescape($0.message) }.joined(separator: "\n---\n")
    }

    @Test func aMentionWithAnAudioAttachmentRunsItsCommandOnTheTranscript() async throws {
        try await MattermostFakes.with { fakes in
            let audio = try await SpeechSample.oggOpus("Please translate good morning into French.")
            try await fakes.withRelay(try await Self.configuration(fakes)) { relay in
                _ = try #require(await relay.mattermost.nextAuthenticatedSocket())
                let file = relay.mattermost.addFile(audio)
                _ = try await relay.mattermost.post("@rhea translate fr", channel: Self.channel, fileIDs: [file])
                let text = try await Self.answers(relay, channel: Self.channel)
                #expect(text.contains("[translate:fr]") && text.lowercased().contains("good morning"), "\(text)")
                #expect(relay.mattermost.fileRequests == 1)
            }
        }
    }

    @Test func anAudioAttachmentAloneInADirectMessageIsTranscribed() async throws {
        try await MattermostFakes.with { fakes in
            let audio = try await SpeechSample.oggOpus("The meeting moves to Thursday morning.")
            try await fakes.withRelay(try await Self.configuration(fakes)) { relay in
                _ = try #require(await relay.mattermost.nextAuthenticatedSocket())
                let file = relay.mattermost.addFile(audio)
                let direct = "dmch0000000000000000000001"
                _ = try await relay.mattermost.post("", channel: direct, channelType: "D", fileIDs: [file])
                let text = try await Self.answers(relay, channel: direct)
                #expect(text.contains("Transcript") && text.lowercased().contains("thursday"), "\(text)")
            }
        }
    }

    @Test func aMentionInAThreadHearsTheRootsAttachment() async throws {
        try await MattermostFakes.with { fakes in
            let audio = try await SpeechSample.oggOpus("Please translate good morning into French.")
            try await fakes.withRelay(try await Self.configuration(fakes)) { relay in
                _ = try #require(await relay.mattermost.nextAuthenticatedSocket())
                let file = relay.mattermost.addFile(audio)
                // Nobody addressed the bot: the attachment is not fetched.
                let root = try await relay.mattermost.post("", channel: Self.channel, fileIDs: [file])
                _ = try await relay.mattermost.post("@rhea translate fr", channel: Self.channel, rootID: root)
                let text = try await Self.answers(relay, channel: Self.channel)
                #expect(text.contains("[translate:fr]") && text.lowercased().contains("good morning"), "\(text)")
                #expect(relay.mattermost.fileRequests == 1)
            }
        }
    }

    @Test func aDeclaredTooLargeAttachmentIsAnsweredWithoutAFetch() async throws {
        try await MattermostFakes.with { fakes in
            try await fakes.withRelay(try await Self.configuration(fakes)) { relay in
                _ = try #require(await relay.mattermost.nextAuthenticatedSocket())
                let file = relay.mattermost.addFile(Array("OggS".utf8), declaredSize: 400 * 1024 * 1024)
                _ = try await relay.mattermost.post("@rhea transcribe", channel: Self.channel, fileIDs: [file])
                try await eventually("the refusal", safety: .seconds(60)) {
                    relay.mattermost.posts(channel: Self.channel).contains { $0.message.contains("the relay takes voice notes up to 25 MB") }
                        || relay.mattermost.requests("POST /posts/ephemeral").contains {
                            $0["message"]?.stringValue?.contains("the relay takes voice notes up to 25 MB") == true
                        }
                }
                try await relay.settled()
                #expect(relay.mattermost.fileRequests == 0)
            }
        }
    }
}
