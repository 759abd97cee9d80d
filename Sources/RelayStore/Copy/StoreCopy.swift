import Foundation
public import Logging
import PostgresNIO
import RelayPipeline
import SQLiteNIO

/// Copies an embedded store (SQLite) into an empty shared one (PostgreSQL): `rhea-relay store
/// copy`, run once when a deployment grows from one replica to several (issue 24).
///
/// Everything is written in one PostgreSQL transaction, so the target ends with all of the source
/// or, when anything fails, with nothing. Ids are kept — ledger numbers users quote, inbox ids a
/// run's progress is keyed by, the outbox's delivery order — and each identity then continues
/// past them, and past ids SQLite handed out to rows deleted since: neither store ever reuses one.
///
/// The source is read a page at a time, not in one snapshot: it must not change meanwhile, so the
/// relay that uses it is stopped first.
public enum StoreCopy {
    /// Rows per page: one SQLite read and one PostgreSQL statement each, whatever the table's size.
    static let pageSize = 500

    /// Opens the SQLite file at `path` and the PostgreSQL store at `url` (migrating either to the
    /// schema this rhea-relay knows), copies, and closes both.
    ///
    /// Throws ``StoreCopyError/sourceMissing(path:)`` when there is no file at `path` (opening
    /// would create an empty one), ``StoreCopyError/targetNotEmpty(store:tables:)`` when the target
    /// holds data, and the stores' own errors when either cannot be opened.
    public static func copy(
        sqlitePath path: String, to url: PostgresURL, logger: Logger = Logger(label: "rhea-relay.store")
    ) async throws -> StoreCopyReport {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue else {
            throw StoreCopyError.sourceMissing(path: path)
        }
        // The target first: when it cannot be reached, the source file has not been touched (an
        // older file is migrated as it opens). Two connections: the copy is one transaction, so a
        // larger pool would only hold idle ones.
        let target = try await PostgresStore.open(url: url, maxConnections: 2, logger: logger)
        do {
            let source = try await SQLiteStore.open(path: path, logger: logger)
            do {
                let report = try await copy(from: source, to: target)
                try await source.close()
                try await target.close()
                return report
            } catch {
                try? await source.close()
                throw error
            }
        } catch {
            try? await target.close()
            throw error
        }
    }

    /// Copies every row of `source` into `target`, which must hold none: see the type's notes.
    public static func copy(from source: SQLiteStore, to target: PostgresStore) async throws -> StoreCopyReport {
        let outcome = try await target.transaction("copy the SQLite store at \(source.path)") { connection -> Outcome in
            // Replicas already running on the target wait until the copy commits, so nothing they
            // write can slip between the check below and the copy.
            try await connection.query("LOCK TABLE \(unescaped: CopiedTable.names) IN EXCLUSIVE MODE")
            let holding = try await nonEmptyTables(connection)
            guard holding.isEmpty else { return .refused(holding) }
            let handedOut = try await source.perform("read the ids the SQLite store handed out") { db in
                try db.query("SELECT name, seq FROM sqlite_sequence").reduce(into: [String: Int64]()) { ids, row in
                    ids[try row.text("name")] = Int64(try row.int("seq"))
                }
            }
            var report = StoreCopyReport()
            for table in CopiedTable.all {
                let copied = try await copy(table, from: source, to: connection)
                report.tables.append(StoreCopyReport.Table(name: table.name, rows: copied.rows))
                let last = max(copied.largestIdentity, handedOut[table.name] ?? 0)
                if last > 0, let query = table.continueIdentity(past: last) { try await connection.query(query) }
            }
            // The ledger's words, which SQLite keeps in its own index.
            try await PostgresLedgerWords.fill(connection.connection, logger: connection.logger)
            // Replicas already running cached these teams' commands and settings while there
            // were none: told at commit, as every write of team data tells them.
            try await connection.query(
                """
                SELECT pg_notify(\(PostgresStore.teamDataChannel), team)
                FROM (SELECT team FROM custom_commands UNION SELECT team FROM settings) AS teams
                """)
            return .copied(report)
        }
        switch outcome {
        case .refused(let tables): throw StoreCopyError.targetNotEmpty(store: target.url.description, tables: tables)
        case .copied(let report):
            // The target's own cache, which its notifications may not reach before its next read.
            target.cache.clear()
            // A bulk load leaves the planner without statistics and the tables' visibility map
            // empty until autovacuum gets to them, minutes later on a big store, beside the first
            // requests. Not inside the transaction (VACUUM cannot be), and not a reason to call
            // the copy failed: it committed, and autovacuum would do the same later.
            do {
                try await target.query(
                    "vacuum and analyze the copied tables", "VACUUM (ANALYZE) \(unescaped: CopiedTable.names), run_days, model_call_days",
                    within: .seconds(3600))
            } catch {
                target.logger.warning(
                    "The copy is complete; vacuuming and analysing it failed, and autovacuum will do it later",
                    metadata: ["error": "\(error)"])
            }
            return report
        }
    }

    /// What the transaction found: a refusal commits nothing but the check.
    private enum Outcome: Sendable {
        case refused([String])
        case copied(StoreCopyReport)
    }

    /// The copied tables that hold a row in the target, in copy order.
    private static func nonEmptyTables(_ connection: PostgresTransaction) async throws -> [String] {
        let checks = CopiedTable.all.map { "SELECT '\($0.name)' AS name WHERE EXISTS (SELECT 1 FROM \($0.name))" }
        let found = Set(try await connection.query(PostgresQuery(unsafeSQL: checks.joined(separator: " UNION ALL "))).map { try $0.text("name") })
        return CopiedTable.all.map(\.name).filter(found.contains)
    }

    /// Copies one table page by page; returns its rows and the largest identity value copied.
    private static func copy(
        _ table: CopiedTable, from source: SQLiteStore, to connection: PostgresTransaction
    ) async throws -> (rows: Int, largestIdentity: Int64) {
        let select = table.sqlitePage
        var after = SQLiteInt64.min
        var rows = 0
        var largest: Int64 = 0
        while true {
            let from = after
            let page = try await source.perform("read the \(table.name) table") { db in
                try db.query(select, [.integer(from), .integer(SQLiteInt64(pageSize))])
            }
            guard let last = page.last else { break }
            try await connection.query(table.postgresInsert(json: try json(page, table)))
            rows += page.count
            after = SQLiteInt64(try last.int("copy_key"))
            if let identity = table.identity {
                largest = max(largest, Int64(try page.map { try $0.int(identity) }.max() ?? 0))
            }
            if page.count < pageSize { break }
        }
        return (rows, largest)
    }

    /// A page as the JSON array `jsonb_to_recordset` unpacks: one object per row, by column name.
    private static func json(_ page: [SQLRow], _ table: CopiedTable) throws -> String {
        let rows = try page.map { row in
            var values: [String: CopiedValue] = [:]
            for column in table.columns {
                guard let data = row.column(column.name) else {
                    throw UnexpectedColumnError(column: column.name, expected: "a column of \(table.name)")
                }
                values[column.name] = try CopiedValue(data, column: column.name, table: table.name)
            }
            return values
        }
        // PostgreSQL text cannot hold U+0000: the shared store's one rule for text applies here too.
        return PostgresJSON.withoutNUL(json: String(decoding: try JSONEncoder().encode(rows), as: UTF8.self))
    }
}
