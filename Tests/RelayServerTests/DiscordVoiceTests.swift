import DiscordAdapter
import Foundation
import RelayCore
import RelayServer
import RelayTestSupport
import RelayTestTags
import RelayTribunal
import Testing

/// Discord voice messages over the gateway, through the real server, with the real speech model
/// (`SpeechTestServer`): the fake CDN serves the voice message, the fake Rhea Tribunal echoes
/// what reached it.
@Suite("Discord voice messages, through the server", .serialized, .timeLimit(.minutes(5)), .tags(.peers))
struct DiscordVoiceTests {
    /// A MESSAGE_CREATE of a voice message (flag 8192, one OGG attachment) by `user`: in a DM
    /// when `guild` is nil.
    static func voiceMessage(id: String, url: String, size: Int, guild: String? = nil, user: String = FakeDiscordInteractions.asker) -> JSONValue {
        var message: [String: JSONValue] = [
            "id": .string(id), "channel_id": .string(FakeDiscordInteractions.channel), "content": "", "flags": .int(8192),
            "author": ["id": .string(user), "username": "ada"], "mentions": [],
            "attachments": [
                [
                    "id": "1400000000000000001", "filename": "voice-message.ogg", "size": .int(size), "url": .string(url),
                    "proxy_url": .string(url), "content_type": "audio/ogg", "duration_secs": 3.1, "waveform": "AAAA",
                ]
            ],
        ]
        if let guild { message["guild_id"] = .string(guild) }
        return .object(message)
    }

    static func configuration(_ fakes: DiscordFakes) async throws -> AppConfiguration {
        var configuration = fakes.configuration(gateway: true)
        let speech = try await SpeechTestServer.shared()
        configuration.transcription = TranscriptionConfiguration(baseURL: speech.baseURL, model: SpeechTestServer.model)
        return configuration
    }

    /// What the relay posted (every message's content, embed titles and descriptions), once it
    /// has posted something.
    /// Dispatches `data` to the relay, again if the gateway connection was being replaced (on a
    /// loaded machine the fast test timings can make the relay reconnect); the event key makes a
    /// repeat harmless.
    static func dispatch(_ relay: DiscordRelay, _ name: String, _ data: JSONValue) async throws {
        for attempt in 1...5 {
            do {
                try await relay.gateway.dispatch(name, data)
                return
            } catch  where attempt < 5 {
                try await Task.sleep(for: .milliseconds(300))
            }
        }
    }

    static func posted(_ relay: DiscordRelay) async throws -> String {
        try await eventually("a reply", safety: .seconds(180)) { !relay.discord.requests(FakeDiscordAPI.createMessage).isEmpty }
        try await relay.settled()
        return relay.discord.requests(FakeDiscordAPI.createMessage).map { sent in
            let embeds = (sent["embeds"]?.arrayValue ?? []).flatMap { [$0["title"]?.stringValue, $0["description"]?.stringValue] }
            return ([sent["content"]?.stringValue] + embeds).compactMap { $0 }.joined(separator: "\n")
        }.joined(separator: "\n---\n")
    }

    @Test func aVoiceMessageInADirectMessageIsAnsweredWithItsTranscript() async throws {
        try await DiscordFakes.with { fakes in
            let audio = try await SpeechSample.oggOpus("Please translate good morning into French.")
            let url = fakes.discord.addAttachment(audio)
            try await fakes.withRelay(try await Self.configuration(fakes)) { relay in
                _ = try #require(await relay.gateway.next(FakeDiscordGateway.identify))
                try await Self.dispatch(relay, "MESSAGE_CREATE", Self.voiceMessage(id: "1500000000000000101", url: url, size: audio.count))
                let text = try await Self.posted(relay)
                #expect(text.contains("Transcript") && text.lowercased().contains("good morning"), "\(text)")
                #expect(relay.discord.attachmentRequests == 1)
            }
        }
    }

