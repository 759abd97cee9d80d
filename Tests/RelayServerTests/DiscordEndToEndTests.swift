import DiscordAdapter
import Foundation
import Hummingbird
import HummingbirdTesting
import RelayCore
import RelayServer
import RelayTestSupport
import Testing

/// Discord through the real server: `RelayApplication.build` as `serve` runs it, driven by
/// interactions signed with Ed25519 as Discord signs them, against the fake Discord REST API
/// and the fake Rhea Tribunal on 127.0.0.1. Every check is about what Discord received.
@Suite("Discord end to end, through the server")
struct DiscordEndToEndTests {
    static let app = FakeDiscordAPI.applicationID

    /// The path of a token's `@original`.
    static func originalPath(_ token: String) -> String { "/api/v10/webhooks/\(app)/\(token)/messages/@original" }

    @Test func forgedStaleAndMissingSignaturesGet401AndNoReplyPingGetsPong() async throws {
        try await DiscordFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                for (index, signing) in [DiscordRelay.Signing.forged, .aged(seconds: 301), .aged(seconds: -400), .missing, .ofOtherBody].enumerated() {
                    let command = FakeDiscordInteractions.command(
                        "translate", options: [("lang", "fr"), ("text", "Good morning")], id: "13000000000000001\(index)", token: "refused-\(index)")
                    let response = try await relay.interact(command, signing: signing)
                    #expect(response.status == .unauthorized, "\(signing)")
                    #expect(response.json == ["error": "invalid request signature"], "\(signing)")
                }
                let ping = try await relay.interact(FakeDiscordInteractions.ping())
                #expect(ping.status == .ok)
                #expect(ping.headers[.contentType] == "application/json")
                #expect(ping.json == ["type": 1])
                let forgedPing = try await relay.interact(FakeDiscordInteractions.ping(), signing: .forged)
                #expect(forgedPing.status == .unauthorized)
                // Signed, but not an interaction the relay can read: 400, naming the field at fault.
                for (body, problem) in [
                    ("[1]", "the payload is not an object"),
                    (#"{"type":2,"id":"1300000000000000201","application_id":"\#(Self.app)","token":"t","data":{"options":[]}}"#, "missing field `data.name`"),
                    (#"{"type":2,"id":"x","application_id":"\#(Self.app)","token":"t","data":{"name":"translate"}}"#, "field `id` is invalid"),
                ] {
                    let response = try await relay.interact(body: body)
                    #expect(response.status == .badRequest, "\(body)")
                    #expect(response.json == ["error": .string("Discord interaction: " + problem)], "\(body)")
                }

                try await relay.settled()
                #expect(relay.discord.requests().isEmpty, "\(relay.discord.requests().map(\.path))")
                #expect(await relay.tribunal.requests().filter { $0.path != FakeRheaTribunal.healthPath }.isEmpty)
            }
        }
    }

