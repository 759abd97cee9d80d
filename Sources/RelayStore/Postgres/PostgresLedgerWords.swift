import Foundation
import Logging
import PostgresNIO

/// The ledger's words on PostgreSQL (`ledger.claim_words`): each claim's tokens as the relay
/// splits them (``LedgerSearchQuery/lexemes(_:)``), kept as a `tsvector` under a GIN index, so
/// that a search reads the claims holding its words instead of the team's whole ledger
/// (docs/console.md, "Speed"). Written with each entry (`relay_finish_run`), dropped with its
/// claim by retention, and filled here for entries written without them: schema 13's upgrade and
/// `store copy`.
enum PostgresLedgerWords {
    /// Entries read and written per statement while filling: their claims and words are in
    /// memory together, each claim as long as a chat message allows and its words as long again
    /// (the lexemes, at most `LedgerSearchQuery.lexemesBytes`).
    static let page = 500

    /// Fills the words of every entry that has a claim and no words yet, a page at a time.
    static func fill(_ connection: PostgresConnection, logger: Logger) async throws {
        var after: Int64 = 0
        while true {
            let rows = try await connection.query(
                """
                SELECT id, claim FROM ledger WHERE id > \(after) AND claim IS NOT NULL AND claim_words IS NULL ORDER BY id LIMIT \(page)
                """, logger: logger
            ).collect().map { $0.makeRandomAccess() }
            guard let last = rows.last else { return }
            let words = try rows.map { row in Words(id: try row.int64("id"), words: LedgerSearchQuery.lexemes(try row.text("claim"))) }
            let json = String(decoding: try JSONEncoder().encode(words), as: UTF8.self)
            try await connection.query(
                """
                UPDATE ledger SET claim_words = array_to_tsvector(w.words)
                FROM jsonb_to_recordset(\(json)::jsonb) AS w(id bigint, words text[]) WHERE ledger.id = w.id
                """, logger: logger)
            after = try last.int64("id")
            if rows.count < page { return }
        }
    }

    private struct Words: Encodable {
        var id: Int64
        var words: [String]
    }
}
