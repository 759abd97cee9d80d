import DiscordAdapter
import Foundation
import Logging
import Prometheus
import RelayCore
import RelayPlatform
import RelayServer
import RelayTestSupport
import Testing

/// The Discord gateway through the real server: the relay finds the fake gateway through the
/// fake's `GET /gateway/bot`, identifies, and answers mentions and the tribunal reaction by
/// posting replies with the bot token; it resumes after a drop and identifies again after an
/// invalid session. Plus `register discord`'s call.
@Suite("Discord gateway and registration, through the server")
struct DiscordGatewayTests {
    static let messages = "/api/v10/channels/\(FakeDiscordInteractions.channel)/messages"

    @Test func aMentionIsAnsweredOnceAsAReplyToIt() async throws {
        try await DiscordFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration(gateway: true)) { relay in
                let identify = try #require(await relay.gateway.next(FakeDiscordGateway.identify))
                #expect(identify["d"]?["token"]?.stringValue == relay.discord.botToken)
                #expect(identify["d"]?["intents"]?.intValue == GatewayIntents.relay.rawValue)
                try await relay.gateway.dispatch("MESSAGE_CREATE", FakeDiscordInteractions.mention("fix teh cat", id: "1500000000000000001"))
                let reply = try #require(await relay.discord.next(FakeDiscordAPI.createMessage))
                try await relay.settled()
                #expect(reply.path == Self.messages)
                #expect(reply["message_reference"]?["message_id"]?.stringValue == "1500000000000000001")
                #expect(reply["allowed_mentions"] == ["parse": []])
                #expect(reply["embeds"]?[0]?["description"]?.stringValue?.contains("teh cat") == true)
                #expect(relay.discord.requests(FakeDiscordAPI.createMessage).count == 1)
                // A message that does not mention the bot, and the bot's own, are not answered.
                var plain = FakeDiscordInteractions.mention("fix teh dog", id: "1500000000000000002")
                if case .object(var object) = plain {
                    object["content"] = "fix teh dog"
                    object["mentions"] = []
                    plain = .object(object)
                }
                try await relay.gateway.dispatch("MESSAGE_CREATE", plain)
                try await relay.gateway.dispatch(
                    "MESSAGE_CREATE", FakeDiscordInteractions.mention("fix teh bird", id: "1500000000000000003", user: FakeDiscordAPI.botUserID))
                // Then one that is: answered alone, so the two before it were passed over.
                try await relay.gateway.dispatch("MESSAGE_CREATE", FakeDiscordInteractions.mention("fix teh fox", id: "1500000000000000004"))
                let next = try #require(await relay.discord.next(FakeDiscordAPI.createMessage))
                try await relay.settled()
                #expect(next["message_reference"]?["message_id"]?.stringValue == "1500000000000000004")
                #expect(relay.discord.requests(FakeDiscordAPI.createMessage).count == 2)
            }
        }
    }

    /// What the gateway sends that does not decode is dropped and counted
    /// (`relay_inbound_dropped_total`), and the connection and the events after it go on.
    @Test func whatDoesNotDecodeIsDroppedAndCountedAndTheNextMentionIsAnswered() async throws {
        func dropped(_ payload: String) -> Double {
            var bytes: [UInt8] = []
            TestMetrics.registry.emit(into: &bytes)
            let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n").first {
                $0.hasPrefix("relay_inbound_dropped_total{") && $0.contains(#"platform="discord""#) && $0.contains(#"payload="\#(payload)""#)
            }
            return line.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
        }
        let before = ["Discord gateway frame", "Discord MESSAGE_CREATE", "Discord MESSAGE_REACTION_ADD"].map(dropped)
        try await DiscordFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration(gateway: true)) { relay in
                _ = try #require(await relay.gateway.next(FakeDiscordGateway.identify))
                try await relay.gateway.send(rawText: "not json")
                try await relay.gateway.send(rawText: #"{"d":{"id":"1500000000000000009"}}"#)
                // Events the relay acts on, whose data lacks what it needs: a message without an
                // id, a reaction with a user id that is not one.
                try await relay.gateway.dispatch("MESSAGE_CREATE", ["content": .string("<@\(FakeDiscordAPI.botUserID)> fix teh cat"), "channel_id": "1"])
                try await relay.gateway.dispatch(
                    "MESSAGE_REACTION_ADD", ["user_id": "alice", "channel_id": "1", "message_id": "2", "emoji": ["name": .string("🔍")]])
                try await relay.gateway.dispatch("MESSAGE_CREATE", FakeDiscordInteractions.mention("fix teh fox", id: "1500000000000000011"))
                let reply = try #require(await relay.discord.next(FakeDiscordAPI.createMessage))
                try await relay.settled()
                #expect(reply["message_reference"]?["message_id"]?.stringValue == "1500000000000000011")
                #expect(relay.discord.requests(FakeDiscordAPI.createMessage).count == 1)
                #expect(relay.gateway.received(FakeDiscordGateway.identify).count == 1, "the connection was kept")
            }
        }
        let after = ["Discord gateway frame", "Discord MESSAGE_CREATE", "Discord MESSAGE_REACTION_ADD"].map(dropped)
        #expect(zip(before, after).map { $1 - $0 } == [2, 1, 1])
    }

    @Test func theTribunalReactionFactChecksTheMessage() async throws {
        try await DiscordFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration(gateway: true)) { relay in
                _ = try #require(await relay.gateway.next(FakeDiscordGateway.identify))
                relay.discord.seed(message: "1500000000000000010", channel: FakeDiscordInteractions.channel, content: "The Great Wall is visible from space")
                try await relay.gateway.dispatch("MESSAGE_REACTION_ADD", FakeDiscordInteractions.reaction("👍", message: "1500000000000000010"))
                try await relay.gateway.dispatch("MESSAGE_REACTION_ADD", FakeDiscordInteractions.reaction("🔍", message: "1500000000000000010"))
                let read = try #require(await relay.discord.next(FakeDiscordAPI.getMessage))
                #expect(read.path == "\(Self.messages)/1500000000000000010")
                let reply = try #require(await relay.discord.next(FakeDiscordAPI.createMessage))
                try await relay.settled()
                #expect(reply["message_reference"]?["message_id"]?.stringValue == "1500000000000000010")
                #expect(reply["embeds"]?[0]?["footer"]?["text"]?.stringValue?.contains("%") == true)
                let asked = await relay.tribunal.requests().filter { $0.path == FakeRheaTribunal.tribunalPath }
                #expect(asked.count == 1)
                #expect(asked.first?.rawBody.contains("The Great Wall is visible from space") == true)
                #expect(relay.discord.requests(FakeDiscordAPI.getMessage).count == 1)
            }
        }
    }

    @Test func aDroppedConnectionResumesAndLosesNoMention() async throws {
        try await DiscordFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration(gateway: true)) { relay in
                let identify = try #require(await relay.gateway.next(FakeDiscordGateway.identify))
                _ = identify
                try await relay.gateway.closeAbruptly()
                // Sent while the relay is away: Discord replays it on RESUME.
                try await relay.gateway.dispatch("MESSAGE_CREATE", FakeDiscordInteractions.mention("fix teh cat", id: "1500000000000000020"))
                let resume = try #require(await relay.gateway.next(FakeDiscordGateway.resume))
                #expect(resume["d"]?["session_id"]?.stringValue == "fake-session-1")
                #expect(resume["d"]?["seq"]?.intValue == 1)
                #expect(resume["d"]?["token"]?.stringValue == relay.discord.botToken)
                let reply = try #require(await relay.discord.next(FakeDiscordAPI.createMessage))
                try await relay.settled()
                #expect(reply["message_reference"]?["message_id"]?.stringValue == "1500000000000000020")
                #expect(relay.gateway.received(FakeDiscordGateway.identify).count == 1)
            }
        }
    }

    @Test func anInvalidSessionThatCannotResumeIdentifiesAgain() async throws {
        try await DiscordFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration(gateway: true)) { relay in
                _ = try #require(await relay.gateway.next(FakeDiscordGateway.identify))
                try await relay.gateway.invalidateSession(resumable: false)
                let again = try #require(await relay.gateway.next(FakeDiscordGateway.identify))
                #expect(again["op"]?.intValue == 2)
                #expect(relay.gateway.received(FakeDiscordGateway.resume).isEmpty)
                try await relay.gateway.dispatch("MESSAGE_CREATE", FakeDiscordInteractions.mention("fix teh cat", id: "1500000000000000030"))
                let reply = try #require(await relay.discord.next(FakeDiscordAPI.createMessage))
                #expect(reply["message_reference"]?["message_id"]?.stringValue == "1500000000000000030")
            }
        }
    }

    @Test func noIdentifyIsSpentBeforeTheSessionStartLimitResets() async throws {
        try await DiscordFakes.with { fakes in
            fakes.discord.setSessionStartLimit(remaining: 0, resetAfterMilliseconds: 300)
            try await fakes.withRelay(fakes.configuration(gateway: true)) { relay in
                _ = try #require(await relay.discord.next(FakeDiscordAPI.gatewayBot))
                _ = try #require(await relay.gateway.next(FakeDiscordGateway.connected))
                let asked = try #require(relay.discord.arrivalTimes(FakeDiscordAPI.gatewayBot).first)
                #expect(asked.duration(to: .now) >= .milliseconds(300))
            }
        }
    }

    @Test func registerDiscordOverwritesTheCommandsWithThePayload() async throws {
        try await withFakeDiscordAPI { discord in
            let logger = Logger(label: "test.discord-register", factory: { _ in SwiftLogNoOpLogHandler() })
            let platform = DiscordPlatform(
                configuration: DiscordConfiguration(
                    botToken: DiscordToken(discord.botToken), applicationID: FakeDiscordAPI.applicationID, apiURL: discord.apiURL))
            let count = try await platform.registerCommands(guildID: "1100000000000000001", logger: logger)
            let request = try #require(await discord.next(FakeDiscordAPI.commands))
            #expect(request.method == "PUT")
            #expect(request.path == "/api/v10/applications/\(FakeDiscordAPI.applicationID)/guilds/1100000000000000001/commands")
            #expect(request.header("authorization") == "Bot \(discord.botToken)")
            #expect(request.body == DiscordCommands.payload())
            #expect(count == DiscordCommands.payload().arrayValue?.count)

            _ = try await platform.registerCommands(guildID: nil, logger: logger)
            let global = try #require(await discord.next(FakeDiscordAPI.commands))
            #expect(global.path == "/api/v10/applications/\(FakeDiscordAPI.applicationID)/commands")

            let missing = DiscordPlatform(configuration: DiscordConfiguration(apiURL: discord.apiURL))
            await #expect {
                _ = try await missing.registerCommands(guildID: nil, logger: logger)
            } throws: { error in
                let text = "\(error)"
                return text.contains("DISCORD_BOT_TOKEN") && text.contains("DISCORD_APPLICATION_ID")
            }
        }
    }

    @Test func configurationReadsTheDiscordSectionAndSaysWhatToSetWhenOff() async throws {
        let off = try await ConfigurationLoader.load(file: nil, environment: ["STORE_PATH": ":memory:"], platforms: [DiscordPlatform.self])
        #expect(off.platformStatus["discord"]?.contains("DISCORD_PUBLIC_KEY") == true)
        #expect(off.platformStatus["discord"]?.hasPrefix("off:") == true)

        let key = FakeDiscordSigner().publicKeyHex
        let on = try await ConfigurationLoader.load(
            file: nil,
            environment: [
                "STORE_PATH": ":memory:", "DISCORD_PUBLIC_KEY": key, "DISCORD_BOT_TOKEN": "secret-bot-token", "DISCORD_APPLICATION_ID": "1100000000000000001",
                "DISCORD_GATEWAY": "false", "DISCORD_REACTION": "✅",
            ], platforms: [DiscordPlatform.self])
        #expect(on.platformStatus["discord"] == "on (interactions)")
        let platform = try #require(on.platforms.first as? DiscordPlatform)
        #expect(platform.configuration.tribunalReaction == "✅")
        #expect(platform.configuration.apiURL == DiscordConfiguration.defaultAPIURL)
        #expect(!"\(platform.configuration)".contains("secret-bot-token"))

        await #expect(throws: (any Error).self) {
            _ = try await ConfigurationLoader.load(
                file: nil, environment: ["STORE_PATH": ":memory:", "DISCORD_PUBLIC_KEY": "not-hex"], platforms: [DiscordPlatform.self])
        }
    }
}
