import Foundation
import RelayCore
import RelayPipeline
import RelayStore
import RelayTestSupport
import Testing

/// Issue 44, point 3: each run's model calls kept with its end, `/usage` for me and my team,
/// and `/settings receipts on`. The scripted backend reports 100 + 20 tokens at $0.0004 for
/// each quick answer, and 50 + 10 estimated tokens without a price for each judge.
@Suite("Relay: usage (/usage, receipts)")
struct UsageCommandTests {
    @Test func everyModelCallIsKeptWithTheRunAndUsageAddsThemUpByCommandAndModel() async throws {
        try await RelayHarness.with { relay in
            _ = await relay.send("/translate fr Good morning", user: "bob")
            _ = await relay.send("/fix its fine", user: "bob")
            _ = await relay.send("/tribunal --k 2 The sky is green", user: "bob")
            _ = await relay.send("/translate de Hello", user: "carol")

            let now = Date()
            let month = UsageMonth(containing: now)
            let calls = try await relay.store.modelCalls(UsageQuery(platform: "test", team: "t", from: month.start, to: month.end))
            #expect(calls.count == 5, "1 + 1 + 2 judges + 1: \(calls.map(\.model))")
            #expect(Set(calls.map(\.command)) == ["translate", "fix", "tribunal"])
            #expect(calls.filter { $0.command == "tribunal" }.allSatisfy { $0.estimated && $0.cost == nil && $0.tokensIn == 50 })
            let translate = try #require(calls.first { $0.command == "translate" && $0.user == "bob" })
            #expect(translate.tokensIn == 100 && translate.tokensOut == 20 && translate.cost == 0.0004 && !translate.estimated)
            // One run, one id: the tribunal's two judges share theirs.
            #expect(Set(calls.filter { $0.command == "tribunal" }.map(\.run)).count == 1)

            let mine = await relay.send("/usage", user: "bob")
            #expect(mine.kind == .info && mine.isPrivate)
            let lines = mine.body.components(separatedBy: "\n")
            #expect(lines.first == "Your usage in \(month.name) (UTC): 3 commands · ~360 tokens · $0.0008.")
            #expect(lines.contains("• translate: 1 run · 120 tokens · $0.0004"))
            #expect(lines.contains("• tribunal: 1 run · ~120 tokens · no price"))
            #expect(lines.contains("• scripted/model-1: 1 call · ~60 tokens (in 50, out 10) · no price"))
            #expect(mine.body.contains("~ marks an estimate"))
            #expect(mine.body.contains("`COUNCIL_<MODEL>_PRICE_IN`"))

            let team = await relay.send("/usage team", user: "carol")
            #expect(team.body.hasPrefix("The team's usage in \(month.name) (UTC): 4 commands · ~480 tokens · $0.0012."))
            #expect(team.body.contains("• translate: 2 runs · 240 tokens · $0.0008"))
            // Commands that ask no model cost nothing and are not counted.
            _ = await relay.send("/settings", user: "dave")
            #expect(await relay.send("/usage", user: "dave").body == "Your commands asked no model in \(month.name) (UTC).")
        }
    }

    @Test func aMonthIsChosenByYearAndMonthAndTheStoreReadsOnlyThatOne() async throws {
        try await RelayHarness.with { relay in
            _ = await relay.send("/translate fr Good morning")
            let past = try #require(UsageMonth("2001-02"))
            #expect(await relay.send("/usage team 2001-02").body == "The team's commands asked no model in February 2001 (UTC).")
            let calls = try await relay.store.modelCalls(UsageQuery(platform: "test", team: "t", from: past.start, to: past.end))
            #expect(calls.isEmpty)
            // Another team's and another platform's calls are not this team's.
            #expect(try await relay.store.modelCalls(UsageQuery(platform: "slack", team: "t", from: .distantPast, to: .distantFuture)).isEmpty)
            #expect(try await relay.store.modelCalls(UsageQuery(platform: nil, team: "t", from: .distantPast, to: .distantFuture)).count == 1)
        }
    }

    @Test func badUsageLinesSayWhatIsAccepted() async throws {
        try await RelayHarness.with { relay in
            for line in ["/usage everyone", "/usage 2026-13", "/usage team team", "/usage 26-12"] {
                let reply = await relay.send(line)
                #expect(reply.kind == .error, "\(line)")
                #expect(reply.body.contains("Usage: `/usage` (yours this month), `/usage team`, `/usage team 2026-11`"), "\(line): \(reply.body)")
            }
        }
    }

    @Test func receiptsAddTheRunsTokensAndCostToTheFooterOfAResult() async throws {
        try await RelayHarness.with { relay in
            #expect(await relay.send("/translate fr Hi", user: "bob").notes.allSatisfy { !$0.contains("tokens") })
            #expect(await relay.send("/settings receipts on", user: "bob").body == "Your receipts are now on.")
            let translated = await relay.send("/translate fr Hi", user: "bob")
            #expect(translated.notes.last == "120 tokens · $0.0004")
            // Estimated counts say so; calls without a price show no cost.
            let judged = await relay.send("/tribunal --k 3 Water is wet", user: "bob")
            #expect(judged.notes.last == "~180 tokens")
            // A reply that asked no model gets none; the setting shows in /settings.
            let settings = await relay.send("/settings", user: "bob")
            #expect(settings.notes.isEmpty && settings.body.contains("receipts: on — from you"))
            // The channel's setting, for everyone in it, set by an admin.
            #expect(await relay.send("/settings channel receipts on").body == "This channel's receipts are now on.")
            #expect(await relay.send("/fix teh", user: "carol").notes.last == "120 tokens · $0.0004")
            #expect(await relay.send("/settings receipts off", user: "carol").kind == .info)
            #expect(await relay.send("/fix teh", user: "carol").notes.allSatisfy { !$0.contains("tokens") })
            let bad = await relay.send("/settings receipts maybe", user: "carol")
            #expect(bad.kind == .error && bad.body == "Unknown receipts setting `maybe`. Choose on (each reply's footer shows its tokens and cost), off.")
        }
    }

    @Test func dollarsAndTokensReadAsPeopleWriteThem() {
        #expect(UsageFormat.dollars(0) == "$0")
        #expect(UsageFormat.dollars(0.0008) == "$0.0008")
        #expect(UsageFormat.dollars(0.0000618) == "$0.000062")
        #expect(UsageFormat.dollars(0.042) == "$0.042")
        #expect(UsageFormat.dollars(1.5) == "$1.50")
        #expect(UsageFormat.dollars(1204.5) == "$1,204.50")
        #expect(UsageFormat.tokens(1) == "1 token")
        #expect(UsageFormat.tokens(12_480) == "12,480 tokens")
        #expect(TokenEstimate.text("") == 0 && TokenEstimate.text("abcd") == 1 && TokenEstimate.text("abcde") == 2)
        #expect(UsageMonth("2026-12")?.name == "December 2026" && UsageMonth("2026-12")?.end == UsageMonth("2027-01")?.start)
    }
}
