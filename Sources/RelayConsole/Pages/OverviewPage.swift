import Foundation
import RelayCore
import RelayPipeline

/// The overview (docs/console.md): the budget, commands per day by command, cost per day by
/// model, and failures, for the last 30 days (UTC days, today last).
struct OverviewPage {
    static let days = 30

    let relay: Relay
    let grant: ConsoleGrant
    let now: Date

    /// The days shown, oldest first, as `YYYY-MM-DD`, and the first instant of the oldest.
    var window: (labels: [String], from: Date) {
        let today = RunCount.day(of: now)
        let labels = (0..<Self.days).reversed().map { ConsoleDates.day(today.addingTimeInterval(-Double($0) * 86_400)) }
        return (labels, today.addingTimeInterval(-Double(Self.days - 1) * 86_400))
    }

    func body() async throws -> TrustedHTML {
        let (labels, from) = window
        let to = RunCount.day(of: now).addingTimeInterval(86_400)
        let store = relay.store

        // Commands per day: the busiest commands each a series, the rest as "other".
        let counts = try await store.runCounts(team: grant.team, from: from, to: to)
        var runsByDay: [String: [String: Double]] = [:]
        var runsByCommand: [String: Int] = [:]
        var failedByReason: [String: (runs: Int, commands: Set<String>)] = [:]
        for point in counts {
            runsByCommand[point.command, default: 0] += point.count
            if !point.succeeded {
                let reason = Self.reason(point.failure)
                failedByReason[reason, default: (0, [])].runs += point.count
                failedByReason[reason, default: (0, [])].commands.insert(point.command)
            }
        }
        let commands = Self.series(runsByCommand.mapValues(Double.init))
        for point in counts {
            let name = commands.contains(point.command) ? point.command : Self.other
            runsByDay[ConsoleDates.day(point.day), default: [:]][name, default: 0] += Double(point.count)
        }
        let commandsChart = SVGCharts.stackedBars(
            id: "commands-chart", label: "commands per day", days: labels, series: commands, values: runsByDay, format: { "\(Int($0)) runs" })

        // Cost per day by model.
        let costs = try await store.modelCostDays(platform: grant.platform, team: grant.team, from: from, to: to)
        var costByModel: [String: Double] = [:]
        for point in costs { costByModel[point.model, default: 0] += point.cost }
        let models = Self.series(costByModel)
        var costByDay: [String: [String: Double]] = [:]
        for point in costs {
            let name = models.contains(point.model) ? point.model : Self.other
            costByDay[ConsoleDates.day(point.day), default: [:]][name, default: 0] += point.cost
        }
        let costChart = SVGCharts.stackedBars(
            id: "cost-chart", label: "cost per day by model", days: labels, series: models, values: costByDay, format: UsageFormat.dollars)
        let calls = costs.reduce(0) { $0 + $1.calls }
        let unpriced = costs.reduce(0) { $0 + $1.unpriced }
        let estimated = costs.reduce(0) { $0 + $1.estimated }

        // The budget of the month under way.
        let month = UsageMonth(containing: now)
        let limit = try await relay.monthlyBudget(platform: grant.platform, team: grant.team)
        let standing = try await store.budgetStanding(platform: grant.platform, team: grant.team, from: month.start, to: month.end)
        let budgetText: String
        var gauge = TrustedHTML(html: "")
        if let limit {
            gauge = SVGCharts.gauge(spent: standing.spent, held: standing.reserved, limit: limit)
            budgetText =
                "\(UsageFormat.dollars(standing.spent)) of \(UsageFormat.dollars(limit)) spent (\(Int((standing.spent / limit * 100).rounded())) %)"
                + (standing.reserved > 0 ? ", \(UsageFormat.dollars(standing.reserved)) held by commands under way." : ".")
        } else {
            budgetText = "\(UsageFormat.dollars(standing.spent)) spent; no budget is set (`/admin budget 20` sets one)."
        }

        let failures = failedByReason.sorted { $0.value.runs == $1.value.runs ? $0.key < $1.key : $0.value.runs > $1.value.runs }.map {
            FailureRow(reason: $0.key, failed: $0.value.runs, commands: $0.value.commands.sorted().joined(separator: ", "))
        }
        var notes: [String] = []
        if estimated > 0 { notes.append("\(estimated) of \(calls) calls' tokens estimated") }
        if unpriced > 0 { notes.append("\(unpriced) calls without a price") }
        let values = OverviewValues(
            monthName: month.name, budgetGauge: gauge, budgetText: budgetText, runTotal: counts.reduce(0) { $0 + $1.count },
            commandsChart: commandsChart, costTotal: UsageFormat.dollars(costByModel.values.reduce(0, +)),
            estimatedNote: notes.isEmpty ? nil : notes.joined(separator: ", "), costChart: costChart, hasFailures: !failures.isEmpty,
            failures: failures)
        return TrustedHTML(html: ConsoleTemplates.render("overview", values))
    }

    static let other = "other"

    /// Why runs failed, in words, from `HistoryEntry.failure`.
    static func reason(_ failure: String?) -> String {
        switch failure {
        case "refused": "the run stopped itself (a chain's limit or gate)"
        case "timed_out": "the models did not answer in time"
        case "unreachable": "the backend could not be reached"
        case "rate_limited": "the backend's rate limit"
        case "unauthorized": "the backend refused the relay's credentials"
        case "payment_required": "the backend's quota or payment"
        case "rejected": "the backend rejected the request"
        case "server_error": "the backend failed"
        case "provider_failed": "a model provider failed"
        case "malformed": "the backend's answer could not be read"
        case "not_configured": "the backend is not configured for it"
        case nil: "not recorded (runs before failures were kept)"
        case let other?: other
        }
    }

    /// The names with the largest totals, largest first, at most the palette's size (the last
    /// slot going to "other" when there are more).
    static func series(_ totals: [String: Double]) -> [String] {
        let ranked = totals.sorted { $0.value == $1.value ? $0.key < $1.key : $0.value > $1.value }.map(\.key)
        guard ranked.count > SVGCharts.maxSeries else { return ranked }
        return Array(ranked.prefix(SVGCharts.maxSeries - 1)) + [other]
    }
}

struct OverviewValues {
    var monthName: String
    var budgetGauge: TrustedHTML
    var budgetText: String
    var runTotal: Int
    var commandsChart: TrustedHTML
    var costTotal: String
    var estimatedNote: String?
    var costChart: TrustedHTML
    var hasFailures: Bool
    var failures: [FailureRow]
}

struct FailureRow {
    var reason: String
    var failed: Int
    var commands: String
}
