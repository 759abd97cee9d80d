import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import RelayCore
import RelayPipeline
import RelayServer
import RelayStore
import RelayTestSupport
import Testing

/// Issue 23: a command costs the store three writes whatever it is — its admission, its run's
/// end (the reply, the history row and any fact-check, in one transaction), its delivery's mark.
@Suite("serve: the store's writes per command")
struct StoreWritesTests {
    /// The relay as `serve` builds it, with the SQLite store kept at hand to read its statistics.
    func withRelay(_ fakes: SlackFakes, _ body: @escaping @Sendable (RelayUnderTest, SQLiteStore) async throws -> Void) async throws {
        var logger = Logger(label: "test.store-writes")
        logger.logLevel = .warning
        var configuration = fakes.configuration()
        // Writes per command, not lease renewals: a run or a delivery renews its lease only past
        // a third of it, which one slowed by a loaded machine could reach with the defaults.
        configuration.runs.lease = .seconds(120)
        configuration.delivery.lease = .seconds(120)
        let runtime = try await RelayRuntime.start(configuration, logger: logger)
        let store = try #require(runtime.store as? SQLiteStore)
        let app = try RelayApplication.build(
            .init(
                configuration: configuration, store: runtime.store, backend: runtime.tribunal, platforms: configuration.platforms,
                transport: runtime.transport, registry: TestMetrics.registry, logger: logger, close: { await runtime.shutdown() }))
        try await app.test(.live) { client in
            let relay = RelayUnderTest(client: client, fakes: fakes, signer: SlackSigner(signingSecret: SlackFakes.signingSecret))
            try await relay.settled()
            try await body(relay, store)
        }
    }

    @Test func aQuickActionWritesThreeTimesAndKeepsItsHistory() async throws {
        try await SlackFakes.with { fakes in
            try await withRelay(fakes) { relay, store in
                let before = store.commitStatistics.writes
                let url = relay.slack.makeResponseURL()
                #expect(try await relay.slashCommand("/translate", text: "fr Good morning", responseURL: url, user: "U0WRITES").status == .ok)
                _ = try #require(await relay.slack.next(responseURL: url))
                try await relay.settled()
                #expect(store.commitStatistics.writes - before == 3, "admission, the run's end, the delivery's mark")
                let history = try await store.history(team: SlackFakes.team, user: "U0WRITES", limit: 10)
                #expect(history.map(\.command) == ["translate"])
            }
        }
    }

    @Test func aTribunalWritesThreeTimesAndItsReplyNamesTheFactCheckWrittenWithIt() async throws {
        try await SlackFakes.with { fakes in
            try await withRelay(fakes) { relay, store in
                let before = store.commitStatistics.writes
                let url = relay.slack.makeResponseURL()
                let claim = "The Eiffel Tower is in Berlin"
                #expect(try await relay.slashCommand("/tribunal", text: claim, responseURL: url, user: "U0WRITES").status == .ok)
                let post = try #require(await relay.slack.next(responseURL: url))
                try await relay.settled()
                #expect(store.commitStatistics.writes - before == 3, "admission, the run's end, the delivery's mark")
                let text = post.body?["text"]?.stringValue ?? ""
                let id = try #require(LedgerReference.id(in: text), "\(text)")
                let entry = try #require(try await store.ledgerEntry(team: SlackFakes.team, id: id))
                #expect(entry.claim == claim)
                let history = try await store.history(team: SlackFakes.team, user: "U0WRITES", limit: 10)
                #expect(history.map(\.command) == ["tribunal"])
            }
        }
    }

    /// A command that changes the team's data makes the change in its run's end: still three
    /// writes, and the change is there once the reply is.
    @Test func aCommandThatChangesTeamDataWritesThreeTimes() async throws {
        try await SlackFakes.with { fakes in
            try await withRelay(fakes) { relay, store in
                let team = SlackFakes.team
                let user = "U0CHANGES"
                fakes.slack.seed(.admin(user, teamID: team))
                func run(_ command: String, _ text: String) async throws -> String {
                    let before = store.commitStatistics.writes
                    let url = relay.slack.makeResponseURL()
                    #expect(try await relay.slashCommand(command, text: text, responseURL: url, user: user).status == .ok)
                    let post = try #require(await relay.slack.next(responseURL: url))
                    try await relay.settled()
                    #expect(store.commitStatistics.writes - before == 3, "\(command) \(text): admission, the run's end, the delivery's mark")
                    return post.body?["text"]?.stringValue ?? ""
                }
                _ = try await run("/settings", "lang fr")
                #expect(try await store.settings(.user(team: team, user: user)).lang == "fr")
                _ = try await run("/chain", "save polish = input > grammar > output")
                #expect(try await store.chain(team: team, name: "polish")?.source == "input > grammar > output")
                _ = try await run("/chain", "import a = input > grammar > output\nb = input > rewrite:formal > output")
                #expect(try await store.chains(team: team).map(\.name) == ["a", "b", "polish"])
                _ = try await run("/command", "add eli5 Explain like I'm five: {input}")
                #expect(try await store.customCommand(team: team, name: "eli5")?.template == "Explain like I'm five: {input}")
                _ = try await run("/command", "remove eli5")
                #expect(try await store.customCommand(team: team, name: "eli5") == nil)
                _ = try await run("/chain", "delete polish")
                #expect(try await store.chain(team: team, name: "polish") == nil)
                _ = try await run("/translate", "fr Good morning")
                #expect(try await store.history(team: team, user: user, limit: 20).map(\.command) == ["translate"])
                let cleared = try await run("/history", "clear")
                #expect(cleared.contains("Deleted your history: 1 result"), "\(cleared)")
                #expect(try await store.history(team: team, user: user, limit: 20).isEmpty)
            }
        }
    }
}
