import Foundation
import RelayCore
import SQLiteNIO

/// How an entry's content is kept in the `content` column: JSON text with sorted keys, so the same
/// content always gives the same text (whoever inspects or diffs the file sees stable rows).
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

extension OutboxEntry {
    /// Reads a row of the `outbox` table. Content that does not decode throws
    /// ``StoreError/unreadableOutboxEntry(id:reason:)`` naming the entry, so callers can tell it from
    /// a broken file (a missing or mistyped column, which throws ``UnexpectedColumnError``).
    init(row: SQLiteRow) throws {
        let id = try row.text("id")
        let rawState = try row.text("state")
        guard let state = State(rawValue: rawState) else {
            throw UnexpectedColumnError(column: "state", expected: "pending, sent or failed")
        }
        let content: Content
        do {
            content = try OutboxContentCoding.decode(try row.text("content"))
        } catch let error as UnexpectedColumnError {
            throw error
        } catch {
            throw StoreError.unreadableOutboxEntry(id: id, reason: OutboxContentCoding.reason(for: error))
        }
        self.init(
            id: id, platform: try row.text("platform"), conversation: try row.text("conversation"),
            address: try row.text("address"), content: content, replaces: row.optionalText("replaces"),
            state: state, attempts: try row.int("attempts"), nextAttemptAt: try row.date("next_attempt_at"),
            createdAt: try row.date("created_at"), platformRef: row.optionalText("platform_ref"),
            lastError: row.optionalText("last_error"))
    }
}
