import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import MattermostAdapter
import RelayCore
import RelayTestSupport
import Testing

/// Issue 47, point 9: a command whose message is deleted before its answer is posted is not
/// answered, on each platform that tells a bot of the deletion (Matrix's redaction is tested
/// against Synapse in `MatrixEndToEndTests`). Each test holds the backend while the command
/// runs, deletes the command's message, sends a second command, and lets both answers go: the
/// second is answered, the first never is.
@Suite("Commands deleted before their answer, through the server")
struct DeletedCommandTests {
    static let quick = FakeRheaTribunal.quickPath
    static let note = "The command was deleted, so it is not answered."

    @Test func slackADirectMessageDeletedWhileItRunsIsNotAnswered() async throws {
        try await SlackFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let channel = "D0E2E"
                func message(_ text: String, ts: String, eventID: String) -> JSONValue {
                    SlackPayloads.directMessage(
                        text: text, user: "U0HUMAN", channel: channel, ts: ts, eventID: eventID, team: SlackFakes.team,
                        botUserID: FakeSlackWebAPI.botUserID)
                }
                relay.tribunal.hold(path: Self.quick)
                #expect(try await relay.event(message("translate fr Secret plans", ts: "1700000001.000100", eventID: "EvD1")).status == .ok)
                try await eventually("the run to ask the backend") { await relay.tribunal.requestCount(path: Self.quick) == 1 }
                let deleted = SlackPayloads.messageDeleted(
                    channel: channel, deletedTS: "1700000001.000100", eventID: "EvD2", team: SlackFakes.team, botUserID: FakeSlackWebAPI.botUserID)
                #expect(try await relay.event(deleted).status == .ok)
                #expect(try await relay.event(message("translate fr Good night", ts: "1700000002.000100", eventID: "EvD3")).status == .ok)
                try await eventually("the next command to reach the backend") { await relay.tribunal.requestCount(path: Self.quick) == 2 }
                relay.tribunal.release(path: Self.quick)
                try await relay.settled()
                let shown = relay.slack.messages(channel: channel).map(\.text)
                #expect(shown.contains { $0.contains("Good night") }, "\(shown)")
                #expect(!shown.contains { $0.contains("Secret plans") }, "the deleted command is not answered: \(shown)")
                // Its "working on it" message says why no answer follows.
                #expect(shown.contains(Self.note), "\(shown)")
            }
        }
    }

    @Test func discordAMentionDeletedWhileItRunsIsNotAnswered() async throws {
        try await DiscordFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration(gateway: true)) { relay in
                _ = try #require(await relay.gateway.next(FakeDiscordGateway.identify))
                relay.tribunal.hold(path: Self.quick)
                let deletedID = "1500000000000000031"
                try await relay.gateway.dispatch("MESSAGE_CREATE", FakeDiscordInteractions.mention("translate fr Secret plans", id: deletedID))
                try await eventually("the run to ask the backend") { await relay.tribunal.requestCount(path: Self.quick) == 1 }
                try await relay.gateway.dispatch(
                    "MESSAGE_DELETE",
                    ["id": .string(deletedID), "channel_id": .string(FakeDiscordInteractions.channel), "guild_id": .string(FakeDiscordInteractions.guild)])
                try await relay.gateway.dispatch("MESSAGE_CREATE", FakeDiscordInteractions.mention("translate fr Good night", id: "1500000000000000032"))
                try await eventually("the next command to reach the backend") { await relay.tribunal.requestCount(path: Self.quick) == 2 }
                relay.tribunal.release(path: Self.quick)
                _ = try #require(await relay.discord.next(FakeDiscordAPI.createMessage))
                try await relay.settled()
                let posted = relay.discord.requests(FakeDiscordAPI.createMessage)
                #expect(posted.count == 1, "only the next command is answered")
                #expect(posted.first?["message_reference"]?["message_id"]?.stringValue == "1500000000000000032")
                #expect(!posted.contains { "\($0)".contains("Secret plans") })
            }
        }
    }

    @Test func mattermostAMentionDeletedWhileItRunsIsNotAnswered() async throws {
        try await MattermostFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration(websocket: true)) { relay in
                _ = try #require(await relay.mattermost.nextAuthenticatedSocket())
                let channel = MattermostEndToEndTests.channel
                relay.tribunal.hold(path: Self.quick)
                let deleted = try await relay.mattermost.post("@rhea translate fr Secret plans", channel: channel)
                try await eventually("the run to ask the backend") { await relay.tribunal.requestCount(path: Self.quick) == 1 }
                try await relay.mattermost.deletePost(deleted)
                let next = try await relay.mattermost.post("@rhea translate fr Good night", channel: channel)
                try await eventually("the next command to reach the backend") { await relay.tribunal.requestCount(path: Self.quick) == 2 }
                relay.tribunal.release(path: Self.quick)
                let answer = try #require(await relay.mattermost.next("POST /posts"))
                try await relay.settled()
                #expect(answer["root_id"]?.stringValue == next)
                let shown = relay.mattermost.posts(channel: channel).map { MattermostMarkdown.unescape($0.message) }
                #expect(shown.contains { $0.contains("Good night") && $0.contains("[translate:fr]") }, "\(shown)")
                #expect(!shown.contains { $0.contains("[translate:fr] Secret plans") }, "the deleted command is not answered: \(shown)")
            }
        }
    }
}
