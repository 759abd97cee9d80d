public import Foundation
public import RelayCore
import SQLiteNIO

extension SQLiteStore {
    public func ledgerEntry(team: String, id: Int64) async throws -> LedgerEntry? {
        try await perform("read ledger entry \(id) of team \(team)") { db in
            try db.query("SELECT * FROM ledger WHERE team = ? AND id = ?", [.text(team), .integer(Int(id))]).first.map(LedgerEntry.init(stored:))
        }
    }

    public func searchLedger(team: String, words: [String], limit: Int) async throws -> [LedgerEntry] {
        guard limit > 0 else { return [] }
        let match = LedgerSearchQuery.fts5(words)
        return try await perform("search the ledger of team \(team)") { db in
            let rows: [SQLRow]
            if let match {
                // The team's entries newest first (its index), each kept if the words' matches
                // hold it, until `limit`: a word in a third of 100 000 claims reads the few
                // hundred newest instead of fetching and sorting every match (docs/console.md).
                rows = try db.query(
                    """
                    SELECT * FROM ledger WHERE team = ? AND id IN (SELECT rowid FROM ledger_search WHERE ledger_search MATCH ?)
                    ORDER BY created_at DESC, id DESC LIMIT ?
                    """,
                    [.text(team), .text(match), .integer(limit)])
            } else if words.isEmpty {
                rows = try db.query("SELECT * FROM ledger WHERE team = ? ORDER BY created_at DESC, id DESC LIMIT ?", [.text(team), .integer(limit)])
            } else {
                rows = []  // words with nothing searchable in them (punctuation only) match nothing
            }
            return try rows.map(LedgerEntry.init(stored:))
        }
    }

    public func markedLedger(team: String, limit: Int) async throws -> [LedgerEntry] {
        guard limit > 0 else { return [] }
        return try await perform("read the marked ledger entries of team \(team)") { db in
            try db.query(
                """
                SELECT * FROM ledger WHERE team = ? AND mark_verdict IS NOT NULL
                ORDER BY created_at DESC, id DESC LIMIT ?
                """,
                [.text(team), .integer(limit)]
            ).map { row in try LedgerEntry(stored: row, judges: LedgerJudgesCoding.votes(row.optionalText("votes"))) }
        }
    }

    public func ledgerEntries(team: String) async throws -> [LedgerEntry] {
        try await perform("export the ledger of team \(team)") { db in
            try db.query("SELECT * FROM ledger WHERE team = ? ORDER BY created_at, id", [.text(team)]).map(LedgerEntry.init(stored:))
        }
    }

    public func markLedger(team: String, id: Int64, mark: LedgerMark) async throws -> Bool {
        try await perform("mark ledger entry \(id) of team \(team)") { db in try Self.markLedger(team: team, id: id, mark: mark, db) }
    }

    static func markLedger(team: String, id: Int64, mark: LedgerMark, _ db: Database) throws -> Bool {
        try !db.query(
            "UPDATE ledger SET mark_verdict = ?, marked_by = ?, marked_at = ? WHERE team = ? AND id = ? RETURNING id",
            [.text(mark.verdict.rawValue), .text(mark.user), .date(mark.markedAt), .text(team), .integer(Int(id))]
        ).isEmpty
    }

    public func recentLedger(limit: Int) async throws -> [LedgerEntry] {
        guard limit > 0 else { return [] }
        return try await perform("read the newest ledger entries") { db in
            try db.query("SELECT * FROM ledger ORDER BY created_at DESC, id DESC LIMIT ?", [.integer(limit)]).map {
                row in try LedgerEntry(stored: row, judges: LedgerJudgesCoding.votes(row.optionalText("votes")))
            }
        }
    }

    public func ledgerStamps(limit: Int) async throws -> [LedgerStamp] {
        guard limit > 0 else { return [] }
        return try await perform("read the newest ledger entries' stamps") { db in
            try db.query("SELECT id, backend, mark_verdict FROM ledger ORDER BY created_at DESC, id DESC LIMIT ?", [.integer(limit)]).map(
                LedgerStamp.init(stored:))
        }
    }

    public func clearLedger(team: String, user: String) async throws -> Int {
        try await perform("clear the ledger entries of user \(user) in team \(team)") { db in try Self.clearLedger(team: team, user: user, db) }
    }

    static func clearLedger(team: String, user: String, _ db: Database) throws -> Int {
        try db.query("DELETE FROM ledger WHERE team = ? AND user = ? RETURNING id", [.text(team), .text(user)]).count
    }

    public func purgeLedger(before: Date, defaultRetention: Retention) async throws -> Int {
        let off = Self.retained(.off, in: "ledger", defaultRetention: defaultRetention)
        let metadata = Self.retained(.metadata, in: "ledger", defaultRetention: defaultRetention)
        return try await perform("purge the ledger") { db in
            let aged = try db.query("DELETE FROM ledger WHERE created_at < ? RETURNING id", [.date(before)]).count
            let refused = try db.query("DELETE FROM ledger WHERE \(off) RETURNING id").count
            // Metadata keeps verdicts, scores and timings: the claim, the answer and every judge's
            // answer go.
            _ = try db.query(
                """
                UPDATE ledger SET claim = NULL, answer = NULL,
                    judges = (SELECT json_group_array(json_remove(value, '$.answer')) FROM json_each(ledger.judges))
                WHERE (claim IS NOT NULL OR answer IS NOT NULL OR judges LIKE '%"answer"%') AND \(metadata)
                """)
            return aged + refused
        }
    }
}
