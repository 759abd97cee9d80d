public import Foundation
import PostgresNIO
public import RelayCore
import RelayPipeline

extension PostgresStore {
    public func ledgerEntry(team: String, id: Int64) async throws -> LedgerEntry? {
        try await query(
            "read ledger entry \(id) of team \(team)", "SELECT * FROM ledger WHERE team = \(PostgresJSON.withoutNUL(team)) AND id = \(id)"
        ).first.map(LedgerEntry.init(stored:))
    }

    /// Matches claims as SQLite's FTS5 index does (``LedgerSearchQuery``): the team's entries
    /// whose words (``PostgresLedgerWords``, the relay's own tokens) hold the query's, newest
    /// first, a page at a time, each checked here until `limit` match. PostgreSQL's own text
    /// search splits and folds words differently; matching here keeps one answer in every store.
    public func searchLedger(team: String, words: [String], limit: Int) async throws -> [LedgerEntry] {
        guard limit > 0 else { return [] }
        let team = PostgresJSON.withoutNUL(team)
        if words.isEmpty {
            return try await query(
                "search the ledger of team \(team)",
                "SELECT * FROM ledger WHERE team = \(team) ORDER BY created_at DESC, id DESC LIMIT \(limit)"
            ).map(LedgerEntry.init(stored:))
        }
        guard let tsquery = LedgerSearchQuery.tsquery(words) else { return [] }
        // Only the claims the index finds are read to check, a page at a time: 500 first, then
        // twice as many each time up to 20 000 (all but a word of several tokens, which must be
        // in a row, match as found); the whole entries, with their votes, only for those that
        // match (docs/benchmarks.md, "console-bench").
        var matched: [Int64] = []
        var after: (Double, Int64)?
        var page = 500
        while matched.count < limit {
            defer { page = min(page * 2, 20_000) }
            let rows = try await query(
                "search the ledger of team \(team)",
                """
                SELECT id, created_at, claim FROM ledger WHERE team = \(team) AND claim IS NOT NULL
                    AND claim_words @@ \(tsquery)::tsquery
                    AND (\(after?.0)::double precision IS NULL OR (created_at, id) < (\(after?.0), \(after?.1)))
                ORDER BY created_at DESC, id DESC LIMIT \(page)
                """)
            for row in rows where LedgerSearchQuery.matches(try row.text("claim"), words: words) {
                matched.append(try row.int64("id"))
                if matched.count == limit { break }
            }
            guard rows.count == page, let last = rows.last else { break }
            after = (try last.double("created_at"), try last.int64("id"))
        }
        guard !matched.isEmpty else { return [] }
        return try await query(
            "read the ledger entries found in team \(team)",
            "SELECT * FROM ledger WHERE team = \(team) AND id = ANY(\(matched)) ORDER BY created_at DESC, id DESC"
        ).map(LedgerEntry.init(stored:))
    }

    public func markedLedger(team: String, limit: Int) async throws -> [LedgerEntry] {
        guard limit > 0 else { return [] }
        return try await query(
            "read the marked ledger entries of team \(team)",
            """
            SELECT * FROM ledger WHERE team = \(PostgresJSON.withoutNUL(team))
                AND mark_verdict IS NOT NULL
            ORDER BY created_at DESC, id DESC LIMIT \(limit)
            """
        ).map { row in try LedgerEntry(stored: row, judges: LedgerJudgesCoding.votes(try row.optionalText("votes"))) }
    }

    public func ledgerEntries(team: String) async throws -> [LedgerEntry] {
        try await query(
            "export the ledger of team \(team)", "SELECT * FROM ledger WHERE team = \(PostgresJSON.withoutNUL(team)) ORDER BY created_at, id"
        ).map(LedgerEntry.init(stored:))
    }

    public func markLedger(team: String, id: Int64, mark: LedgerMark) async throws -> Bool {
        try await change(.markLedger(team: team, id: id, mark: mark), "mark ledger entry \(id) of team \(team)")
    }

    public func recentLedger(limit: Int) async throws -> [LedgerEntry] {
        guard limit > 0 else { return [] }
        return try await query(
            "read the newest ledger entries",
            "SELECT * FROM ledger ORDER BY created_at DESC, id DESC LIMIT \(limit)"
        ).map { row in try LedgerEntry(stored: row, judges: LedgerJudgesCoding.votes(try row.optionalText("votes"))) }
    }

    public func ledgerStamps(limit: Int) async throws -> [LedgerStamp] {
        guard limit > 0 else { return [] }
        return try await query(
            "read the newest ledger entries' stamps", "SELECT id, backend, mark_verdict FROM ledger ORDER BY created_at DESC, id DESC LIMIT \(limit)"
        ).map(LedgerStamp.init(stored:))
    }

    public func clearLedger(team: String, user: String) async throws -> Int {
        let (team, user) = (PostgresJSON.withoutNUL(team), PostgresJSON.withoutNUL(user))
        return try await query(
            "clear the ledger entries of user \(user) in team \(team)", "DELETE FROM ledger WHERE team = \(team) AND user_id = \(user) RETURNING id"
        ).count
    }

    public func purgeLedger(before: Date, defaultRetention: Retention) async throws -> Int {
        let off = Self.retained(.off, in: "ledger", defaultRetention: defaultRetention)
        let metadata = Self.retained(.metadata, in: "ledger", defaultRetention: defaultRetention)
        return try await transaction("purge the ledger") { connection in
            let aged = try await connection.query("DELETE FROM ledger WHERE created_at < \(before.timeIntervalSince1970) RETURNING id").count
            let refused = try await connection.query("DELETE FROM ledger WHERE \(unescaped: off) RETURNING id").count
            // Metadata keeps verdicts, scores and timings: the claim, the answer and every judge's
            // answer go (the judges' JSON is rewritten without its `answer` keys).
            try await connection.query(
                """
                UPDATE ledger SET claim = NULL, claim_words = NULL, answer = NULL,
                    judges = COALESCE((SELECT jsonb_agg(value - 'answer' ORDER BY ordinality) FROM jsonb_array_elements(ledger.judges::jsonb) WITH ORDINALITY), '[]'::jsonb)::text
                WHERE (claim IS NOT NULL OR answer IS NOT NULL OR judges LIKE '%"answer"%') AND \(unescaped: metadata)
                """)
            return aged + refused
        }
    }
}
