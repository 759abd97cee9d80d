import Logging
import PostgresNIO
import RelayPipeline

import struct Foundation.Date

/// Brings the shared database to the schema this code knows, before the store is used.
///
/// Replicas starting together take turns on a transaction-scoped advisory lock: the first applies
/// what is missing, the others then find it applied. A database migrated by a newer rhea-relay is
/// refused before anything is written, so an old binary left in a rolling update stops and says
/// why rather than writing rows the newer schema does not expect.
struct PostgresMigrator {
    let connection: PostgresConnection
    /// The store's URL, password masked, for errors.
    let store: String
    let logger: Logger

    /// The advisory lock's key: any constant all replicas agree on.
    static let lockKey: Int64 = 0x5268_6561_5265_6C61  // "RheaRela"

    func run(_ migrations: [Migration]) async throws {
        let supported = migrations.last?.version ?? 0
        do {
            try await connection.query("BEGIN", logger: logger)
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.lockKey))", logger: logger)
            try await connection.query(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at double precision NOT NULL)",
                logger: logger)
            var applied: Set<Int> = []
            for try await version in try await connection.query("SELECT version FROM schema_migrations", logger: logger).decode(Int.self) {
                applied.insert(version)
            }
            if let found = applied.max(), found > supported {
                throw StoreError.databaseSchemaTooNew(store: store, found: found, supported: supported)
            }
            for migration in migrations where !applied.contains(migration.version) {
                try await apply(migration)
            }
            try await connection.query("COMMIT", logger: logger)
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            if let error = error as? StoreError { throw error }
            throw StoreError.cannotConnect(store: store, reason: PostgresFailure.reason(for: error))
        }
    }

    private func apply(_ migration: Migration) async throws {
        do {
            for statement in migration.statements {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
            try await migration.fill?(connection, logger)
            let now = Date().timeIntervalSince1970
            try await connection.query(
                "INSERT INTO schema_migrations (version, applied_at) VALUES (\(migration.version), \(now))", logger: logger)
            logger.info("Applied schema migration", metadata: ["version": .stringConvertible(migration.version)])
        } catch {
            throw StoreError.migrationFailed(path: store, version: migration.version, reason: PostgresFailure.reason(for: error))
        }
    }
}
