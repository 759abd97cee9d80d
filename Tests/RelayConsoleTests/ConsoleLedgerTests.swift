import Foundation
import Hummingbird
import HummingbirdTesting
import RelayConsole
import RelayCore
import RelayPipeline
import RelayStore
import RelayTestSupport
import Testing

/// Issue 45, point 2 (the ledger page) and point 4: search with the store's full-text index,
/// each claim with its verdict, score and votes; marking with a CSRF token, as `/ledger mark`
/// does; another team's entries are neither shown nor marked.
@Suite("Console: the ledger")
struct ConsoleLedgerTests {
    static func entry(_ claim: String, team: String = "T1", verdict: Verdict = .true, at date: Date) -> LedgerEntry {
        LedgerEntry(
            team: team, user: "bob", channel: "c", origin: .tribunal, claim: claim, answer: "because", verdict: verdict, score: 0.82,
            scoreMeaning: .probabilityRight, answered: 2, asked: 3,
            judges: [
                LedgerJudge(model: "gpt-mini", verdict: .true, confidence: 0.9), LedgerJudge(model: "claude", verdict: .false, confidence: 0.6),
                LedgerJudge(model: "llama", error: "timed out"),
            ], backend: "council", createdAt: date)
    }

    @Test func searchShowsEachClaimWithItsVotesAndAMarkIsRecordedOnce() async throws {
        let harness = ConsoleHarness()
        let now = harness.clock.now
        let moon = try await harness.store.recordConsensus(Self.entry("The Moon is made of cheese", verdict: .false, at: now))
        _ = try await harness.store.recordConsensus(Self.entry("Water boils at 100 degrees at sea level", at: now))
        let elsewhere = try await harness.store.recordConsensus(Self.entry("The Moon has no atmosphere", team: "T2", at: now))
        try await harness.test { client in
            let cookie = try await ConsoleOverviewTests.signedIn(harness, client)
            let all = try await client.execute(uri: "/console/test/T1/ledger", method: .get, headers: [.cookie: cookie]).text
            #expect(all.contains("The newest 2 fact-checks."))
            let found = try await client.execute(uri: "/console/test/T1/ledger?q=moon", method: .get, headers: [.cookie: cookie])
            #expect(found.status == .ok)
            let page = found.text
            #expect(page.contains("1 fact-check whose claim holds every word searched."), "\(page)")
            #expect(page.contains("The Moon is made of cheese") && !page.contains("Water boils") && !page.contains("no atmosphere"))
            #expect(page.contains(#"id="entry-\#(moon)" data-id="\#(moon)" data-verdict="false""#))
            #expect(page.contains("82 % likely right") && page.contains("2/3 models"))
            #expect(page.contains("<li>gpt-mini: true 90 %</li><li>claude: false 60 %</li><li>llama: failed</li>"))
            #expect(page.contains("Not marked."))

            let csrf = try #require(page.firstMatch(of: /name="csrf" value="([A-Za-z0-9_-]+)"/)?.1)
            let marked = try await client.execute(
                uri: "/console/test/T1/ledger/mark", method: .post, headers: [.cookie: cookie, .contentType: "application/x-www-form-urlencoded"],
                body: form(["csrf": String(csrf), "id": String(moon), "verdict": "false", "q": "moon"]))
            #expect(marked.status == .seeOther)
            #expect(marked.headers[.location] == "/console/test/T1/ledger?marked=\(moon)&q=moon")
            let stored = try #require(try await harness.store.ledgerEntry(team: "T1", id: moon))
            #expect(stored.mark?.verdict == .false && stored.mark?.user == "ada")
            let after = try await client.execute(uri: "/console/test/T1/ledger?marked=\(moon)&q=moon", method: .get, headers: [.cookie: cookie]).text
            #expect(after.contains("Marked fact-check #\(moon) as false."))
            #expect(after.contains("Marked false, by ada, 2026-12-05."))

            // Without the session's token: refused, and nothing recorded.
            let forged = try await client.execute(
                uri: "/console/test/T1/ledger/mark", method: .post, headers: [.cookie: cookie, .contentType: "application/x-www-form-urlencoded"],
                body: form(["csrf": "forged", "id": String(moon), "verdict": "true"]))
            #expect(forged.status == .forbidden)
            #expect(try await harness.store.ledgerEntry(team: "T1", id: moon)?.mark?.verdict == .false)
            // Another team's entry, by its id: not this team's, so nothing to mark.
            let other = try await client.execute(
                uri: "/console/test/T1/ledger/mark", method: .post, headers: [.cookie: cookie, .contentType: "application/x-www-form-urlencoded"],
                body: form(["csrf": String(csrf), "id": String(elsewhere), "verdict": "true"]))
            #expect(other.status == .badRequest)
            #expect(try await harness.store.ledgerEntry(team: "T2", id: elsewhere)?.mark == nil)
            // Another team's ledger page: refused.
            #expect(try await client.execute(uri: "/console/test/T2/ledger", method: .get, headers: [.cookie: cookie]).status == .forbidden)
        }
    }

    @Test func aHostileClaimShowsAsText() async throws {
        let harness = ConsoleHarness()
        _ = try await harness.store.recordConsensus(
            Self.entry("<script>alert(1)</script> [x](javascript:alert(2)) \u{600}<img src=x onerror=alert(3)>", at: harness.clock.now))
        try await harness.test { client in
            let cookie = try await ConsoleOverviewTests.signedIn(harness, client)
            let page = try await client.execute(uri: "/console/test/T1/ledger", method: .get, headers: [.cookie: cookie]).text
            #expect(!page.contains("<script") && !page.contains("<img"))
            #expect(!page.contains("href=\"javascript"))
            #expect(page.contains("&lt;script&gt;alert(1)&lt;/script&gt; [x](javascript:alert(2))"))
        }
    }
}
