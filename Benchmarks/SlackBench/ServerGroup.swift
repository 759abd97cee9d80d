import AsyncHTTPClient
import RelayTestSupport

/// The servers of one run: one `rhea-relay serve` on its SQLite file, or `replicas` of them on
/// one PostgreSQL database, each on its own port (`port`, `port + 1`…). What a command costs is
/// what they all spent, PostgreSQL's work included.
final class ServerGroup: Sendable {
    let relays: [RelayProcess]
    let postgres: PostgresUnderBench?
    let database: PostgresTestDatabase?

    private init(relays: [RelayProcess], postgres: PostgresUnderBench?, database: PostgresTestDatabase?) {
        self.relays = relays
        self.postgres = postgres
        self.database = database
    }

    /// Starts the relays: on a fresh SQLite file, or on a fresh database of `postgres`.
    static func start(_ launch: RelayProcess.Launch, replicas: Int, postgres: PostgresUnderBench?, http: HTTPClient) async throws -> ServerGroup {
        let database = try await postgres?.newDatabase()
        var relays: [RelayProcess] = []
        do {
            for replica in 0..<max(1, replicas) {
                var launch = launch
                launch.port += replica
                if let database { launch.environment["STORE_URL"] = database.url }
                relays.append(try await RelayProcess.start(launch, http: http))
            }
        } catch {
            for relay in relays { relay.stop() }
            throw error
        }
        return ServerGroup(relays: relays, postgres: postgres, database: database)
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

    /// Stops the relays (SIGTERM) and returns the transactions their database saw, if PostgreSQL.
    func stop() async -> Int? {
        for relay in relays { relay.stop() }
        guard let postgres, let database else { return nil }
        let transactions = try? await postgres.transactions(in: database)
        try? await database.drop()
        return transactions
    }
}
