import Foundation
import RelayCore
import RelayPipeline
import RelayStore
import RelayTestSupport
import Testing

/// Issue 44, point 4: a team's monthly budget. The scripted backend's quick answers cost $0.0004
/// each; its one model is priced so that a run's hold (every answer as long as it may be) is
/// about $0.00066. `ada` administers team `t`, `bob` does not.
@Suite("Relay: budgets (/admin budget)")
struct BudgetCommandTests {
    static let price = ModelPrice(inPerMillion: 0.15, outPerMillion: 0.60)
    static let roster = TierRoster(
        hasOwnModels: true, writers: [TierRoster.Model(name: "mini", endpoint: "e", price: price)],
        judges: [TierRoster.Model(name: "mini", endpoint: "e", price: price)])
    static let tribunal = ScriptedTribunal(rosters: [.cheap: roster, .mid: roster, .frontier: roster])

    @Test func anAdminSetsABudgetItsAdminsAreToldAt80PercentAndPast100ModelCommandsAreRefused() async throws {
        try await RelayHarness.with(tribunal: Self.tribunal) { relay in
            let month = UsageMonth(containing: Date()).name
            #expect(await relay.send("/admin budget").body.hasPrefix("This team has no model budget: nothing stops its spending."))
            let refused = await relay.send("/admin budget 5", user: "bob")
            #expect(refused.kind == .error && refused.body.hasPrefix("Only this team's admins can change the team's model budget."))
            #expect(await relay.send("/admin budget $0.0019").body.hasPrefix("This team's model budget is now $0.0019 a month."))

            // Three runs: $0.0012, under 80 %; nobody is told.
            for _ in 0..<3 { #expect(await relay.send("/translate fr Hello", user: "bob").notes.allSatisfy { !$0.contains("⚠️") }) }
            // The fourth takes it to $0.0016: 84 %, said once, to the team's admins.
            let fourth = await relay.send("/translate fr Hello", user: "bob")
            #expect(fourth.kind == .result)
            let notice = try #require(fourth.notes.last)
            #expect(notice.hasPrefix("⚠️ For this team's admins: 84 % of the model budget for \(month) is spent ($0.0016 of $0.0019)."), "\(notice)")
            // The fifth's hold does not fit: refused, with why and what to do; no model asked.
            let asked = await Self.tribunal.recorder.quickRequests.count
            let fifth = await relay.send("/fix teh", user: "bob")
            #expect(fifth.kind == .error)
            #expect(fifth.body.hasPrefix("This command could take this team past its model budget for \(month): $0.0016 of $0.0019 spent"), "\(fifth.body)")
            #expect(fifth.body.contains("`/admin budget 1`"))
            #expect(await Self.tribunal.recorder.quickRequests.count == asked)
            // Commands that ask no model still work; another team's budget is its own.
            #expect(await relay.send("/settings", user: "bob").kind == .info)
            let elsewhere = Event(platform: "test", team: "other", channel: "c", user: "bob", text: "/fix teh")
            #expect(await relay.relay.handle(elsewhere)?.kind == .result)

            let shown = await relay.send("/admin budget", user: "bob")
            #expect(shown.body.contains("This team's model budget: $0.0019 a month (its own)."))
            #expect(shown.body.contains("\(month): $0.0016 spent (84 %)."))
            #expect(await relay.send("/usage team", user: "bob").body.contains("Budget: $0.0016 of $0.0019 (84 %)"))

            // Raised: the next run goes; past 80 % again it is not told twice this month.
            #expect(await relay.send("/admin budget 0.0025").kind == .info)
            let raised = await relay.send("/fix teh", user: "bob")
            #expect(raised.kind == .result && raised.notes.allSatisfy { !$0.contains("⚠️") })
        }
    }

    @Test func theOperatorsDefaultHoldsForEveryTeamUntilOneSetsItsOwn() async throws {
        var configuration = RelayConfiguration()
        configuration.monthlyBudget = 0.0005
        try await RelayHarness.with(tribunal: Self.tribunal, configuration: configuration) { relay in
            #expect(await relay.send("/admin budget").body.contains("This team's model budget: $0.0005 a month (the operator's default)."))
            #expect(await relay.send("/fix teh").kind == .error, "a hold of $0.00066 does not fit in $0.0005")
            #expect(await relay.send("/admin budget 1").kind == .info)
            #expect(await relay.send("/fix teh").kind == .result)
            #expect(await relay.send("/admin budget reset").body == "This team's own budget is gone: it has the operator's default, $0.0005 a month.")
            // $0.0004 spent of $0.0005: under it, but a hold of $0.00066 does not fit.
            let refused = await relay.send("/fix teh")
            #expect(refused.kind == .error && refused.body.hasPrefix("This command could take this team past its model budget"), "\(refused.body)")
            // Spent past it: reached, said so.
            #expect(await relay.send("/admin budget 0.0004").kind == .info)
            let reached = await relay.send("/fix teh")
            #expect(reached.kind == .error && reached.body.hasPrefix("This team has reached its model budget for "), "\(reached.body)")
        }
    }

    @Test func aBudgetThatIsNotAPositiveNumberIsRefusedSayingWhatIs() async throws {
        try await RelayHarness.with(tribunal: Self.tribunal) { relay in
            for line in ["/admin budget -3", "/admin budget 0", "/admin budget twenty", "/admin budget 20 euros", "/admin budget nan"] {
                let reply = await relay.send(line)
                #expect(reply.kind == .error, "\(line)")
                #expect(reply.body.hasPrefix("A budget is a positive number of US dollars a month"), "\(line): \(reply.body)")
            }
        }
    }
}
