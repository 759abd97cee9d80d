import Foundation
import RelayCore
import RelayPipeline

/// The council (docs/console.md): what the council has learned of each model (`/council`'s
/// figures), how each model's record on the team's marked claims moved week by week, and how well
/// the stated probabilities held up against the marks (the reliability diagram and its ECE).
struct CouncilPage {
    /// Weeks shown in the record over time, this one last.
    static let weeks = 12
    /// The newest marked fact-checks read for the records and the calibration: about a hundred
    /// a bin of the reliability diagram, each read with its votes (`console-bench`: 5 000 took
    /// 170 ms a page with their votes decoded as JSON).
    static let ledgerRead = 1_000

    let relay: Relay
    let grant: ConsoleGrant
    let now: Date

    func body() async throws -> TrustedHTML {
        let report = await relay.tribunal.councilReport()
        // The newest marked fact-checks, a bounded number: a page holds no more than that in
        // memory however long the team's ledger grows.
        let marked = try await relay.store.markedLedger(team: grant.team, limit: Self.ledgerRead)

        // Each model's record on marked claims, cumulative to the end of each week.
        let thisWeek = RunCount.day(of: now).addingTimeInterval(-Double(Self.weekday(now)) * 86_400)
        let starts = (0..<Self.weeks).reversed().map { thisWeek.addingTimeInterval(-Double($0) * 7 * 86_400) }
        let labels = starts.map(ConsoleDates.day)
        var record: [String: [String: (value: Double, count: Int)]] = [:]
        var models = Set<String>()
        for (index, start) in starts.enumerated() {
            let end = start.addingTimeInterval(7 * 86_400)
            var tally: [String: (right: Int, count: Int)] = [:]
            for entry in marked where entry.createdAt < end {
                guard let truth = entry.mark?.verdict else { continue }
                for judge in entry.judges {
                    guard let said = judge.verdict else { continue }
                    tally[judge.model, default: (0, 0)].count += 1
                    if said == truth { tally[judge.model, default: (0, 0)].right += 1 }
                }
            }
            for (model, counted) in tally where counted.count > 0 {
                models.insert(model)
                record[model, default: [:]][labels[index]] = (Double(counted.right) / Double(counted.count), counted.count)
            }
        }
        let series = Array(models.sorted().prefix(SVGCharts.maxSeries))
        let recordChart = SVGCharts.lines(
            id: "record-chart", label: "each model's share right on marked claims, week by week", labels: labels, series: series, values: record)

        // The reliability diagram: the council's stated probability against the marks.
        let points = marked.compactMap { entry -> (stated: Double, right: Bool)? in
            guard entry.scoreMeaning == .probabilityRight, let verdict = entry.verdict, let truth = entry.mark?.verdict else { return nil }
            return (entry.score, verdict == truth)
        }
        let (bins, ece) = CalibrationBin.bins(points)
        let values = CouncilValues(
            hasReport: report != nil,
            judges: (report?.judges ?? []).map { judge in
                JudgeRow(
                    model: judge.model, tier: judge.tier.rawValue, accuracy: "\(Int((judge.accuracy * 100).rounded())) %",
                    spread: judge.spread > 0 ? "± \(Int((judge.spread * 100).rounded()))" : "", judged: judge.judged,
                    weight: String(format: "%.2f", judge.weight))
            },
            learnedFrom: report.map { "Learned from \($0.claims) claims, \($0.marked) of them marked by people. \($0.calibration)" } ?? "",
            markedCount: marked.count, recordChart: recordChart, calibrationCount: points.count,
            calibrationChart: SVGCharts.calibration(id: "calibration-chart", bins: bins),
            ece: ece.map { String(format: "%.3f", $0) } ?? "—",
            bins: bins.filter { $0.count > 0 }.map { bin in
                BinRow(
                    range: "\(Int((bin.lower * 100).rounded()))–\(Int((bin.upper * 100).rounded())) %", count: bin.count,
                    stated: "\(Int((bin.stated * 100).rounded())) %", right: "\(Int((bin.right * 100).rounded())) %")
            })
        return TrustedHTML(html: ConsoleTemplates.render("council", values))
    }

    /// Days since Monday (UTC) of `date`'s week.
    static func weekday(_ date: Date) -> Int {
        // 1970-01-01 was a Thursday: day 0 is 3 days after a Monday.
        ((RunCount.dayNumber(of: date) + 3) % 7 + 7) % 7
    }
}

struct CouncilValues {
    var hasReport: Bool
    var judges: [JudgeRow]
    var learnedFrom: String
    var markedCount: Int
    var recordChart: TrustedHTML
    var calibrationCount: Int
    var calibrationChart: TrustedHTML
    var ece: String
    var bins: [BinRow]
}

struct JudgeRow {
    var model: String
    var tier: String
    var accuracy: String
    var spread: String
    var judged: Int
    var weight: String
}

struct BinRow {
    var range: String
    var count: Int
    var stated: String
    var right: String
}
