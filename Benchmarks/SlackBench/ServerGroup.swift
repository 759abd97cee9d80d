import AsyncHTTPClient
import BenchSupport
import NIOCore
import RelayTestSupport

/// The servers of one run: one `rhea-relay serve` on its SQLite file, or `replicas` of them on
/// one PostgreSQL database, each on its own port (`port`, `port + 1`…). What a command costs is
/// what they all spent, PostgreSQL's work included.
final class ServerGroup: Sendable {
    let relays: [RelayProcess]
    let ports: [Int]
    let postgres: PostgresUnderBench?
    let database: PostgresTestDatabase?
    let http: HTTPClient

    private init(relays: [RelayProcess], ports: [Int], postgres: PostgresUnderBench?, database: PostgresTestDatabase?, http: HTTPClient) {
        self.relays = relays
        self.ports = ports
        self.postgres = postgres
        self.database = database
        self.http = http
    }

    /// Starts the relays: on a fresh SQLite file, or on a fresh database of `postgres`.
    static func start(_ launch: RelayProcess.Launch, replicas: Int, postgres: PostgresUnderBench?, http: HTTPClient) async throws -> ServerGroup {
        let database = try await postgres?.newDatabase()
        var relays: [RelayProcess] = []
        let ports = (0..<max(1, replicas)).map { launch.port + $0 }
        do {
            for port in ports {
                var launch = launch
                launch.port = port
                if let database { launch.environment["STORE_URL"] = database.url }
                relays.append(try await RelayProcess.start(launch, http: http))
            }
        } catch {
            for relay in relays { relay.stop() }
            throw error
        }
        return ServerGroup(relays: relays, ports: ports, postgres: postgres, database: database, http: http)
    }

    var relayCPU: Duration { relays.reduce(.zero) { $0 + $1.cpuTime() } }
    var storeCPU: Duration { postgres?.cpuTime() ?? .zero }
    /// User + system CPU time of the relays and PostgreSQL so far.
    func cpuTime() -> Duration { relayCPU + storeCPU }

    /// The largest peak resident memory among the relays (VmHWM), in KiB.
    func peakMemoryKiB() -> Int? { relays.compactMap { $0.peakMemoryKiB() }.max() }
    func memoryKiB() -> Int? { relays.first?.memoryKiB() }
    var startToReady: Duration { relays.first?.startToReady ?? .zero }

    func kill() { for relay in relays { relay.kill() } }

    /// Stops the relays (SIGTERM) and returns the statements they sent PostgreSQL, each one
    /// round trip (`relay_store_round_trips_total` in their `/metrics`), if on PostgreSQL.
    func stop() async -> Int? {
        var roundTrips: Int?
        if database != nil {
            roundTrips = 0
            for port in ports {
                let metrics = try? await http.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/metrics"), timeout: .seconds(5))
                    .body.collect(upTo: 1 << 22)
                let line = metrics.map { String(buffer: $0) }?.split(separator: "\n").first { $0.hasPrefix("relay_store_round_trips_total ") }
                roundTrips! += line.flatMap { Double($0.split(separator: " ").last ?? "") }.map { Int($0) } ?? 0
            }
        }
        for relay in relays { relay.stop() }
        try? await database?.drop()
        return roundTrips
    }
}