    @Test func aCommandIsDeferredThenAnsweredOnceByEditingTheOriginalResponse() async throws {
        try await DiscordFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let command = FakeDiscordInteractions.command(
                    "tribunal", options: [("claim", "The Moon is made of cheese @everyone")], id: "1300000000000000100", token: "token-tribunal")
                let ack = try await relay.interact(command)
                #expect(ack.status == .ok)
                #expect(ack.json == ["type": 5])

                let edit = try #require(await relay.discord.next(FakeDiscordAPI.editOriginal))
                try await relay.settled()
                #expect(edit.method == "PATCH")
                #expect(edit.path == Self.originalPath("token-tribunal"))
                #expect(edit.header("authorization") == nil, "the bot token goes only to bot routes")
                let body = try #require(edit.body)
                #expect(body["allowed_mentions"] == ["parse": []])
                let embed = try #require(body["embeds"]?[0])
                #expect(embed["description"]?.stringValue?.isEmpty == false)
                #expect(embed["color"]?.intValue != nil)
                let footer = try #require(embed["footer"]?["text"]?.stringValue)
                #expect(footer.contains("%"), "\(footer)")
                #expect(relay.discord.requests(FakeDiscordAPI.editOriginal).count == 1)
                #expect(relay.discord.requests(FakeDiscordAPI.createMessage).isEmpty)
                #expect(relay.discord.requests(FakeDiscordAPI.followup).isEmpty)
            }
        }
    }

    @Test func theSameInteractionTwiceIsAnsweredOnce() async throws {
        try await DiscordFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let command = FakeDiscordInteractions.command(
                    "translate", options: [("lang", "fr"), ("text", "Good morning")], id: "1300000000000000200", token: "token-twice")
                #expect(try await relay.interact(command).status == .ok)
                #expect(try await relay.interact(command).status == .ok)
                let edit = try #require(await relay.discord.next(FakeDiscordAPI.editOriginal))
                try await relay.settled()
                #expect(edit["embeds"]?[0]?["description"]?.stringValue?.contains("Good morning") == true)
                #expect(relay.discord.requests(FakeDiscordAPI.editOriginal).count == 1)
                #expect(await relay.tribunal.requests().filter { $0.path == FakeRheaTribunal.quickPath }.count == 1)
            }
        }
    }

    @Test func a429OnTheEditIsWaitedOutAndTheAnswerDeliveredOnce() async throws {
        try await DiscordFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                relay.discord.failNext(with: .rateLimited(retryAfter: 0.3), route: FakeDiscordAPI.editOriginal)
                let command = FakeDiscordInteractions.command(
                    "fix", options: [("text", "teh cat")], id: "1300000000000000300", token: "token-429")
                #expect(try await relay.interact(command).json == ["type": 5])
                _ = try #require(await relay.discord.next(FakeDiscordAPI.editOriginal))
                let second = try #require(await relay.discord.next(FakeDiscordAPI.editOriginal))
                try await relay.settled()
                #expect(second["embeds"]?[0]?["description"]?.stringValue?.contains("teh cat") == true)
                let times = relay.discord.arrivalTimes(FakeDiscordAPI.editOriginal)
                #expect(times.count == 2)
                #expect(times[0].duration(to: times[1]) >= .milliseconds(300))
            }
        }
    }

    @Test func aPrivateCommandIsDeferredEphemerally() async throws {
        try await DiscordFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let command = FakeDiscordInteractions.command(
                    "fix", options: [("text", "teh cat"), ("private", true)], id: "1300000000000000400", token: "token-private")
                let ack = try await relay.interact(command)
                #expect(ack.json == ["type": 5, "data": ["flags": 64]])
                let edit = try #require(await relay.discord.next(FakeDiscordAPI.editOriginal))
                try await relay.settled()
                #expect(edit.path == Self.originalPath("token-private"))
                let buttons = edit["components"]?[0]?["components"]?.arrayValue ?? []
                #expect(buttons.contains { $0["custom_id"]?.stringValue?.hasPrefix("rhea:post:") == true })
                #expect(relay.discord.requests(FakeDiscordAPI.createMessage).isEmpty)
            }
        }
    }

    @Test func aChainEditsTheOriginalWithProgressThenTheResult() async throws {
        try await DiscordFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                // Saved by a server manager: the interaction carries their permissions.
                let save = FakeDiscordInteractions.command(
                    "rhea", options: [("line", "chain save twostep = grammar > rewrite:formal")], id: "1300000000000000500", token: "token-save",
                    permissions: FakeDiscordInteractions.managerPermissions)
                _ = try await relay.interact(save)
                let saved = try #require(await relay.discord.next(FakeDiscordAPI.editOriginal))
                #expect(saved.path == Self.originalPath("token-save"))

                let run = FakeDiscordInteractions.command(
                    "run", options: [("name", "twostep"), ("text", "teh cat")], id: "1300000000000000501", token: "token-chain")
                #expect(try await relay.interact(run).json == ["type": 5])
                var edits: [RecordedRequest] = []
                while edits.last?["embeds"]?.arrayValue?.isEmpty != false, edits.count < 10 {
                    edits.append(try #require(await relay.discord.next(FakeDiscordAPI.editOriginal)))
                }
                try await relay.settled()
                #expect(edits.allSatisfy { $0.path == Self.originalPath("token-chain") })
                let progress = edits.dropLast().compactMap { $0["content"]?.stringValue }
                #expect(!progress.isEmpty)
                #expect(progress.allSatisfy { $0.contains("Running…") }, "\(progress)")
                #expect(edits.last?["embeds"]?[0]?["description"]?.stringValue?.contains("teh cat") == true)
                #expect(edits.last?["content"]?.stringValue == "")
                #expect(relay.discord.requests(FakeDiscordAPI.createMessage).isEmpty)
            }
        }
    }

    @Test func postToChannelIsRefusedToOthersAndPostsOnceForTheAsker() async throws {
        try await DiscordFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let command = FakeDiscordInteractions.command(
                    "fix", options: [("text", "teh cat"), ("private", true)], id: "1300000000000000600", token: "token-ask")
                _ = try await relay.interact(command)
                let result = try #require(await relay.discord.next(FakeDiscordAPI.editOriginal))
                try await relay.settled()
                let buttons = result["components"]?[0]?["components"]?.arrayValue ?? []
                let customID = try #require(buttons.compactMap { $0["custom_id"]?.stringValue }.first { $0.hasPrefix("rhea:post:") })

                let stranger = try await relay.interact(
                    FakeDiscordInteractions.click(customID, id: "1300000000000000601", token: "token-stranger", user: FakeDiscordInteractions.other))
                #expect(stranger.json?["type"] == 4)
                #expect(stranger.json?["data"]?["flags"] == 64)
                #expect(stranger.json?["data"]?["content"]?.stringValue?.contains("Only the person who asked") == true)
                try await relay.settled()
                #expect(relay.discord.requests(FakeDiscordAPI.followup).isEmpty)

                let first = try await relay.interact(FakeDiscordInteractions.click(customID, id: "1300000000000000602", token: "token-click-1"))
                #expect(first.json == ["type": 6])
                let posted = try #require(await relay.discord.next(FakeDiscordAPI.followup))
                let note = try #require(await relay.discord.next(FakeDiscordAPI.editOriginal))
                let again = try await relay.interact(FakeDiscordInteractions.click(customID, id: "1300000000000000603", token: "token-click-2"))
                #expect(again.json?["data"]?["content"]?.stringValue?.contains("already posted") == true)
                try await relay.settled()

                #expect(posted.path == "/api/v10/webhooks/\(Self.app)/token-click-1")
                #expect(posted["flags"].map { ($0.intValue ?? 0) & 64 == 0 } ?? true, "public")
                #expect(posted["embeds"]?[0]?["description"]?.stringValue?.contains("teh cat") == true)
                #expect(posted["allowed_mentions"] == ["parse": []])
                #expect(note.path == Self.originalPath("token-click-1"))
                #expect(relay.discord.requests(FakeDiscordAPI.followup).count == 1)
                #expect(relay.discord.requests(FakeDiscordAPI.createMessage).isEmpty)
            }
        }
    }

    @Test func afterTheTokensFifteenMinutesTheAnswerIsPostedWithTheBotToken() async throws {
        try await DiscordFakes.with { fakes in
            let clock = ShiftedClock()
            try await fakes.withRelay(fakes.configuration(), clock: clock) { relay in
                relay.tribunal.hold(path: FakeRheaTribunal.quickPath)
                let command = FakeDiscordInteractions.command(
                    "fix", options: [("text", "teh cat")], id: "1300000000000000700", token: "token-late")
                #expect(try await relay.interact(command).json == ["type": 5])
                _ = try #require(await relay.tribunal.next(path: FakeRheaTribunal.quickPath))
                clock.jump(by: .seconds(16 * 60))
                relay.discord.expire(interactionToken: "token-late")
                relay.tribunal.release(path: FakeRheaTribunal.quickPath)

                let post = try #require(await relay.discord.next(FakeDiscordAPI.createMessage))
                try await relay.settled()
                #expect(post.path == "/api/v10/channels/\(FakeDiscordInteractions.channel)/messages")
                #expect(post.header("authorization") == "Bot \(relay.discord.botToken)")
                #expect(post["embeds"]?[0]?["description"]?.stringValue?.contains("teh cat") == true)
                #expect(post["allowed_mentions"] == ["parse": []])
                #expect(relay.discord.requests(FakeDiscordAPI.editOriginal).isEmpty)
            }
        }
    }

    @Test func theFactCheckMenuRunsATribunalOnTheMessage() async throws {
        try await DiscordFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let command = FakeDiscordInteractions.messageCommand(
                    DiscordCommands.factCheck, message: "1400000000000000800", content: "Water boils at 50 degrees", id: "1300000000000000800",
                    token: "token-factcheck")
                #expect(try await relay.interact(command).json == ["type": 5])
                let edit = try #require(await relay.discord.next(FakeDiscordAPI.editOriginal))
                try await relay.settled()
                #expect(edit["embeds"]?[0]?["footer"]?["text"]?.stringValue?.contains("%") == true)
                let asked = await relay.tribunal.requests().filter { $0.path == FakeRheaTribunal.tribunalPath }
                #expect(asked.count == 1)
                #expect(asked.first?.rawBody.contains("Water boils at 50 degrees") == true)
            }
        }
    }
}