    @Test func aMentionReplyingToAVoiceMessageRunsItsCommandOnTheTranscript() async throws {
        try await DiscordFakes.with { fakes in
            let audio = try await SpeechSample.oggOpus("Please translate good morning into French.")
            let voice = Self.voiceMessage(
                id: "1500000000000000110", url: fakes.discord.addAttachment(audio), size: audio.count, guild: FakeDiscordInteractions.guild,
                user: "1200000000000000009")
            try await fakes.withRelay(try await Self.configuration(fakes)) { relay in
                _ = try #require(await relay.gateway.next(FakeDiscordGateway.identify))
                var mention = FakeDiscordInteractions.mention("translate fr", id: "1500000000000000111")
                if case .object(var object) = mention {
                    object["referenced_message"] = voice
                    mention = .object(object)
                }
                // The voice message alone mentions nobody: not the relay's.
                try await Self.dispatch(relay, "MESSAGE_CREATE", voice)
                try await Self.dispatch(relay, "MESSAGE_CREATE", mention)
                let text = try await Self.posted(relay)
                // Markdown-escaped as every model answer is: `\[translate:fr\]`.
                #expect(text.lowercased().contains("translate:fr") && text.lowercased().contains("good morning"), "\(text)")
                #expect(relay.discord.requests(FakeDiscordAPI.createMessage).count == 1)
            }
        }
    }

    @Test func theTranscribeMenuTranscribesTheVoiceMessage() async throws {
        try await DiscordFakes.with { fakes in
            try await fakes.withRelay(try await Self.configuration(fakes)) { relay in
                let audio = try await SpeechSample.oggOpus("The meeting moves to Thursday morning.")
                var command = FakeDiscordInteractions.messageCommand(
                    DiscordCommands.transcribe, message: "1400000000000000900", content: "", id: "1300000000000000900", token: "token-transcribe")
                // The resolved message is the voice message itself, attachment and all.
                let voice = Self.voiceMessage(id: "1400000000000000900", url: relay.discord.addAttachment(audio), size: audio.count)
                if case .object(var interaction) = command, case .object(var data)? = interaction["data"] {
                    data["resolved"] = ["messages": ["1400000000000000900": voice]]
                    interaction["data"] = .object(data)
                    command = .object(interaction)
                }
                #expect(try await relay.interact(command).json == ["type": 5])
                try await eventually("the answer", safety: .seconds(180)) { !relay.discord.requests(FakeDiscordAPI.editOriginal).isEmpty }
                try await relay.settled()
                let edit = try #require(relay.discord.requests(FakeDiscordAPI.editOriginal).last)
                #expect(edit["embeds"]?[0]?["title"]?.stringValue == "Transcript", "\(edit.rawBody)")
                #expect(edit["embeds"]?[0]?["description"]?.stringValue?.lowercased().contains("thursday") == true, "\(edit.rawBody)")
            }
        }
    }

    @Test func anAttachmentOffTheConfiguredCDNIsNotFetched() async throws {
        try await DiscordFakes.with { fakes in
            try await fakes.withRelay(try await Self.configuration(fakes)) { relay in
                _ = try #require(await relay.gateway.next(FakeDiscordGateway.identify))
                let elsewhere = "http://127.0.0.2:9/attachments/1/2/voice-message.ogg"
                try await Self.dispatch(relay, "MESSAGE_CREATE", Self.voiceMessage(id: "1500000000000000120", url: elsewhere, size: 12_000))
                let text = try await Self.posted(relay)
                #expect(text.contains("could not fetch this voice note"), "\(text)")
                #expect(relay.discord.attachmentRequests == 0)
            }
        }
    }

    @Test func onlyPlainAttachmentPathsOnTheCDNAreFetched() {
        let cdn = "https://cdn.discordapp.com"
        #expect(DiscordConversationReader.isAttachment("https://cdn.discordapp.com/attachments/1/2/voice-message.ogg?ex=1&is=2&hm=3&", cdn: cdn))
        #expect(!DiscordConversationReader.isAttachment("https://evil.example/attachments/1/2/a.ogg", cdn: cdn))
        #expect(!DiscordConversationReader.isAttachment("https://cdn.discordapp.com.evil.example/attachments/1/2/a.ogg", cdn: cdn))
        #expect(!DiscordConversationReader.isAttachment("https://user@cdn.discordapp.com/attachments/1/2/a.ogg", cdn: cdn))
        #expect(!DiscordConversationReader.isAttachment("https://cdn.discordapp.com/attachments/../../x", cdn: cdn))
        #expect(!DiscordConversationReader.isAttachment("https://cdn.discordapp.com/avatars/1/2.png", cdn: cdn))
        #expect(!DiscordConversationReader.isAttachment("http://cdn.discordapp.com/attachments/1/2/a.ogg", cdn: cdn))
    }
}
