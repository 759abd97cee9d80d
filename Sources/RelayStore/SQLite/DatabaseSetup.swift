import Foundation
import Logging
import RelayPipeline
import SQLiteNIO

/// Brings a freshly opened connection to a usable state: connection settings, a schema-version
/// check, the journal mode, then the migrations the file lacks.
///
/// Runs before the connection is shared, so it needs no gate of its own.
struct DatabaseSetup {
    let database: Database
    let path: String
    let logger: Logger

    /// How long a statement waits for another process's lock before failing, in milliseconds.
    static let busyTimeoutMilliseconds = 5000

    /// Creates the folders above `path` that do not exist yet, so a first run needs no setup.
    static func createParentFolder(of path: String) throws {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder) {
            guard isFolder.boolValue else {
                throw StoreError.cannotOpen(path: path, reason: "\(folder.path) is a file, not a folder")
            }
            return
        }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw StoreError.cannotOpen(
                path: path, reason: "its folder \(folder.path) does not exist and cannot be created")
        }
    }

    func run(migrations: [Migration]) throws {
        let supported = migrations.last?.version ?? 0
        do {
            // A connection setting, not stored in the file.
            try database.execute("PRAGMA busy_timeout = \(Self.busyTimeoutMilliseconds)")
            // Refuse a newer file before writing anything to it (switching to WAL writes the header).
            let found = try recordedVersion()
            if found > supported {
                throw StoreError.schemaTooNew(path: path, found: found, supported: supported)
            }
            try configure()
            _ = try database.query(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)")
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.cannotOpen(path: path, reason: StoreError.reason(for: error))
        }
        let applied = try appliedVersions()
        for migration in migrations where !applied.contains(migration.version) {
            try apply(migration)
        }
    }

    /// The newest schema version recorded in the file; 0 for a new or foreign file.
    private func recordedVersion() throws -> Int {
        let table = try database.query(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
        guard !table.isEmpty else { return 0 }
        let rows = try database.query("SELECT MAX(version) AS version FROM schema_migrations")
        return rows.first?.optionalInt("version") ?? 0
    }

    private func appliedVersions() throws -> Set<Int> {
        do {
            let rows = try database.query("SELECT version FROM schema_migrations")
            return Set(try rows.map { try $0.int("version") })
        } catch {
            throw StoreError.cannotOpen(path: path, reason: StoreError.reason(for: error))
        }
    }

    /// WAL lets the checkpointer run beside the writer. With it, synchronous=NORMAL writes each
    /// commit to the WAL before the commit returns, so a crash of the process (kill -9, OOM) loses
    /// nothing committed; only a power cut or an OS crash may lose the last commits — never the
    /// file's consistency — because the WAL is fsynced at checkpoints rather than at every commit.
    private func configure() throws {
        let mode = try database.query("PRAGMA journal_mode = WAL").first?.optionalText("journal_mode")
        if mode?.lowercased() != "wal" {
            // Some file systems (network shares) cannot do WAL; SQLite then keeps its previous mode.
            logger.warning(
                "SQLite did not switch to WAL; concurrent access will be slower",
                metadata: ["journal_mode": .string(mode ?? "unknown")])
        }
        try database.execute("PRAGMA synchronous = NORMAL")
        try database.execute("PRAGMA foreign_keys = ON")
    }

    /// Applies one migration unless the file already has it. The check is repeated inside the
    /// transaction so two processes opening the same new file do not both apply it.
    private func apply(_ migration: Migration) throws {
        do {
            let applied = try inTransaction {
                let existing = try database.query(
                    "SELECT 1 FROM schema_migrations WHERE version = ?", [.integer(SQLiteInt64(migration.version))])
                guard existing.isEmpty else { return false }
                for statement in migration.statements {
                    try database.execute(statement)
                }
                _ = try database.query(
                    "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
                    [.integer(SQLiteInt64(migration.version)), .date(Date())])
                return true
            }
            if applied {
                logger.info("Applied schema migration", metadata: ["version": .stringConvertible(migration.version)])
            }
        } catch {
            throw StoreError.migrationFailed(
                path: path, version: migration.version, reason: StoreError.reason(for: error))
        }
    }

    /// Runs `body` in one write transaction: committed when it returns, rolled back when it throws.
    /// (Before the store exists; afterwards the writer's batches are the transactions.)
    private func inTransaction<T>(_ body: () throws -> T) throws -> T {
        try database.execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try database.execute("COMMIT")
            return result
        } catch {
            try? database.execute("ROLLBACK")
            throw error
        }
    }
}
