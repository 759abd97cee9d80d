public import RelayCore
import SQLiteNIO

public import struct Foundation.Date

extension SQLiteStore {
    /// A user's newest runs in a team, newest first (runs recorded with the same time: the later
    /// recorded first); at most `limit`, none when `limit` is not positive.
    public func history(team: String, user: String, limit: Int) async throws -> [HistoryEntry] {
        // SQLite reads a negative LIMIT as "no limit"; a caller asking for none should get none.
        guard limit > 0 else { return [] }
        return try await perform("read the history of user \(user) in team \(team)") { db in
            try db.query(
                """
                SELECT * FROM history WHERE team = ? AND user = ?
                ORDER BY created_at DESC, id DESC LIMIT ?
                """,
                [.text(team), .text(user), .integer(SQLiteInt64(limit))]
            ).map(HistoryEntry.init(stored:))
        }
    }
}

extension SQLiteStore {
    public func runCounts(team: String, from: Date, to: Date) async throws -> [RunCount] {
        let days = RunCount.days(touching: from, to)
        return try await perform("count the runs of team \(team)") { db in
            try db.query(
                "SELECT day, command, succeeded, failure, runs FROM run_days WHERE team = ? AND day >= ? AND day < ?",
                [.text(team), .integer(days.lowerBound), .integer(days.upperBound)]
            ).map { row in
                let failure = try row.text("failure")
                return RunCount(
                    day: Date(timeIntervalSince1970: Double(try row.int("day")) * 86_400), command: try row.text("command"),
                    succeeded: try row.bool("succeeded"), failure: failure.isEmpty ? nil : failure, count: try row.int("runs"))
            }
        }
    }

    public func connectionsReport() async throws -> ConnectionsReport {
        try await perform("read the connections report") { db in
            let errors = try db.query(
                """
                SELECT platform, last_error, created_at FROM (
                    SELECT platform, last_error, created_at, row_number() OVER (PARTITION BY platform ORDER BY created_at DESC, seq DESC) AS newest
                    FROM outbox WHERE last_error IS NOT NULL
                ) WHERE newest = 1
                """, []
            ).map { (try $0.text("platform"), try $0.text("last_error"), try $0.date("created_at")) }
            let activity = try db.query(
                "SELECT platform, max(created_at) AS last, sum(state = 'pending') AS pending FROM outbox GROUP BY platform ORDER BY platform", []
            ).map { row in
                let platform = try row.text("platform")
                let error = errors.first { $0.0 == platform }
                return ConnectionsReport.Activity(
                    platform: platform, lastQueued: try row.date("last"), lastError: error?.1, lastErrorQueued: error?.2, pending: try row.int("pending"))
            }
            let leases = try db.query("SELECT name, holder, expires_at FROM leases ORDER BY name", []).map { row in
                ConnectionsReport.Lease(
                    name: try row.text("name"), holder: row.optionalText("holder"),
                    expiresAt: row.optionalDouble("expires_at").map(Date.init(timeIntervalSince1970:)))
            }
            return ConnectionsReport(activity: activity, leases: leases)
        }
    }

    /// Deletes all of a user's runs in a team; returns how many there were.
    public func clearHistory(team: String, user: String) async throws -> Int {
        try await perform("clear the history of user \(user) in team \(team)") { db in try Self.clearHistory(team: team, user: user, db) }
    }

    static func clearHistory(team: String, user: String, _ db: Database) throws -> Int {
        try db.query("DELETE FROM history WHERE team = ? AND user = ? RETURNING id", [.text(team), .text(user)]).count
    }

    /// How many runs a user has in a team's history, and how many fact-checks they asked: what
    /// `/history clear` will delete.
    public func keptCount(team: String, user: String) async throws -> (history: Int, factChecks: Int) {
        try await perform("count what user \(user) keeps in team \(team)") { db in
            let binds: [SQLiteData] = [.text(team), .text(user)]
            let history = try db.query("SELECT count(*) AS n FROM history WHERE team = ? AND user = ?", binds).first?.int("n") ?? 0
            let checks = try db.query("SELECT count(*) AS n FROM ledger WHERE team = ? AND user = ?", binds).first?.int("n") ?? 0
            return (history, checks)
        }
    }

    /// Deletes runs older than `before` and those whose effective retention is `off`; drops the
    /// texts of those under `metadata`. One transaction. Returns how many runs were deleted.
    public func purgeHistory(before: Date, defaultRetention: Retention) async throws -> Int {
        let off = Self.retained(.off, in: "history", defaultRetention: defaultRetention)
        let metadata = Self.retained(.metadata, in: "history", defaultRetention: defaultRetention)
        return try await perform("purge the history") { db in
            // One operation, so one savepoint: it is applied whole or not at all.
            let aged = try db.query("DELETE FROM history WHERE created_at < ? RETURNING id", [.date(before)]).count
            let refused = try db.query("DELETE FROM history WHERE \(off) RETURNING id").count
            _ = try db.query(
                "UPDATE history SET command_line = NULL, result_text = NULL WHERE (command_line IS NOT NULL OR result_text IS NOT NULL) AND \(metadata)")
            return aged + refused
        }
    }
}

extension SQLiteStore {
    /// The SQL condition that a row of `table` (history or ledger: team, user, channel) is kept
    /// at `level`: the default says so, or its user's or its channel's settings row in its team.
    static func retained(_ level: Retention, in table: String, defaultRetention: Retention) -> String {
        if defaultRetention == level { return "1" }
        return """
            EXISTS (SELECT 1 FROM settings s WHERE s.retention = '\(level.rawValue)' AND s.team = \(table).team
                AND ((s.scope_kind = 'user' AND s.subject = \(table).user) OR (s.scope_kind = 'channel' AND s.subject = \(table).channel)))
            """
    }
}
