import ArgumentParser
import Foundation
import RelayCore
import RelayPipeline
import RelayServer
import TerminalAdapter

/// `rhea-relay chains list|show|export|import`: the team's saved chains from the shell.
struct ChainsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chains", abstract: "List, show, export and import the team's saved chains.",
        subcommands: [List.self, Show.self, Export.self, Import.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the team's chains.")
        @OptionGroup var common: CommonOptions
        func run() async throws { try await runChainCommand("/chain list", common) }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one chain.")
        @OptionGroup var common: CommonOptions
        @Argument var name: String
        func run() async throws { try await runChainCommand("/chain show \(name)", common) }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print chains as `NAME = DSL` lines (all, or one).")
        @OptionGroup var common: CommonOptions
        @Argument var name: String?
        func run() async throws {
            let runtime = try await common.start()
            let chains = try await runtime.store.chains(team: common.team).filter { name == nil || $0.name == name!.lowercased() }
            await runtime.shutdown()
            if let name, chains.isEmpty {
                writeErr("There is no chain `\(name)` in team \(common.team).")
                throw ExitCode(1)
            }
            // Plain lines, so `chains export > file` and `chains import file` round-trip.
            for chain in chains { writeOut(chain.exportLine) }
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Import `NAME = DSL` lines from a file, or - for stdin.")
        @OptionGroup var common: CommonOptions
        @Argument(help: "A file of `NAME = DSL` lines, or - for standard input.") var file: String
        func run() async throws {
            let data = file == "-" ? FileHandle.standardInput.readDataToEndOfFile() : FileManager.default.contents(atPath: file)
            guard let data, let text = String(data: data, encoding: .utf8) else {
                writeErr("Cannot read \(file).")
                throw ExitCode(1)
            }
            try await runChainCommand("/chain import \(text)", common)
        }
    }
}

private func runChainCommand(_ line: String, _ common: CommonOptions) async throws {
    let runtime = try await common.start()
    let reply = await TerminalChat(relay: runtime.makeRelay(), team: common.team, user: common.user).runLine(line, write: writeErr)
    writeOut(PlainTextRenderer.render(reply))
    await runtime.shutdown()
    if reply.kind == .error { throw ExitCode(1) }
}
