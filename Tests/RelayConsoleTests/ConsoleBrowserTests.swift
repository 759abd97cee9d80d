import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import RelayConsole
import RelayCore
import RelayPipeline
import RelayStore
import RelayTestSupport
import RelayTestTags
import Testing

/// Issue 45, point 5: the console in a real browser — headless Chromium (Debian's chromium and
/// chromium-driver) driven by Selenium (PyPI, in the Python peers' environment): sign in by
/// link, read the overview's charts (their SVG's data points checked against the store), search
/// the ledger, mark a claim, save a chain with a mistake and then without, read the calibration
/// the mark makes, be refused another team's page and a used link. Screenshots of each page go to `RHEA_CONSOLE_SCREENSHOTS`
/// (`scripts/console-screenshots` sets it for docs/console.md), else `.build/console-screenshots`.
@Suite("Console: in a real browser", .tags(.peers))
struct ConsoleBrowserTests {
    static var screenshots: String {
        ProcessInfo.processInfo.environment["RHEA_CONSOLE_SCREENSHOTS"]
            ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/console-screenshots").path
    }

    @Test func aPersonSignsInReadsSearchesMarksEditsAndIsRefusedElsewhere() async throws {
        for program in ["/usr/bin/chromium", "/usr/bin/chromedriver"] {
            try #require(
                FileManager.default.isExecutableFile(atPath: program),
                "\(program) is missing: `apt-get install -y --no-install-recommends chromium chromium-driver` (.ci/run does)")
        }
        let harness = ConsoleHarness(settings: ConsoleSettings(enabled: true, publicURL: "http://127.0.0.1"), monthlyBudget: 5)
        let now = harness.clock.now
        let day = 86_400.0
        for (command, offset, succeeded) in [("translate", 0.0, true), ("translate", 1, true), ("fix", 1, false), ("tribunal", 3, true)] {
            try await harness.store.recordRun(ConsoleOverviewTests.run(command, succeeded: succeeded, at: now.addingTimeInterval(-offset * day)))
        }
        _ = try await harness.store.record(ConsoleOverviewTests.calls([("gpt-mini", 0.5), ("claude", 1.25)], at: now))
        _ = try await harness.store.record(ConsoleOverviewTests.calls([("gpt-mini", 0.75)], at: now.addingTimeInterval(-2 * day)))
        let moon = try await harness.store.recordConsensus(ConsoleLedgerTests.entry("The Moon is made of cheese", verdict: .false, at: now))
        _ = try await harness.store.recordConsensus(ConsoleLedgerTests.entry("Water boils at 100 degrees", at: now))
        let reply = await harness.ask()
        let link = try #require(reply.body.firstMatch(of: /http:\/\/127\.0\.0\.1(\/console\/signin\?t=[A-Za-z0-9._-]+)/)?.1)

        let router = Router()
        ConsoleRoutes(relay: harness.relay, tokens: harness.tokens, clock: harness.clock, logger: Logger(label: "console-browser")).add(to: router)
        try await Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0))).test(.live) { client in
            let port = try #require(client.port)
            let (status, output) = try await PythonPeers.run(
                script: ConsoleBrowserScript.source, arguments: ["http://127.0.0.1:\(port)", String(link), Self.screenshots, "moon"],
                timeout: .seconds(120))
            #expect(status == 0, "\(output)")
            let line = try #require(output.split(separator: "\n").last { $0.hasPrefix("{") }, "\(output)")
            let seen = try #require(JSONValue.parse(Array(line.utf8)), "\(line)")

            #expect(seen["signInPage"]?.stringValue?.contains("Sign in as Ada to the console of T1 on test.") == true, "\(seen)")
            #expect(seen["afterSignIn"]?["path"] == "/console/test/T1" && seen["afterSignIn"]?["heading"] == "Overview")
            // The charts hold what the store holds, day by day.
            let counts = try await harness.store.runCounts(team: "T1", from: now.addingTimeInterval(-30 * day), to: now.addingTimeInterval(day))
            var expected: [String: Double] = [:]
            for point in counts { expected["\(OverviewPageLabel.day(point.day)) \(point.command)", default: 0] += Double(point.count) }
            #expect(Self.points(seen["commands"]) == expected)
            #expect(Self.points(seen["cost"]) == ["2026-12-05 claude": 1.25, "2026-12-05 gpt-mini": 0.5, "2026-12-03 gpt-mini": 0.75])
            #expect(seen["gauge"]?["spent"]?.doubleValue == 2.5 && seen["gauge"]?["limit"]?.doubleValue == 5)

            #expect(seen["ledger"]?.arrayValue?.map { $0["claim"]?.stringValue ?? "" } == ["The Moon is made of cheese"])
            #expect(seen["marked"]?["id"]?.stringValue == String(moon))
            #expect(seen["marked"]?["notice"]?.stringValue?.hasPrefix("Marked fact-check #\(moon) as false.") == true, "\(seen)")
            #expect(try await harness.store.ledgerEntry(team: "T1", id: moon)?.mark?.verdict == .false)

            #expect(seen["chainError"]?["error"]?.stringValue?.contains("Chain polish not saved.") == true, "\(seen)")
            #expect(seen["chainError"]?["kept"] == "input > gramar > output")
            #expect(seen["chainSaved"]?["listed"] == "input > grammar > rewrite:formal > output")
            #expect(try await harness.store.chain(team: "T1", name: "polish")?.source == "input > grammar > rewrite:formal > output")

            // The claim marked above, stated 82 % likely right and right: one claim in the 80–90 % bin.
            #expect(seen["ece"] == "0.180")
            #expect(seen["bins"] == [["bin": "0.8", "count": "1"]])

            #expect(seen["otherTeam"]?["heading"] == "This page is another team's")
            #expect(seen["reusedLink"]?["heading"] == "This sign-in link was used already")
            #expect(seen["depth"] == "0")
            for page in ["signin", "overview", "ledger", "chains", "council", "connections", "refused"] {
                #expect(FileManager.default.fileExists(atPath: Self.screenshots + "/console-\(page).png"), "\(page)")
            }
        }
    }

    /// (day series) → value, from the browser's report of a chart's marks.
    static func points(_ value: JSONValue?) -> [String: Double] {
        var points: [String: Double] = [:]
        for point in value?.arrayValue ?? [] {
            points["\(point["day"]?.stringValue ?? "") \(point["series"]?.stringValue ?? "")"] = point["value"]?.doubleValue
        }
        return points
    }
}

/// Days as the console labels them (UTC, `YYYY-MM-DD`).
enum OverviewPageLabel {
    static func day(_ date: Date) -> String {
        ISO8601DateFormatter.string(from: date, timeZone: TimeZone(identifier: "UTC")!, formatOptions: [.withFullDate])
    }
}
