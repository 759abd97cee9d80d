import Foundation
import RelayCore
import RelayTestSupport
import Testing

/// Issue 14: a 👍 or 👎 on the relay's own fact-check reply marks its verdict right or wrong.
@Suite("Discord: marking a fact-check with a reaction")
struct DiscordLedgerMarkTests {
    @Test func aThumbOnTheRelaysFactCheckMarksItAndElsewhereCostsNothing() async throws {
        try await DiscordFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration(gateway: true)) { relay in
                _ = try #require(await relay.gateway.next(FakeDiscordGateway.identify))
                relay.discord.seed(message: "1500000000000000030", channel: FakeDiscordInteractions.channel, content: "The Great Wall is visible from space")
                try await relay.gateway.dispatch("MESSAGE_REACTION_ADD", FakeDiscordInteractions.reaction("🔍", message: "1500000000000000030"))
                let answer = try #require(await relay.discord.next(FakeDiscordAPI.createMessage))
                try await relay.settled()
                let footer = try #require(answer["embeds"]?[0]?["footer"]?["text"]?.stringValue)
                #expect(footer.contains("fact-check #1"), "\(footer)")
                let replyID = try #require(relay.discord.messages().first { $0.author == FakeDiscordAPI.botUserID }?.id)

                // A 👍 on someone else's message: no read, no answer.
                try await relay.gateway.dispatch(
                    "MESSAGE_REACTION_ADD", FakeDiscordInteractions.reaction("👍", message: "1500000000000000030", author: "1200000000000000009"))
                // Marks teach the council: a member who does not manage the server is refused,
                // and told who may.
                try await relay.gateway.dispatch(
                    "MESSAGE_REACTION_ADD", FakeDiscordInteractions.reaction("👎", message: replyID, author: FakeDiscordAPI.botUserID))
                let refused = try #require(await relay.discord.next(FakeDiscordAPI.createMessage))
                try await relay.settled()
                let refusal = [refused["content"]?.stringValue, refused["embeds"]?[0]?["description"]?.stringValue].compactMap { $0 }.joined()
                #expect(refusal.contains("Only this team's admins can mark fact-checks"), "\(refused)")
                #expect(refusal.contains("Discord members with Manage Server or Administrator"), "\(refused)")
                #expect(relay.discord.requests(FakeDiscordAPI.guildMember).count == 1, "the member's roles, asked by the gateway's event")

                // Given the role with Manage Server, a 👍🏽 on the relay's reply marks the verdict right.
                relay.discord.makeGuildAdmin(FakeDiscordInteractions.asker)
                let reads = relay.discord.requests(FakeDiscordAPI.getMessage).count
                try await relay.gateway.dispatch(
                    "MESSAGE_REACTION_ADD", FakeDiscordInteractions.reaction("👍🏽", message: replyID, author: FakeDiscordAPI.botUserID))
                let marked = try #require(await relay.discord.next(FakeDiscordAPI.createMessage))
                try await relay.settled()
                #expect(relay.discord.requests(FakeDiscordAPI.getMessage).count == reads + 1)
                let text = [marked["content"]?.stringValue, marked["embeds"]?[0]?["description"]?.stringValue].compactMap { $0 }.joined().replacingOccurrences(
                    of: "\\", with: "")
                #expect(text.contains("Marked fact-check #1 as true"), "\(marked)")
                #expect(marked["allowed_mentions"]?["parse"]?.arrayValue?.isEmpty == true)
            }
        }
    }
}
