import ArgumentParser
import Foundation
import Logging
import RelayCore
import RelayPlatform
import RelayServer
import TerminalAdapter

@main
struct RheaRelayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rhea-relay",
        abstract: "Multi-model AI for team chat.",
        version: RelayVersion.current,
        subcommands: [
            ChatCommand.self, RunCommand.self, ChainsCommand.self, LedgerCommand.self, StoreCommand.self, ServeCommand.self, RegisterCommand.self,
            APIKeyCommand.self, DoctorCommand.self, UsageCommand.self, ConsoleLinkCommand.self,
        ],
        defaultSubcommand: ChatCommand.self)
}

/// Options every subcommand shares.
struct CommonOptions: ParsableArguments {
    @Option(name: .long, help: "YAML configuration file (environment variables override it).")
    var config: String?

    @Option(name: .long, help: "The team to act in.")
    var team: String = "local"

    @Option(name: .long, help: "The user to act as.")
    var user: String = ProcessInfo.processInfo.environment["USER"] ?? "me"

    /// Loads configuration and builds the relay, or exits with a message that says what to fix.
    /// `needsBackend`: the command asks models (chat, run), so an unconfigured backend is
    /// resolved to the local model or refused with what to run.
    /// `quietest`: the lowest level that may reach stderr whatever `log.level` says (`chat`: its
    /// warnings would land among the replies on the screen; what went wrong is in the reply).
    func start(needsBackend: Bool = false, quietest: Logger.Level? = nil) async throws -> RelayRuntime {
        let configuration = try await loadConfiguration(file: config, needsBackend: needsBackend)
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            let configured = Logger.Level(rawValue: configuration.logLevel.lowercased()) ?? .warning
            handler.logLevel = quietest.map { max($0, configured) } ?? configured
            return handler
        }
        do {
            return try await RelayRuntime.start(configuration, logger: Logger(label: "rhea-relay"))
        } catch {
            FileHandle.standardError.write(Data("rhea-relay: \(error)\n".utf8))
            throw ExitCode(2)
        }
    }
}

/// The configuration from `file` and the environment, with every known platform's section; a
/// malformed value exits with code 2 and a message naming the key.
///
/// `needsBackend`: with no backend configured, the local model is chosen when it answers, and
/// the command stops with what to run when it does not (see `LocalModel`).
func loadConfiguration(file: String?, needsBackend: Bool = false) async throws -> AppConfiguration {
    do {
        let configuration = try await ConfigurationLoader.load(file: file, platforms: chatPlatforms)
        for warning in configuration.warnings { writeErr(warning) }
        return needsBackend ? try await LocalModel.chooseBackend(for: configuration) : configuration
    } catch let error as ConfigurationError {
        writeErr("rhea-relay: \(error.message)")
        throw ExitCode(2)
    }
}

/// Writes to stdout without buffering surprises between progress and replies.
func writeOut(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

/// Standard output as it is, no newline added: an answer as the model writes it.
@Sendable func writeRaw(_ text: String) {
    FileHandle.standardOutput.write(Data(text.utf8))
}

func writeErr(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
