import PostgresNIO
public import RelayCore
import RelayPipeline

public import struct Foundation.Date

extension PostgresStore {
    public func history(team: String, user: String, limit: Int) async throws -> [HistoryEntry] {
        guard limit > 0 else { return [] }
        let (team, user) = (PostgresJSON.withoutNUL(team), PostgresJSON.withoutNUL(user))
        return try await query(
            "read the history of user \(user) in team \(team)",
            "SELECT * FROM history WHERE team = \(team) AND user_id = \(user) ORDER BY created_at DESC, id DESC LIMIT \(limit)"
        ).map(HistoryEntry.init(stored:))
    }

    public func runCounts(team: String, from: Date, to: Date) async throws -> [RunCount] {
        let team = PostgresJSON.withoutNUL(team)
        let days = RunCount.days(touching: from, to)
        return try await query(
            "count the runs of team \(team)",
            """
            SELECT day, command, succeeded, failure, sum(runs)::bigint AS runs FROM run_days
            WHERE team = \(team) AND day >= \(days.lowerBound) AND day < \(days.upperBound)
            GROUP BY 1, 2, 3, 4 HAVING sum(runs) <> 0
            """
        ).map { row in
            let failure = try row.text("failure")
            return RunCount(
                day: Date(timeIntervalSince1970: Double(try row.int("day")) * 86_400), command: try row.text("command"),
                succeeded: try row.bool("succeeded"), failure: failure.isEmpty ? nil : failure, count: try row.int("runs"))
        }
    }

    public func connectionsReport() async throws -> ConnectionsReport {
        let errors = try await query(
            "read the outbox's newest errors",
            """
            SELECT DISTINCT ON (platform) platform, last_error, created_at FROM outbox WHERE last_error IS NOT NULL
            ORDER BY platform, created_at DESC, seq DESC
            """
        ).map { (try $0.text("platform"), try $0.text("last_error"), try $0.date("created_at")) }
        let activity = try await query(
            "read the outbox's activity",
            """
            SELECT platform, max(created_at) AS last, count(*) FILTER (WHERE state = 'pending') AS pending FROM outbox
            GROUP BY platform ORDER BY platform
            """
        ).map { row in
            let platform = try row.text("platform")
            let error = errors.first { $0.0 == platform }
            return ConnectionsReport.Activity(
                platform: platform, lastQueued: try row.date("last"), lastError: error?.1, lastErrorQueued: error?.2, pending: try row.int("pending"))
        }
        let leases = try await query("read the leases", "SELECT name, holder, expires_at FROM leases ORDER BY name").map { row in
            ConnectionsReport.Lease(
                name: try row.text("name"), holder: try row.optionalText("holder"),
                expiresAt: try row.optionalDouble("expires_at").map(Date.init(timeIntervalSince1970:)))
        }
        return ConnectionsReport(activity: activity, leases: leases)
    }

    public func clearHistory(team: String, user: String) async throws -> Int {
        let (team, user) = (PostgresJSON.withoutNUL(team), PostgresJSON.withoutNUL(user))
        return try await query(
            "clear the history of user \(user) in team \(team)", "DELETE FROM history WHERE team = \(team) AND user_id = \(user) RETURNING id"
        ).count
    }

    public func keptCount(team: String, user: String) async throws -> (history: Int, factChecks: Int) {
        let (team, user) = (PostgresJSON.withoutNUL(team), PostgresJSON.withoutNUL(user))
        let row = try await query(
            "count what user \(user) keeps in team \(team)",
            """
            SELECT (SELECT count(*) FROM history WHERE team = \(team) AND user_id = \(user)) AS history,
                (SELECT count(*) FROM ledger WHERE team = \(team) AND user_id = \(user)) AS checks
            """
        ).first
        return (try row?.int("history") ?? 0, try row?.int("checks") ?? 0)
    }

    /// Ages history out and applies retention, in one transaction.
    public func purgeHistory(before: Date, defaultRetention: Retention) async throws -> Int {
        let off = Self.retained(.off, in: "history", defaultRetention: defaultRetention)
        let metadata = Self.retained(.metadata, in: "history", defaultRetention: defaultRetention)
        return try await transaction("purge the history") { connection in
            let aged = try await connection.query("DELETE FROM history WHERE created_at < \(before.timeIntervalSince1970) RETURNING id").count
            let refused = try await connection.query("DELETE FROM history WHERE \(unescaped: off) RETURNING id").count
            try await connection.query(
                """
                UPDATE history SET command_line = NULL, result_text = NULL
                WHERE (command_line IS NOT NULL OR result_text IS NOT NULL) AND \(unescaped: metadata)
                """)
            return aged + refused
        }
    }

    /// The SQL condition that a row of `table` (history or ledger) is kept at `level`: the
    /// default says so, or its user's or its channel's settings row in its team.
    static func retained(_ level: Retention, in table: String, defaultRetention: Retention) -> String {
        if defaultRetention == level { return "true" }
        return """
            EXISTS (SELECT 1 FROM settings s WHERE s.retention = '\(level.rawValue)' AND s.team = \(table).team
                AND ((s.scope_kind = 'user' AND s.subject = \(table).user_id) OR (s.scope_kind = 'channel' AND s.subject = \(table).channel)))
            """
    }
}
