public import Logging
import NIOPosix
public import RelayCore
import SQLiteNIO

/// The relay's ``Store`` in one SQLite file (WAL mode), for single-replica deployments.
///
/// The actor owns the file's only connection. Because an actor is re-entrant at every `await`, it
/// also runs a small first-come-first-served gate so that one operation (which may be several
/// statements, like a transaction) finishes before the next one touches the connection.
///
/// Call ``close()`` when done: the connection cannot be closed from `deinit`.
public actor SQLiteStore: Store {
    /// The database file, as given to ``open(path:logger:)``.
    public nonisolated let path: String
    /// The newest schema version this code knows; files with a newer version are refused.
    public static var supportedSchemaVersion: Int { Migration.latestVersion }

    let logger: Logger
    /// Nil once closed.
    private var connection: SQLiteConnection?
    /// Whether an operation holds the connection.
    private var isBusy = false
    /// Operations waiting for the connection, in arrival order.
    private var waiters: [CheckedContinuation<Void, Never>] = []

    private init(path: String, connection: SQLiteConnection, logger: Logger) {
        self.path = path
        self.connection = connection
        self.logger = logger
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
        let connection: SQLiteConnection
        do {
            connection = try await SQLiteConnection.open(
                storage: .file(path: path),
                threadPool: NIOThreadPool.singleton,
                logger: logger,
                on: MultiThreadedEventLoopGroup.singleton.any()
            )
        } catch {
            throw StoreError.cannotOpen(path: path, reason: StoreError.reason(for: error))
        }
        do {
            try await DatabaseSetup(connection: connection, path: path, logger: logger).run(migrations: migrations)
        } catch {
            // Release the file handle so a refused file is not held open.
            try? await connection.close()
            throw error
        }
        return SQLiteStore(path: path, connection: connection, logger: logger)
    }

    /// Closes the connection after the operations already waiting have finished. Later calls throw
    /// ``StoreError/closed``; closing again does nothing.
    public func close() async throws {
        await acquire()
        defer { release() }
        guard let connection else { return }
        self.connection = nil
        do {
            // Not cut short by the caller's cancellation (NIO's thread pool refuses work from a
            // cancelled task): a connection dropped unclosed traps in debug builds and leaks the
            // file handle otherwise, and a cancelled server must still close its store.
            try await Task { try await connection.close() }.value
        } catch {
            throw StoreError.operationFailed(
                operation: "close the database at \(path)", reason: StoreError.reason(for: error))
        }
    }

    // MARK: Diagnostics

    /// The journal mode SQLite reports for the file (`wal` once opened). Read-only.
    public func journalMode() async throws -> String {
        try await perform("read the journal mode") { db in
            try await db.query("PRAGMA journal_mode").first?.text("journal_mode") ?? ""
        }
    }

    /// The schema versions recorded in the file, oldest first. Read-only.
    public func appliedMigrations() async throws -> [AppliedMigration] {
        try await perform("read the applied migrations") { db in
            try await db.query("SELECT version, applied_at FROM schema_migrations ORDER BY version").map {
                AppliedMigration(version: try $0.int("version"), appliedAt: try $0.date("applied_at"))
            }
        }
    }

    // MARK: Access to the connection

    /// Runs `body` with exclusive use of the open connection, turning low-level failures into a
    /// ``StoreError/operationFailed(operation:reason:)`` that names `operation`.
    func perform<T: Sendable>(
        _ operation: @autoclosure () -> String,
        _ body: (SQLiteConnection) async throws -> T
    ) async throws -> T {
        await acquire()
        defer { release() }
        guard let connection else { throw StoreError.closed }
        do {
            return try await body(connection)
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.operationFailed(operation: operation(), reason: StoreError.reason(for: error))
        }
    }

    private func acquire() async {
        guard isBusy else {
            isBusy = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    private func release() {
        if waiters.isEmpty {
            isBusy = false
        } else {
            // Hand the gate straight to the next waiter; it stays busy.
            waiters.removeFirst().resume()
        }
    }
}
