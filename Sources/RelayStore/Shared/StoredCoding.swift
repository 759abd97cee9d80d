import Foundation
import RelayCore
import RelayPipeline

// How values that every store keeps as JSON text are encoded: the same text in each, so the
// stores refuse and return the same values, and a copy moves them unchanged.

/// How an entry's content is kept in SQLiteStore's `content` column: JSON text with sorted keys, so
/// the same content always gives the same text (whoever inspects or diffs the file sees stable rows).
/// MemoryStore passes content through it too, so that both stores refuse and return the same content.
enum OutboxContentCoding {
    static func encode(_ content: OutboxEntry.Content) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(content), as: UTF8.self)
    }

    static func decode(_ text: String) throws -> OutboxEntry.Content {
        try JSONDecoder().decode(OutboxEntry.Content.self, from: Data(text.utf8))
    }

    /// A one-line reason for a decoding failure: what went wrong and where, without the whole
    /// `DecodingError` dump (which repeats the coding path as a list of keys).
    static func reason(for error: any Error) -> String {
        guard let error = error as? DecodingError else { return String(describing: error) }
        let context: DecodingError.Context
        switch error {
        case .dataCorrupted(let found), .keyNotFound(_, let found), .typeMismatch(_, let found),
            .valueNotFound(_, let found):
            context = found
        @unknown default:
            return String(describing: error)
        }
        let path = context.codingPath.map(\.stringValue).joined(separator: ".")
        let detail = context.debugDescription
        return path.isEmpty
            ? "its content could not be decoded (\(detail))"
            : "its content could not be decoded (\(detail) at \(path))"
    }
}

/// How an inbox item's event is kept in the `event` column: JSON, as parked runs always were.
enum InboxEventCoding {
    static func encode(_ event: Event) throws -> String {
        String(decoding: try JSONEncoder().encode(event), as: UTF8.self)
    }

    static func decode(_ text: String) throws -> Event {
        try JSONDecoder().decode(Event.self, from: Data(text.utf8))
    }
}

/// The judges' part of a ledger row: one JSON array.
enum LedgerJudgesCoding {
    static func encode(_ judges: [LedgerJudge]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(judges), as: UTF8.self)
    }

    static func decode(_ text: String) throws -> [LedgerJudge] {
        try JSONDecoder().decode([LedgerJudge].self, from: Data(text.utf8))
    }

    /// Separators of the judges' votes as a store keeps them (`votesSQLite`, `votesPostgres`):
    /// a judge's fields apart, the judges apart. Taken out of what a judge's
    /// fields hold, so none can be misread.
    static let field: Character = "\u{1F}"
    static let record: Character = "\u{1E}"

    /// Each judge's model, verdict, confidence and failure, without its answer, from
    /// `model<US>verdict<US>confidence<US>error<RS>…` (the `votes` column): what the council
    /// learns from (2 000 fact-checks) and the council page reads (1 000). Decoding their JSON
    /// whole took 18–50 µs a fact-check (`console-bench`), and making this from the JSON as they
    /// were read, 16 ms of PostgreSQL's time for the page's 1 000: so each store keeps it.
    static func votes(_ text: String?) -> [LedgerJudge] {
        guard let text, !text.isEmpty else { return [] }
        return text.split(separator: record, omittingEmptySubsequences: false).map { vote in
            let parts = vote.split(separator: field, omittingEmptySubsequences: false).map(String.init)
            func part(_ index: Int) -> String? { parts.count > index && !parts[index].isEmpty ? parts[index] : nil }
            return LedgerJudge(
                model: parts[0], verdict: part(1).flatMap(Verdict.init(rawValue:)), confidence: part(2).flatMap(Double.init), error: part(3))
        }
    }

    /// The votes of `judges` (a JSON column) in SQLite's SQL, the judges in order (`json_each`):
    /// the `votes` column, kept by a trigger as each entry is written (migration 15).
    static func votesSQLite(of judges: String) -> String {
        """
        (SELECT group_concat(
                replace(replace(j.value ->> 'model', char(30), ''), char(31), '') || char(31) || IFNULL(j.value ->> 'verdict', '') || char(31)
                    || IFNULL(j.value ->> 'confidence', '') || char(31) || replace(replace(IFNULL(j.value ->> 'error', ''), char(30), ''), char(31), ''),
                char(30))
            FROM json_each(\(judges)) AS j)
        """
    }

    /// The same in PostgreSQL's (schema 13).
    static func votesPostgres(of judges: String) -> String {
        """
        (SELECT string_agg(
                translate(j.value ->> 'model', chr(30) || chr(31), '') || chr(31) || coalesce(j.value ->> 'verdict', '') || chr(31)
                    || coalesce(j.value ->> 'confidence', '') || chr(31) || translate(coalesce(j.value ->> 'error', ''), chr(30) || chr(31), ''),
                chr(30) ORDER BY j.n)
            FROM jsonb_array_elements(\(judges)::jsonb) WITH ORDINALITY AS j(value, n))
        """
    }
}
