import Foundation
import Hummingbird
import HummingbirdTesting
import RelayConsole
import RelayCore
import RelayPipeline
import RelayStore
import RelayTestSupport
import Testing

/// Issue 45, point 2 (the council page): each model's record on marked claims week by week, and
/// the reliability diagram of stated probability against marked truth, with each bin's count
/// and the ECE — computed here by hand from the same claims.
@Suite("Console: the council")
struct ConsoleCouncilTests {
    static func marked(_ stated: Double, verdict: Verdict, truth: Verdict, at date: Date) -> LedgerEntry {
        var entry = LedgerEntry(
            team: "T1", user: "bob", channel: "c", origin: .tribunal, claim: "claim \(stated)", answer: nil, verdict: verdict, score: stated,
            scoreMeaning: .probabilityRight, answered: 2, asked: 2,
            judges: [LedgerJudge(model: "gpt-mini", verdict: .true), LedgerJudge(model: "claude", verdict: .false)], backend: "council",
            createdAt: date)
        entry.mark = LedgerMark(verdict: truth, user: "ada", markedAt: date)
        return entry
    }

    @Test func theReliabilityDiagramAndTheRecordsHoldWhatTheMarksSay() async throws {
        let harness = ConsoleHarness()
        let now = harness.clock.now
        let week = 7 * 86_400.0
        for entry in [
            Self.marked(0.95, verdict: .true, truth: .true, at: now),
            Self.marked(0.95, verdict: .true, truth: .false, at: now),
            Self.marked(0.65, verdict: .false, truth: .false, at: now.addingTimeInterval(-week)),
            Self.marked(0.15, verdict: .true, truth: .false, at: now.addingTimeInterval(-week)),
        ] {
            let id = try await harness.store.recordConsensus(entry)
            _ = try await harness.store.markLedger(team: "T1", id: id, mark: try #require(entry.mark))
        }
        try await harness.test { client in
            let cookie = try await ConsoleOverviewTests.signedIn(harness, client)
            let response = try await client.execute(uri: "/console/test/T1/council", method: .get, headers: [.cookie: cookie])
            #expect(response.status == .ok)
            let page = response.text
            #expect(page.contains("this relay keeps no record of them"), "the scripted backend is no council")
            // ECE: 2/4 × |0.5 − 0.95| + 1/4 × |1 − 0.65| + 1/4 × |0 − 0.15| = 0.35.
            #expect(page.contains(#"<strong id="ece">0.350</strong>"#), "\(page)")
            #expect(page.contains(#"data-bin="0.9" data-count="2" data-stated="0.95" data-right="0.5""#))
            #expect(page.contains(#"data-bin="0.6" data-count="1" data-stated="0.65" data-right="1""#))
            #expect(page.contains(#"data-bin="0.1" data-count="1" data-stated="0.15" data-right="0""#))
            #expect(page.contains("<tr><td>90–100 %</td><td>2</td><td>95 %</td><td>50 %</td></tr>"))
            // gpt-mini says true every time: right once of the two claims a week ago (false, false),
            // then once more of the two this week: 1/4 to this week.
            let this = OverviewPageLabel.day(RunCount.day(of: now).addingTimeInterval(-Double(Self.weekday(now)) * 86_400))
            #expect(page.contains(#"data-label="\#(this)" data-series="gpt-mini" data-value="0.25" data-count="4""#), "\(page)")
            #expect(page.contains(#"data-label="\#(this)" data-series="claude" data-value="0.75" data-count="4""#))
        }
    }

    static func weekday(_ date: Date) -> Int {
        let day = Int((date.timeIntervalSince1970 / 86_400).rounded(.down))
        return ((day + 3) % 7 + 7) % 7
    }
}
