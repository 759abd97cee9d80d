import ArgumentParser
import Foundation
import RelayCore
import RelayPipeline
import RelayServer

/// `rhea-relay ledger export`: a team's whole fact-check ledger as JSON Lines, for files and
/// tools (chat's `/ledger export` stops at the newest 1 000).
struct LedgerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger", abstract: "The fact-check ledger from the shell.", subcommands: [Export.self])

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the team's fact-checks as JSON Lines, oldest first (--team rhea-api: those asked through the served API).")
        @OptionGroup var common: CommonOptions
        func run() async throws {
            let runtime = try await common.start()
            let entries = try await runtime.store.ledgerEntries(team: common.team)
            await runtime.shutdown()
            for entry in entries { writeOut(LedgerExport.line(entry)) }
        }
    }
}
