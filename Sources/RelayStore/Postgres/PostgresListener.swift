import Logging
import PostgresNIO
import RelayPipeline
import Synchronization

/// What a replica hears from the others, on one connection of its own:
/// - `relay_team_data` (payload: a team): another replica changed that team's settings or
///   commands; what this one cached of the team is dropped.
/// - `relay_inbox`, `relay_outbox`: work was written for a claim; the claimers wake
///   (``PostgresStore/watchForWork(_:)``) instead of waiting for their next poll.
///
/// While it is not listening — before the first `LISTEN` is confirmed, and from a lost
/// connection (a PostgreSQL restart) until it listens again — `isLive` is false and the store
/// reads team data from the database every time: a missed notification can never leave a stale
/// value. Claims fall back to polling meanwhile.
final class PostgresListener: Sendable {
    static let teamData = "relay_team_data"
    static let work: [(channel: String, kind: StoreWork)] = [("relay_inbox", .inbox), ("relay_outbox", .outbox)]

    private let live = Mutex(false)
    private let wakers = Mutex<[@Sendable (StoreWork) -> Void]>([])

    var isLive: Bool { live.withLock { $0 } }

    func watch(_ wake: @escaping @Sendable (StoreWork) -> Void) {
        wakers.withLock { $0.append(wake) }
    }

    /// Listens until cancelled, reconnecting after a second when the connection is lost.
    func run(client: PostgresClient, cache: ReadCache, logger: Logger) async {
        while !Task.isCancelled {
            do {
                try await client.withConnection { connection in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for (channel, kind) in Self.work {
                            group.addTask {
                                try await connection.listen(on: channel) { notifications in
                                    for try await _ in notifications { self.wake(kind) }
                                }
                            }
                        }
                        group.addTask {
                            try await connection.listen(on: Self.teamData) { notifications in
                                // Whatever was cached before now may have missed a notification.
                                cache.clear()
                                self.live.withLock { $0 = true }
                                for try await notification in notifications { cache.dropTeam(notification.payload) }
                            }
                        }
                        // One channel ending ends them all: the connection is gone.
                        try await group.next()
                        group.cancelAll()
                    }
                }
            } catch {
                if !Task.isCancelled {
                    logger.notice("store: lost the notifications of other replicas; team data is read uncached and claims poll until they are back")
                }
            }
            live.withLock { $0 = false }
            cache.clear()
            try? await Task.sleep(for: .seconds(1))
        }
    }

    private func wake(_ kind: StoreWork) {
        for wake in wakers.withLock({ $0 }) { wake(kind) }
    }
}
