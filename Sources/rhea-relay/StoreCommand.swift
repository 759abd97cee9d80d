import ArgumentParser
import Logging
import RelayPipeline
import RelayServer
import RelayStore

/// `rhea-relay store copy`: the store from the shell — moving an SQLite store into the shared
/// PostgreSQL store when a deployment grows to several replicas (issue 24).
struct StoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store", abstract: "Work on the relay's store.", subcommands: [Copy.self])

    struct Copy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy an SQLite store into an empty PostgreSQL store.",
            discussion: """
                Stop the relay first: the file must not change while it is read. Every table is copied in one \
                transaction, ids kept; a target that already holds data is refused, and so is a source file \
                that does not exist.
                """)

        @Option(name: .long, help: "The SQLite store to copy, as sqlite:PATH.")
        var from: String

        @Option(
            name: .long,
            help: """
                The empty PostgreSQL store, as postgres://USER:PASSWORD@HOST:PORT/DATABASE. Default: store.url \
                (STORE_URL, or the file STORE_URL_FILE names), which keeps the password out of the process list.
                """)
        var to: String?

        @Option(name: .long, help: "YAML configuration file, read for store.url when --to is not given.")
        var config: String?

        func run() async throws {
            let path = from.hasPrefix("sqlite:") ? String(from.dropFirst("sqlite:".count)) : ""
            guard !path.isEmpty else {
                writeErr("rhea-relay: --from must be sqlite:PATH (the SQLite file to copy), got `\(from)`.")
                throw ExitCode(2)
            }
            let url = try await target()
            let report: StoreCopyReport
            do {
                report = try await StoreCopy.copy(sqlitePath: path, to: url, logger: Logger(label: "rhea-relay.store"))
            } catch {
                writeErr("rhea-relay: \(error)")
                throw ExitCode(Self.isRefusal(error) ? 2 : 1)
            }
            writeOut("Copied sqlite:\(path) into \(url), rows per table:")
            for table in report.tables { writeOut("  \(table.name): \(table.rows)") }
        }

        /// The store to copy into: `--to`, else the configuration's (which also sets the log level).
        private func target() async throws -> PostgresURL {
            guard let to else {
                let configuration = try await loadConfiguration(file: config)
                bootstrapLogging(level: configuration.logLevel)
                guard let url = configuration.storeURL else {
                    writeErr("rhea-relay: there is no store to copy into: pass --to postgres://… or set STORE_URL (or STORE_URL_FILE).")
                    throw ExitCode(2)
                }
                return url
            }
            bootstrapLogging(level: "warning")
            do {
                return try PostgresURL(to)
            } catch {
                writeErr("rhea-relay: --to: \(error)")
                throw ExitCode(2)
            }
        }

        /// Whether `error` says the copy was refused or cannot start — the operator's to fix (exit
        /// 2, as a bad configuration) — rather than that it failed on the way (exit 1).
        private static func isRefusal(_ error: any Error) -> Bool {
            if error is StoreCopyError { return true }
            guard let error = error as? StoreError else { return false }
            switch error {
            case .cannotOpen, .schemaTooNew, .cannotConnect, .databaseSchemaTooNew: return true
            default: return false
            }
        }
    }
}

/// Log lines to stderr at `level` (a migration applied on the way is worth a line at `info`).
private func bootstrapLogging(level: String) {
    let level = Logger.Level(rawValue: level.lowercased()) ?? .warning
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = level
        return handler
    }
}
