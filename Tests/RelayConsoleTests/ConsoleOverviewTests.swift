import Foundation
import Hummingbird
import HummingbirdTesting
import RelayConsole
import RelayCore
import RelayPipeline
import RelayStore
import RelayTestSupport
import Testing

/// Issue 45, point 2 (the overview) and point 4 (everything a person or a model wrote is shown as
/// text): the charts' SVG carries each data point, checked against what the store holds.
@Suite("Console: the overview")
struct ConsoleOverviewTests {
    static func signedIn(_ harness: ConsoleHarness, _ client: any TestClientProtocol) async throws -> String {
        let path = try #require(ConsoleHarness.path(of: await harness.ask()))
        let signIn = try await client.execute(
            uri: "/console/signin", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
            body: form(["t": String(path.dropFirst("/console/signin?t=".count))]))
        return cookieHeader(try #require(signIn.sessionCookie))
    }

    static func run(_ command: String, team: String = "T1", succeeded: Bool = true, failure: String? = nil, at date: Date) -> HistoryEntry {
        HistoryEntry(
            team: team, user: "bob", channel: "c", command: command, commandLine: "/\(command) x", resultText: "r", succeeded: succeeded, elapsed: 1,
            createdAt: date, failure: succeeded ? nil : failure ?? "refused")
    }

    static func calls(_ models: [(String, Double?)], team: String = "T1", platform: String = "test", at date: Date) -> RunRecord {
        RunRecord(
            usage: RunUsage(
                platform: platform, team: team, user: "bob", command: "translate", run: UUID().uuidString, at: date,
                calls: models.map { ModelUsage(model: $0.0, tokensIn: 100, tokensOut: 50, estimated: false, cost: $0.1, elapsed: .seconds(1)) }))
    }

    /// Every bar segment of chart `id`: (day, series) → value.
    static func points(in html: String, chart id: String) throws -> [String: Double] {
        let start = try #require(html.range(of: "<svg id=\"\(id)\""))
        let end = try #require(html[start.upperBound...].range(of: "</svg>"))
        var points: [String: Double] = [:]
        for match in html[start.lowerBound..<end.upperBound].matches(of: /data-day="([^"]+)" data-series="([^"]+)" data-value="([^"]+)"/) {
            points["\(match.1) \(match.2)"] = Double(match.3)
        }
        return points
    }

    @Test func theChartsShowEachDaysRunsAndCostsAsTheStoreHasThem() async throws {
        let harness = ConsoleHarness(monthlyBudget: 2)
        let now = harness.clock.now
        let day = 86_400.0
        try await harness.store.recordRun(Self.run("translate", at: now))
        try await harness.store.recordRun(Self.run("translate", at: now.addingTimeInterval(-60)))
        try await harness.store.recordRun(Self.run("fix", succeeded: false, failure: "timed_out", at: now.addingTimeInterval(-day)))
        try await harness.store.recordRun(Self.run("fix", at: now.addingTimeInterval(-29 * day)))
        // Outside the 30 days, and another team's: not shown.
        try await harness.store.recordRun(Self.run("fix", at: now.addingTimeInterval(-31 * day)))
        try await harness.store.recordRun(Self.run("fix", team: "T2", at: now))
        _ = try await harness.store.record(Self.calls([("gpt-mini", 0.25), ("claude", 0.5)], at: now))
        _ = try await harness.store.record(Self.calls([("gpt-mini", 0.125)], at: now.addingTimeInterval(-2 * day)))
        _ = try await harness.store.record(Self.calls([("gpt-mini", 9)], team: "T2", at: now))

        try await harness.test { client in
            let cookie = try await Self.signedIn(harness, client)
            let page = try await client.execute(uri: "/console/test/T1", method: .get, headers: [.cookie: cookie]).text
            let today = "2026-12-05"
            #expect(
                try Self.points(in: page, chart: "commands-chart") == [
                    "\(today) translate": 2, "2026-12-04 fix": 1, "2026-11-06 fix": 1,
                ])
            #expect(try Self.points(in: page, chart: "cost-chart") == ["\(today) claude": 0.5, "\(today) gpt-mini": 0.25, "2026-12-03 gpt-mini": 0.125])
            #expect(page.contains("4 runs."))
            #expect(page.contains("$0.875 in all"))
            // The budget: $0.875 of $2 spent this month.
            #expect(page.contains(#"id="budget-gauge""#) && page.contains(#"data-spent="0.875""#) && page.contains(#"data-limit="2""#))
            #expect(page.contains("$0.875 of $2.00 spent (44 %)"))
            // Failures by why: fix's one failure, the models' time out.
            #expect(page.contains("<tr><td>the models did not answer in time</td><td>1</td><td>fix</td></tr>"), "\(page)")
        }
    }

    @Test func whatAPersonOrAModelWroteShowsAsTextNeverAsMarkup() async throws {
        let harness = ConsoleHarness()
        let hostile = [
            "<script>alert(1)</script>", "\u{600}<script>alert(2)</script>", "\"\u{301} onmouseover=alert(3) x=\"", "<img src=x onerror=alert(4)>",
            "javascript:alert(5)", "'><svg onload=alert(6)>",
        ]
        for (index, name) in hostile.enumerated() {
            // Failed, so that each is shown in the failures table (a template's value) too.
            try await harness.store.recordRun(Self.run(name, succeeded: false, at: harness.clock.now.addingTimeInterval(-Double(index))))
        }
        _ = try await harness.store.record(Self.calls(hostile.map { ($0, 0.01) }, at: harness.clock.now))
        try await harness.test { client in
            let cookie = try await Self.signedIn(harness, client)
            let page = try await client.execute(uri: "/console/test/T1", method: .get, headers: [.cookie: cookie]).text
            #expect(!page.contains("<script"), "a script tag")
            #expect(!page.contains("<img"), "an img tag")
            #expect(!page.contains("<svg onload"))
            // (Named first: the `#expect` macro cannot quote a literal holding a combining mark.)
            let quoteWithMark = "\"\u{301}"
            let tagAfterPrepend = "\u{600}<"
            let escapedAfterPrepend = "\u{600}&lt;script&gt;alert(2)"
            let escapedQuoteWithMark = "&quot;\u{301} onmouseover=alert(3)"
            #expect(!page.contains(quoteWithMark), "an attribute's quote left raw beside a combining mark")
            #expect(!page.contains(tagAfterPrepend), "a tag left raw after a Prepend scalar")
            #expect(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
            #expect(page.contains(escapedAfterPrepend))
            #expect(page.contains(escapedQuoteWithMark))
            #expect(!page.contains("href=\"javascript"))
            // And the only tags are the console's own.
            let tags = Set(page.matches(of: /<([a-zA-Z][a-zA-Z0-9]*)/).map { String($0.1).lowercased() })
            #expect(
                tags.isSubset(of: [
                    "html", "head", "meta", "title", "link", "body", "header", "p", "nav", "a", "form", "input", "button", "main", "h1", "h2", "section",
                    "svg", "line", "text", "rect", "ul", "li", "span", "table", "thead", "tbody", "tr", "th", "td",
                ]), "\(tags)")
        }
    }
}
