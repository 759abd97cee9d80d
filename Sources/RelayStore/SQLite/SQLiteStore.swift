import CoreMetrics
public import Logging
import RelayCore
public import RelayPipeline
import Synchronization

/// The relay's ``Store`` in one SQLite file (WAL mode), for single-replica deployments.
///
/// Every operation goes through one ``GroupCommitWriter``: operations that arrive together share
/// one transaction and one commit, each in a savepoint of its own, and their callers are resumed
/// once it is committed. Reads that every command makes — the team's custom commands and the
/// user's and channel's settings — are answered from ``ReadCache``, which writes through this
/// store keep coherent (this process is the file's only writer). The WAL is checkpointed by a
/// second connection off the writer (``Checkpointer``).
///
/// Call ``close()`` when done: closing waits for the operations already queued.
public final class SQLiteStore: Store {
    /// The database file, as given to ``open(path:logger:)``.
    public let path: String
    /// The newest schema version this code knows; files with a newer version are refused.
    public static var supportedSchemaVersion: Int { Migration.latestVersion }

    let logger: Logger
    let writer: GroupCommitWriter
    let cache = ReadCache()
    private let database: Database
    private let checkpointer: Checkpointer
    private let closed = Mutex(false)
    private let commits = CommitCounter()

    private init(path: String, database: Database, checkpointer: Checkpointer, logger: Logger) {
        self.path = path
        self.database = database
        self.checkpointer = checkpointer
        self.logger = logger
        let commits = commits
        let cache = cache
        writer = GroupCommitWriter(
            database: database,
            onBatch: { size in
                StoreMetrics.batch(size: size)
                commits.state.withLock { $0.record(size) }
            },
            // What an operation of a rolled-back transaction cached may never have been written.
            onRollback: { cache.clear() })
        checkpointer.watch(database)
    }

    /// Opens the database file at `path`, creating it and its missing folders on first run, and
    /// applies the schema migrations it lacks.
    ///
    /// Throws ``StoreError/cannotOpen(path:reason:)`` when the file cannot be created or written, and
    /// ``StoreError/schemaTooNew(path:found:supported:)`` when a newer rhea-relay wrote it.
    public static func open(
        path: String,
        logger: Logger = Logger(label: "rhea-relay.store")
    ) async throws -> SQLiteStore {
        try await open(path: path, migrations: Migration.all, logger: logger)
    }

    /// Opens with an explicit migration list; tests use it to simulate older and newer code.
    static func open(
        path: String,
        migrations: [Migration],
        logger: Logger = Logger(label: "rhea-relay.store")
    ) async throws -> SQLiteStore {
        var logger = logger
        logger[metadataKey: "store.path"] = .string(path)
        try DatabaseSetup.createParentFolder(of: path)
        // History and the ledger are the owner's alone: a new file is made 0600 before SQLite
        // opens it (SQLite would make it 0644 under the usual umask), and its -wal and -shm
        // follow. A failure here is left for SQLite's open to report in its own words.
        _ = try? OwnerOnlyFile.create(atPath: path)
        let database: Database
        do {
            database = try Database(path: path)
        } catch {
            throw StoreError.cannotOpen(path: path, reason: StoreError.reason(for: error))
        }
        do {
            try DatabaseSetup(database: database, path: path, logger: logger).run(migrations: migrations)
            let checkpointer: Checkpointer
            do {
                checkpointer = try Checkpointer(path: path)
            } catch {
                throw StoreError.cannotOpen(path: path, reason: StoreError.reason(for: error))
            }
            return SQLiteStore(path: path, database: database, checkpointer: checkpointer, logger: logger)
        } catch {
            // Release the file handle so a refused file is not held open.
            database.close()
            throw error
        }
    }

    /// Closes the connection after the operations already waiting have finished, folding the WAL
    /// back into the file. Later calls throw ``StoreError/closed``; closing again does nothing.
    public func close() async throws {
        guard
            closed.withLock({ closed in
                defer { closed = true }
                return !closed
            })
        else { return }
        let checkpointer = checkpointer
        let path = path
        // Queued last, alone: everything queued before it runs first.
        try await writer.perform(exclusive: true, closing: true) { database in
            database.clearWALHook()
            checkpointer.close()
            do {
                try database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            } catch {
                database.close()
                throw StoreError.operationFailed(operation: "close the database at \(path)", reason: StoreError.reason(for: error))
            }
            database.close()
        }
    }

    // MARK: Diagnostics

    /// How many transactions the writer committed, and how many operations they held: group
    /// commit at work when operations outnumber transactions.
    public var commitStatistics: CommitStatistics { commits.state.withLock { $0 } }

    /// The journal mode SQLite reports for the file (`wal` once opened). Read-only.
    public func journalMode() async throws -> String {
        try await perform("read the journal mode") { db in
            try db.query("PRAGMA journal_mode").first?.text("journal_mode") ?? ""
        }
    }

    /// The schema versions recorded in the file, oldest first. Read-only.
    public func appliedMigrations() async throws -> [AppliedMigration] {
        try await perform("read the applied migrations") { db in
            try db.query("SELECT version, applied_at FROM schema_migrations ORDER BY version").map {
                AppliedMigration(version: try $0.int("version"), appliedAt: try $0.date("applied_at"))
            }
        }
    }

    // MARK: Access to the connection

    /// Runs `body` on the connection in the writer's next batch (its own savepoint), turning
    /// low-level failures into a ``StoreError/operationFailed(operation:reason:)`` that names
    /// `operation`.
    func perform<T: Sendable>(
        _ operation: @autoclosure () -> String,
        _ body: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        let commits = commits
        do {
            return try await writer.perform { database in
                let before = database.totalChanges
                let result = try body(database)
                if database.totalChanges != before { commits.state.withLock { $0.recordWrite() } }
                return result
            }
        } catch let error as StoreError {
            throw error
        } catch {
            // A batch that did not commit may have cached what one of its operations read.
            cache.clear()
            throw StoreError.operationFailed(operation: operation(), reason: StoreError.reason(for: error))
        }
    }
}

/// Transactions written and the operations they held.
public struct CommitStatistics: Sendable, Hashable {
    public private(set) var transactions = 0
    public private(set) var operations = 0
    /// The most operations one transaction held.
    public private(set) var largestBatch = 0
    /// Operations that changed a row (reads and claims that found nothing are not writes).
    public private(set) var writes = 0

    mutating func recordWrite() {
        writes += 1
    }

    mutating func record(_ size: Int) {
        transactions += 1
        operations += size
        largestBatch = max(largestBatch, size)
    }
}

/// Shared by the writer's batch callback and the store.
final class CommitCounter: Sendable {
    let state = Mutex(CommitStatistics())
}

/// The store's own metrics.
enum StoreMetrics {
    /// Operations per committed transaction: how much group commit shares.
    static func batch(size: Int) {
        Recorder(label: "relay_store_commit_batch_size").record(size)
    }
}
