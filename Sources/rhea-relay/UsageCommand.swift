import ArgumentParser
import Foundation
import RelayCore
import RelayPipeline
import RelayServer

/// `rhea-relay usage export`: a team's model calls in a month, for a bill or a spreadsheet.
struct UsageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "usage", abstract: "What the teams' model calls used and cost.", subcommands: [Export.self])

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a team's model calls in a month (UTC) as JSON Lines, oldest first, or CSV with --csv.")
        @OptionGroup var common: CommonOptions

        @Option(name: .long, help: "The month, YYYY-MM (UTC); this month when not given.")
        var month: String?

        @Option(name: .long, help: "Only the team on this platform (slack, discord, …): a team id means something only on its platform.")
        var platform: String?

        @Flag(name: .long, help: "CSV with a header row instead of JSON Lines.")
        var csv = false

        func validate() throws {
            if let month, UsageMonth(month) == nil {
                throw ValidationError("--month must be a month as YYYY-MM (for example 2026-12), got `\(month)`.")
            }
        }

        func run() async throws {
            let month = month.flatMap(UsageMonth.init) ?? UsageMonth(containing: Date())
            let runtime = try await common.start()
            let calls: [ModelCallRecord]
            do {
                calls = try await runtime.store.modelCalls(
                    UsageQuery(platform: platform, team: common.team, from: month.start, to: month.end))
            } catch {
                await runtime.shutdown()
                throw error
            }
            await runtime.shutdown()
            if csv { writeOut(UsageExport.csvHeader) }
            for call in calls { writeOut(csv ? UsageExport.csvRow(call) : UsageExport.line(call)) }
        }
    }
}
