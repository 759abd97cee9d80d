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
}
