import Foundation
import RelayCore
import RelayTestSupport
import Testing

/// A reply still pending when the relay stops is delivered by the next start, through the
/// interaction's webhook — even without a bot token, whose absence leaves the sealed interaction
/// token nothing to derive a lasting key from but the relay's own key file beside the store.
@Suite("Discord: a reply pending at a restart")
struct DiscordRestartTests {
    @Test func withoutABotTokenAReplyPendingAtARestartIsDeliveredAfterIt() async throws {
        try await DiscordFakes.with { fakes in
            let configuration = fakes.configuration(botToken: false)
            fakes.tribunal.hold(path: FakeRheaTribunal.quickPath)
            try await fakes.withRelay(configuration) { relay in
                let command = FakeDiscordInteractions.command("fix", options: [("text", "teh cat")], id: "1300000000000000950", token: "token-restart")
                #expect(try await relay.interact(command).json == ["type": 5])
                // The model is asked and holds its answer; stopping now parks the run in the inbox.
                _ = try #require(await relay.tribunal.next(path: FakeRheaTribunal.quickPath))
            }
            fakes.tribunal.release(path: FakeRheaTribunal.quickPath)
            try await fakes.withRelay(configuration) { relay in
                let edit = try #require(await relay.discord.next(FakeDiscordAPI.editOriginal))
                try await relay.settled()
                #expect(edit.path == "/api/v10/webhooks/\(FakeDiscordAPI.applicationID)/token-restart/messages/@original")
                #expect(edit["embeds"]?[0]?["description"]?.stringValue?.contains("teh cat") == true)
                #expect(relay.discord.requests(FakeDiscordAPI.editOriginal).count == 1)
            }
            // The key lives beside the store, readable by the relay's user only.
            let attributes = try FileManager.default.attributesOfItem(atPath: fakes.database.path + ".key")
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        }
    }
}
