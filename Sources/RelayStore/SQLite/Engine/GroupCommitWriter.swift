import NIOPosix
import RelayPipeline
import Synchronization
import VaporCSQLite

/// The store's one way to its connection: operations queue up, and one drain runs everything
/// that queued while the previous batch was being written, in one transaction — group commit.
/// Concurrent commands then share one `COMMIT` (one WAL write) instead of paying for one each.
///
/// An operation that fails is rolled back alone and the rest of its batch still commits; its
/// caller gets its own error. Batches are written optimistically: operations rarely fail, so a
/// batch first runs without savepoints (each costs SQLite a statement journal of every page it
/// touches); when one fails, the whole transaction is rolled back and the batch runs again, each
/// operation in its own savepoint. Callers are resumed only after the batch's `COMMIT`
/// returned: what they were told is written is in the WAL, and survives a crash of the process
/// (see `DatabaseSetup` for power loss).
///
/// The drain is a task of its own, started when the first operation queues and after each batch
/// while more are waiting: operations that become ready in the meantime join the next batch
/// rather than each starting a transaction. It runs SQLite synchronously — statements take
/// microseconds; checkpoints, which wait for the disk, run elsewhere (`Checkpointer`).
final class GroupCommitWriter: Sendable {
    /// One operation: runs its body (inside a savepoint, or alone when `exclusive`) and returns
    /// whether the body succeeded and how to tell its caller once the batch's fate is known.
    struct Job: Sendable {
        var exclusive: Bool
        /// Tells the caller its operation was not run (its batch broke before it).
        var fail: @Sendable (any Error) -> Void
        var run: @Sendable (Database) -> (succeeded: Bool, finish: @Sendable ((any Error)?) -> Void)
    }

    private struct State {
        var queue: [Job] = []
        var draining = false
        var closed = false
    }

    private let database: Database
    private let state = Mutex(State())
    /// Called with each batch's size after its commit (metrics).
    private let onBatch: @Sendable (Int) -> Void
    /// Called when a transaction is rolled back whole: what its operations cached is void.
    private let onRollback: @Sendable () -> Void

    init(database: Database, onBatch: @escaping @Sendable (Int) -> Void = { _ in }, onRollback: @escaping @Sendable () -> Void = {}) {
        self.database = database
        self.onBatch = onBatch
        self.onRollback = onRollback
    }

    /// Runs `body` on the connection in the next batch and returns its result once committed.
    /// Throws the body's error, or the commit's when the batch could not be committed;
    /// `StoreError.closed` after `close`.
    ///
    /// - Parameter closing: the writer's last operation: later ones are refused with
    ///   `StoreError.closed` (it runs after those already queued).
    func perform<T: Sendable>(exclusive: Bool = false, closing: Bool = false, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let job = Job(exclusive: exclusive, fail: { continuation.resume(throwing: $0) }) { database in
                let result: Result<T, any Error>
                do {
                    result = .success(try body(database))
                } catch {
                    result = .failure(error)
                }
                let succeeded = if case .success = result { true } else { false }
                return (
                    succeeded,
                    { commitFailure in
                        if let commitFailure, succeeded {
                            continuation.resume(throwing: commitFailure)
                        } else {
                            continuation.resume(with: result)
                        }
                    }
                )
            }
            enqueue(job, closing: closing)
        }
    }

    private func enqueue(_ job: Job, closing: Bool) {
        let start = state.withLock { state -> Bool? in
            guard !state.closed else { return nil }
            state.closed = closing
            state.queue.append(job)
            guard !state.draining else { return false }
            state.draining = true
            return true
        }
        switch start {
        case nil: job.fail(StoreError.closed)
        case true?: Task { self.drain() }
        case false?: break
        }
    }

    /// Writes one batch: everything queued now. Starts itself again if more queued meanwhile.
    private func drain() {
        let batch = state.withLock { state -> [Job] in
            defer { state.queue.removeAll(keepingCapacity: true) }
            return state.queue
        }
        var pending: [Job] = []
        for job in batch {
            if job.exclusive {
                write(pending)
                pending.removeAll()
                job.run(database).finish(nil)
            } else {
                pending.append(job)
            }
        }
        write(pending)
        let again = state.withLock { state -> Bool in
            if state.queue.isEmpty { state.draining = false }
            return state.draining
        }
        if again { Task { self.drain() } }
    }

    /// One transaction for `jobs`; then every caller is told. Without savepoints first; again
    /// with them when an operation failed (unless it was alone: then its rollback is the
    /// transaction's).
    private func write(_ jobs: [Job]) {
        guard !jobs.isEmpty else { return }
        guard begin(jobs) else { return }
        var finishes: [@Sendable ((any Error)?) -> Void] = []
        finishes.reserveCapacity(jobs.count)
        for job in jobs {
            let outcome = job.run(database)
            // SQLite rolls a whole transaction back by itself on some errors (disk full, I/O).
            guard outcome.succeeded, database.inTransaction else {
                if database.inTransaction { try? database.execute("ROLLBACK") }
                onRollback()
                if jobs.count == 1 {
                    outcome.finish(nil)
                } else {
                    writeInSavepoints(jobs)
                }
                return
            }
            finishes.append(outcome.finish)
        }
        commit(jobs.count, finishes)
    }

    /// Opens the write transaction; when SQLite refuses, every job is told why and false returned.
    private func begin(_ jobs: [Job]) -> Bool {
        do {
            try database.execute("BEGIN IMMEDIATE")
            return true
        } catch {
            for job in jobs { job.fail(error) }
            return false
        }
    }

    /// One transaction for `jobs`, each in a savepoint; then every caller is told.
    private func writeInSavepoints(_ jobs: [Job]) {
        guard begin(jobs) else { return }
        var finishes: [@Sendable ((any Error)?) -> Void] = []
        finishes.reserveCapacity(jobs.count)
        // Set when the transaction can no longer be used; the jobs after it are not run.
        var broken: (any Error)?
        for job in jobs {
            if let broken {
                job.fail(broken)
                continue
            }
            do {
                try database.query("SAVEPOINT operation")
            } catch {
                broken = error
                job.fail(error)
                continue
            }
            let outcome = job.run(database)
            finishes.append(outcome.finish)
            do {
                guard database.inTransaction else { throw SQLiteFailure(code: 1, message: "SQLite rolled the transaction back") }
                if !outcome.succeeded { try database.query("ROLLBACK TO operation") }
                try database.query("RELEASE operation")
            } catch {
                broken = error
            }
        }
        if let broken {
            if database.inTransaction { try? database.execute("ROLLBACK") }
            onRollback()
            onBatch(jobs.count)
            for finish in finishes { finish(broken) }
            return
        }
        commit(jobs.count, finishes)
    }

    /// Commits the open transaction and tells every caller.
    private func commit(_ size: Int, _ finishes: [@Sendable ((any Error)?) -> Void]) {
        var failure: (any Error)?
        do {
            try database.execute("COMMIT")
        } catch {
            failure = error
            if database.inTransaction { try? database.execute("ROLLBACK") }
            onRollback()
        }
        onBatch(size)
        for finish in finishes { finish(failure) }
    }
}

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
