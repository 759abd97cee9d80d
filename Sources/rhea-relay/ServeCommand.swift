import ArgumentParser
import CMallocTuning
import Foundation
import Hummingbird
import Logging
import Metrics
import NIOCore
import NIOPosix
import Prometheus
import RelayPlatform
import RelayServer
import RheaAPI

/// `rhea-relay serve`: the HTTP server, the platforms, the outbox — until SIGTERM or SIGINT.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Run the server: chat platforms, health and metrics, the outbox.")

    @Option(name: .long, help: "YAML configuration file (environment variables override it).")
    var config: String?

    func run() async throws {
        // Swift concurrency runs on NIO's event loops: a request's handler, the store's writer
        // and the outbound client then share threads instead of handing work between three
        // pools (profiled: a third of the CPU went to futex waits and context switches).
        EventLoopSizing.fitToAffinity()
        // glibc raises its mmap threshold each time a large mapped block is freed, so after one
        // 25 MB voice note the next ones come from the heap and stay held once freed (measured:
        // 163 MB kept after a burst that started at 55). A fixed threshold maps every block of
        // 1 MB or more on its own, and unmaps it when freed.
        if relay_malloc_map_blocks_from(1 << 20) == 0 {
            writeErr(
                "rhea-relay: note: the C library's mmap threshold could not be fixed (not glibc?); memory freed after a burst of voice notes may stay held"
            )
        }
        _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        var configuration = try await checkedConfiguration()
        do {
            try await ListenCheck.probe(host: configuration.http.host, port: configuration.http.port)
        } catch {
            writeErr("rhea-relay: \(error.message)")
            throw ExitCode(2)
        }
        // After the address: a port in use is named first, whatever the backend.
        do {
            configuration = try await LocalModel.chooseBackend(for: configuration)
        } catch let error as ConfigurationError {
            writeErr("rhea-relay: \(error.message)")
            throw ExitCode(2)
        }
        let level = Logger.Level(rawValue: configuration.logLevel.lowercased()) ?? .warning
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory.relay(registry: registry))
        let logger = Logger(label: "rhea-relay")

        let app: RelayApplication.App
        do {
            // The start-up summary, always printed whatever the log level, once the server
            // listens: with the port it got, which `HTTP_PORT=0` leaves to the system.
            app = try await RelayApplication.build(configuration: configuration, registry: registry, logger: logger, checkCredentialsAtStart: true) {
                [configuration] port in
                writeErr("rhea-relay \(RelayVersion.current) serving on http://\(configuration.http.host):\(port) (store: \(configuration.storeDescription))")
                writeErr("backend: \(RelayRuntime.describeBackend(configuration))")
                for (platform, status) in configuration.platformStatus.sorted(by: { $0.key < $1.key }) {
                    writeErr("\(platform): \(status)")
                }
                for line in configuration.api.startupSummary { writeErr(line) }
            }
        } catch {
            writeErr("rhea-relay: \(error)")
            throw ExitCode(2)
        }
        try await app.runService()
    }

    /// The configuration, once `rhea-relay doctor`'s offline checks pass: a misspelt key, a
    /// variable nothing reads, a secret written in the YAML file or a half-configured platform
    /// stops `serve` (exit 2) with every problem and its fix, rather than a relay that starts
    /// without what was meant.
    private func checkedConfiguration() async throws -> AppConfiguration {
        let (configuration, findings) = await ConfigurationDoctor.offline(
            file: config, environment: ProcessInfo.processInfo.environment, platforms: chatPlatforms)
        let problems = findings.filter { !$0.passed }
        guard let configuration, problems.isEmpty else {
            for problem in problems { writeErr(problem.line) }
            let count = problems.count == 1 ? "a problem" : "\(problems.count) problems"
            writeErr("rhea-relay: the configuration has \(count) (the lines with ✗); not serving. `rhea-relay doctor` checks it without serving.")
            throw ExitCode(2)
        }
        return configuration
    }
}
