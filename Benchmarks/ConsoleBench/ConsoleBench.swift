import ArgumentParser
import AsyncHTTPClient
import BenchSupport
import Foundation
import RelayCore
import RelayStore
import RelayTestSupport

/// The console's pages over a big team (issue 45, point 6): `BigTeam`'s million runs and hundred
/// thousand fact-checks are written into a SQLite store (kept with `--data` for the next run),
/// copied into PostgreSQL with `rhea-relay store copy` for `--store postgres`, and `rhea-relay
/// serve` (release, pinned with `--server-cpus`) serves the console on them. The bench signs in as
/// an operator would (`rhea-relay console-link`, then the sign-in form) and asks for each page in
/// turn, one request at a time: per page the time to the whole page p50/p99/max, the server's CPU
/// per page (and PostgreSQL's), and the page's size; then the server's peak RSS.
///
///     swift build -c release --product rhea-relay && swift build -c release --product console-bench
///     taskset -c 1 .build/release/console-bench --server-cpus 0 [--store postgres] [--data /tmp/console-bench.sqlite]
@main
struct ConsoleBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "console-bench", abstract: "The web console's pages over a million runs and a hundred thousand fact-checks: time per page, CPU, memory.")

    @Option(help: "The rhea-relay binary to serve with.")
    var relay = ".build/release/rhea-relay"

    @Option(name: .customLong("server-cpus"), help: "Pin the server (and PostgreSQL) to these CPUs (taskset -c), e.g. 0; run the bench on the others.")
    var serverCPUs: String?

    @Option(help: "Where the server keeps its store: sqlite, or postgres (a PostgreSQL of the bench's own, the SQLite store copied in).")
    var store = BenchStore.sqlite

    @Option(help: "Runs in the team's history.")
    var runs = 1_000_000

    @Option(help: "Fact-checks in the team's ledger (one run in runs/ledger is a tribunal).")
    var ledger = 100_000

    @Option(help: "Days the runs are spread over, ending now.")
    var days = 100

    @Option(help: "Requests measured per page.")
    var requests = 200

    @Option(help: "Requests per page before those measured.")
    var warmup = 10

    @Option(help: "The server's port.")
    var port = 18_470

    @Option(name: .customLong("server-log"), help: "Where the server's output goes (appended).")
    var serverLog = FileManager.default.temporaryDirectory.appendingPathComponent("console-bench-server.log").path

    @Option(help: "The seeded SQLite store: written here when missing, reused when present (a copy is served, so it stays as written).")
    var data: String?

    mutating func run() async throws {
        let http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: .init(redirectConfiguration: .disallow))
        do {
            try await measure(http: http)
            try await http.shutdown()
        } catch {
            try? await http.shutdown()
            throw error
        }
    }

    func measure(http: HTTPClient) async throws {
        say(
            "console-bench on \(benchMachine()); server on CPUs \(serverCPUs ?? "any"), release, \(store == .sqlite ? "SQLite" : "PostgreSQL (fsync on, pinned with the server)") store"
        )

        let seeded = data ?? FileManager.default.temporaryDirectory.appendingPathComponent("console-bench-\(runs)-\(ledger).sqlite").path
        if !FileManager.default.fileExists(atPath: seeded) {
            let team = BigTeam(runs: runs, ledger: ledger, days: days, now: Date())
            let started = ContinuousClock.now
            let sqlite = try await SQLiteStore.open(path: seeded)
            try await team.write(to: sqlite) { written in say("  written \(written) runs") }
            try await sqlite.close()
            say("seeded \(runs) runs, \(ledger) fact-checks in \((ContinuousClock.now - started).seconds.rounded()) s: \(seeded)")
        } else {
            say("reusing the seeded store \(seeded) (its rows were written relative to the day it was made)")
        }
        let working = seeded + ".served"
        for suffix in ["", "-wal", "-shm", ".key"] { try? FileManager.default.removeItem(atPath: working + suffix) }
        try FileManager.default.copyItem(atPath: seeded, toPath: working)
        // A store seeded by an earlier build is brought to this one's schema here, timed, rather
        // than inside the server's start.
        let opening = ContinuousClock.now
        try await SQLiteStore.open(path: working).close()
        say("opened the served copy (migrations it lacked applied) in \(String(format: "%.1f", (ContinuousClock.now - opening).seconds)) s")

        var environment = [
            "CONSOLE_ENABLED": "1", "PUBLIC_URL": "http://127.0.0.1:\(port)", "STORE_PATH": working,
            "TRIBUNAL_BACKEND": "council", "COUNCIL_MODELS": BigTeam.models.joined(separator: ","),
            // Every seeded day kept: with the default 90 the server's first purge deleted the
            // oldest tenth as the first page was measured, and PostgreSQL analysed the history
            // after it (a steady team purges a day's worth a day, not ten).
            "RELAY_HISTORY_DAYS": String(days + 30),
        ]
        for model in BigTeam.models {
            // Never called: the console only reads what the council learned from the ledger.
            environment["COUNCIL_\(model.uppercased())_BASE_URL"] = "http://127.0.0.1:9/v1"
            environment["COUNCIL_\(model.uppercased())_MODEL"] = model
            environment["COUNCIL_\(model.uppercased())_TIER"] = "mid"
        }
        var postgres: PostgresUnderBench?
        if store == .postgres {
            let server = try await PostgresUnderBench.start(cpus: serverCPUs)
            postgres = server
            let database = try await server.newDatabase()
            let started = ContinuousClock.now
            _ = try Self.command(relay, ["store", "copy", "--from", "sqlite:\(working)", "--to", database.url], environment: environment)
            say("copied into PostgreSQL with `rhea-relay store copy` in \((ContinuousClock.now - started).seconds.rounded()) s")
            // The copy's writes flushed now rather than by a checkpoint in the middle of the
            // first page's requests (the copy itself vacuums and analyzes what it wrote).
            try await server.server.execute("CHECKPOINT", database: database.name)
            environment["STORE_URL"] = database.url
        }
        defer { if let postgres { Task { await postgres.stop() } } }

        let server = try await RelayProcess.start(
            RelayProcess.Launch(
                binary: relay, port: port, backendURL: "http://127.0.0.1:9", secret: Self.slackSecret, cpus: serverCPUs, environment: environment,
                log: serverLog),
            http: http, storePath: working)
        defer { server.stop() }

        let link = try Self.command(relay, ["console-link", "--team", BigTeam.team, "--platform", BigTeam.platform, "--as", "bench"], environment: environment)
        // The link is the line that is one (the relay may log before it).
        guard let url = link.split(separator: "\n").last(where: { $0.hasPrefix("http") }) else { throw BenchError("console-link printed no link: \(link)") }
        let session = try await ConsoleSession.signIn(http: http, link: String(url))
        let team = "http://127.0.0.1:\(port)/console/\(BigTeam.platform)/\(BigTeam.team)"
        let pages: [(String, String)] = [
            ("overview", team), ("ledger (newest)", team + "/ledger"), ("ledger search, common word", team + "/ledger?q=water"),
            ("ledger search, two common words", team + "/ledger?q=moon+coffee"), ("ledger search, rare word", team + "/ledger?q=w1kx"),
            ("council", team + "/council"), ("chains", team + "/chains"), ("connections", team + "/connections"),
        ]
        say("")
        say("| page | p50 | p99 | max | server CPU per page | size |")
        say("|---|---|---|---|---|---|")
        for (name, url) in pages {
            for _ in 0..<warmup { _ = try await session.get(url) }
            var times: [Double] = []
            let cpuBefore = server.cpuTime() + (postgres?.cpuTime() ?? .zero)
            var size = 0
            for _ in 0..<requests {
                let started = ContinuousClock.now
                size = try await session.get(url)
                times.append((ContinuousClock.now - started).seconds)
            }
            let cpu = (server.cpuTime() + (postgres?.cpuTime() ?? .zero) - cpuBefore).seconds / Double(requests)
            say("| \(name) | \(ms(percentile(times, 0.5))) | \(ms(percentile(times, 0.99))) | \(ms(times.max() ?? .nan)) | \(ms(cpu)) | \(size / 1024) KB |")
        }
        say("")
        say("server peak RSS \(mib(server.peakMemoryKiB()))")
    }

    /// Slack on, as a team's platform must be for its console (a signing secret's shape; no request is signed).
    static let slackSecret = "8f742231b10e8888abcd99e0f3e0a5a5"

    /// Runs `rhea-relay` with `arguments` in the server's environment; its standard output.
    static func command(_ relay: String, _ arguments: [String], environment: [String: String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: relay)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchError("rhea-relay \(arguments.joined(separator: " ")) exited \(process.terminationStatus)") }
        return String(decoding: data, as: UTF8.self)
    }
}

/// A line of the report, written at once (not buffered), so a long run shows how far it is.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
