import RelayCore
import RelayTestSupport
import Testing

/// Issue 11, point 3: "Run again" runs the same command line again, answered as a new follow-up;
/// the earlier result stays as it was.
@Suite("Discord: Run again")
struct DiscordRunAgainTests {
    @Test func runAgainIsAcknowledgedAtOnceAndAnsweredWithANewFollowUp() async throws {
        try await DiscordFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let command = FakeDiscordInteractions.command("fix", options: [("text", "teh cat")], id: "1300000000000000900", token: "token-first")
                #expect(try await relay.interact(command).json == ["type": 5])
                let result = try #require(await relay.discord.next(FakeDiscordAPI.editOriginal))
                try await relay.settled()
                let buttons = result["components"]?[0]?["components"]?.arrayValue ?? []
                let customID = try #require(buttons.compactMap { $0["custom_id"]?.stringValue }.first { $0.hasPrefix("rhea:again:") })

                let click = try await relay.interact(FakeDiscordInteractions.click(customID, id: "1300000000000000901", token: "token-again"))
                #expect(click.json == ["type": 6], "a deferred update: the button's message stays")
                let again = try #require(await relay.discord.next(FakeDiscordAPI.followup))
                try await relay.settled()
                #expect(again.path.hasSuffix("/token-again"))
                #expect(again["embeds"]?[0]?["description"]?.stringValue?.contains("teh cat") == true)
                #expect(again["allowed_mentions"] == ["parse": []])
                // The model was asked twice, the first result was edited once and never again.
                #expect(await relay.tribunal.requests().filter { $0.path == FakeRheaTribunal.quickPath }.count == 2)
                #expect(relay.discord.requests(FakeDiscordAPI.editOriginal).filter { $0.path.contains("token-first") }.count == 1)
            }
        }
    }
}
