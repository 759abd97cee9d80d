import NIOPosix
import Synchronization
import VaporCSQLite

/// Copies the WAL back into the database file on a thread of its own, so the writer never waits
/// for the disk: SQLite's automatic checkpoint would run inside a commit, on the writer's thread,
/// and fsync there.
///
/// The writer's connection reports the WAL's size after each commit (`sqlite3_wal_hook`, which
/// also turns SQLite's automatic checkpoints off); past `threshold` pages, a passive checkpoint
/// runs on a second connection in NIO's blocking thread pool, one at a time. A passive
/// checkpoint never blocks the writer, and SQLite reuses the WAL from its start once a
/// checkpoint has caught up.
final class Checkpointer: Sendable {
    /// SQLite's own default for automatic checkpoints (about 4 MB of pages).
    static let threshold: Int32 = 1000

    private let connection: Mutex<Database?>
    private let running = Atomic<Bool>(false)
    private let pool: NIOThreadPool

    init(path: String, pool: NIOThreadPool = .singleton) throws(SQLiteFailure) {
        let database = try Database(path: path)
        try database.execute("PRAGMA busy_timeout = 5000")
        connection = Mutex(database)
        self.pool = pool
    }

    /// Reports the writer's WAL size to this checkpointer from now on.
    func watch(_ writer: Database) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite_nio_sqlite3_wal_hook(
            writer.rawHandle,
            { context, _, _, pages in
                guard let context else { return SQLITE_OK }
                Unmanaged<Checkpointer>.fromOpaque(context).takeUnretainedValue().walGrew(to: pages)
                return SQLITE_OK
            }, context)
    }

    private func walGrew(to pages: Int32) {
        guard pages >= Self.threshold, running.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else { return }
        pool.submit { _ in
            self.connection.withLock { database in
                _ = try? database?.execute("PRAGMA wal_checkpoint(PASSIVE)")
            }
            self.running.store(false, ordering: .releasing)
        }
    }

    /// Closes the checkpoint connection (waiting for a checkpoint under way).
    func close() {
        connection.withLock { database in
            database?.close()
            database = nil
        }
    }
}
