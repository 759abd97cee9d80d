import Foundation
import RelayCore
import RelayTestSupport
import RelayTestTags
import Testing

/// Issue 44, points 5 and 6: `rhea-relay usage export` writes a team's model calls of a month as
/// JSON Lines or CSV, from the store the runs wrote; a bad month or price is refused, naming it.
@Suite("rhea-relay usage export", .serialized, .tags(.peers))
struct UsageExportTests {
    static func council(_ url: String) -> [String: String] {
        [
            "TRIBUNAL_BACKEND": "council", "COUNCIL_MODELS": "mini", "COUNCIL_MINI_BASE_URL": url, "COUNCIL_MINI_MODEL": "fake-model",
            "COUNCIL_MINI_TIER": "cheap", "COUNCIL_MINI_PRICE_IN": "0.15", "COUNCIL_MINI_PRICE_OUT": "0.60",
        ]
    }

    @Test func theMonthsCallsComeOutAsJSONLinesAndAsCSV() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        try await withFakeOpenAIServer(persona: .prose("Bonjour tout le monde")) { fake in
            let environment = Self.council(fake.url)
            let ran = try await cli.run(["run", "--team", "T9", "--user", "ann", "/translate fr Hello everyone"], environment: environment)
            #expect(ran.status == 0, "\(ran.stderr)")
            _ = try await cli.run(["run", "--team", "other", "/fix teh"], environment: environment)

            let month = UsageMonth(containing: Date()).description
            let lines = try await cli.run(["usage", "export", "--team", "T9", "--month", month], environment: environment)
            #expect(lines.status == 0, "\(lines.stderr)")
            let rows = lines.stdout.split(separator: "\n").map { try? JSONDecoder().decode(JSONValue.self, from: Data($0.utf8)) }
            #expect(rows.count == 1, "only team T9's one call: \(lines.stdout)")
            let row = try #require(rows.first ?? nil)
            #expect(row["team"]?.stringValue == "T9" && row["user"]?.stringValue == "ann" && row["command"]?.stringValue == "translate")
            #expect(row["model"]?.stringValue == "mini" && row["estimated"] == .bool(false))
            let tokensIn = try #require(row["tokens_in"]?.intValue)
            let tokensOut = try #require(row["tokens_out"]?.intValue)
            #expect(tokensIn > 0 && tokensOut == "Bonjour tout le monde".count / 4)
            let cost = try #require(row["cost_usd"]?.doubleValue)
            #expect(abs(cost - (Double(tokensIn) * 0.15 + Double(tokensOut) * 0.60) / 1_000_000) < 1e-12)
            #expect(row["at"]?.stringValue?.hasPrefix(month) == true)

            let csv = try await cli.run(["usage", "export", "--team", "T9", "--csv"], environment: environment)
            #expect(csv.status == 0, "\(csv.stderr)")
            let table = csv.stdout.split(separator: "\n").map(String.init)
            #expect(table.first == "at,platform,team,user,command,run,model,tokens_in,tokens_out,estimated,cost_usd,elapsed_ms")
            #expect(
                table.count == 2 && table[1].contains(",terminal,T9,ann,translate,") && table[1].contains(",mini,\(tokensIn),\(tokensOut),false,"), "\(table)")

            // Another month holds nothing.
            let empty = try await cli.run(["usage", "export", "--team", "T9", "--month", "2001-01"], environment: environment)
            #expect(empty.status == 0 && empty.stdout.isEmpty, "\(empty.stdout)")
        }
    }

    @Test func aBadMonthOrPriceIsRefusedNamingIt() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let month = try await cli.run(["usage", "export", "--team", "T9", "--month", "December"], environment: Self.council("http://127.0.0.1:9/v1"))
        #expect(month.status == 64 && month.stderr.contains("--month must be a month as YYYY-MM (for example 2026-12), got `December`."), "\(month.stderr)")
        var environment = Self.council("http://127.0.0.1:9/v1")
        environment["COUNCIL_MINI_PRICE_OUT"] = "-0.6"
        let price = try await cli.run(["run", "/fix teh"], environment: environment)
        #expect(price.status == 2 && price.stderr.contains("COUNCIL_MINI_PRICE_OUT"), "\(price.stderr)")
    }
}
