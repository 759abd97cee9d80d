import Logging
import PostgresNIO
import Synchronization

/// Keeps a replica's cached team data coherent with the other replicas' writes: it listens on
/// `relay_team_data` on a connection of its own and drops a team's cached reads when another
/// replica (or this one) changed them.
///
/// While it is not listening — before the first `LISTEN` is confirmed, and from a lost
/// connection (a PostgreSQL restart) until it listens again — `isLive` is false and the store
/// reads from the database every time: a missed notification can never leave a stale value.
final class PostgresTeamDataListener: Sendable {
    private let live = Mutex(false)

    var isLive: Bool { live.withLock { $0 } }

    /// Listens until cancelled, reconnecting after a second when the connection is lost.
    func run(client: PostgresClient, channel: String, cache: ReadCache, logger: Logger) async {
        while !Task.isCancelled {
            do {
                try await client.withConnection { connection in
                    try await connection.listen(on: channel) { notifications in
                        // Whatever was cached before now may have missed a notification.
                        cache.clear()
                        live.withLock { $0 = true }
                        for try await notification in notifications {
                            cache.dropTeam(notification.payload)
                        }
                    }
                }
            } catch {
                if !Task.isCancelled {
                    logger.notice("store: lost the team-data notifications; reading team data uncached until they are back")
                }
            }
            live.withLock { $0 = false }
            cache.clear()
            try? await Task.sleep(for: .seconds(1))
        }
    }
}
