import Foundation
import RelayCore
import RelayPipeline

/// Rows handed to the schema's functions as JSON (`jsonb_to_record`), and the one rule text
/// obeys on its way into PostgreSQL.
enum PostgresJSON {
    /// Compact JSON by `JSONValue`'s own writer (Foundation's `JSONEncoder` took a twentieth of
    /// the relay's time on this path), with U+0000 made U+FFFD.
    static func encode(_ value: JSONValue) -> String {
        withoutNUL(json: String(decoding: value.serialized() ?? Array("null".utf8), as: UTF8.self))
    }

    static func encode(_ rows: [some Row]) -> String {
        encode(.array(rows.map(\.json)))
    }

    /// PostgreSQL text cannot hold U+0000 (SQLite's can): the shared store keeps U+FFFD in its
    /// place, the one way its texts differ from the embedded store's.
    static func withoutNUL(_ text: String) -> String {
        text.utf8.contains(0) ? text.replacingOccurrences(of: "\u{0}", with: "\u{FFFD}") : text
    }

    /// The same for JSON text, where U+0000 is the escape `\u0000` (which `jsonb` refuses); an
    /// escaped backslash followed by `u0000` is text, and stays.
    static func withoutNUL(json: String) -> String {
        guard containsEscapedNUL(json) else { return json }
        var bytes = Array(json.utf8)
        var index = 0
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "\\"), index + 1 < bytes.count else {
                index += 1
                continue
            }
            if bytes[index + 1] == UInt8(ascii: "u"), index + 5 < bytes.count, bytes[(index + 2)...(index + 5)].elementsEqual("0000".utf8) {
                bytes.replaceSubrange((index + 2)...(index + 5), with: "fffd".utf8)
            }
            index += 2
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether `json` holds `\u0000`: a scan of its bytes (every reply's JSON passes here, and
    /// `String.contains` with a string goes through Foundation's slower search).
    private static func containsEscapedNUL(_ json: String) -> Bool {
        var utf8 = json.utf8.makeIterator()
        var matched = 0
        let pattern = Array("\\u0000".utf8)
        while let byte = utf8.next() {
            if byte == pattern[matched] {
                matched += 1
                if matched == pattern.count { return true }
            } else {
                matched = byte == pattern[0] ? 1 : 0
            }
        }
        return false
    }

    /// A number as PostgreSQL's `double precision` reads it from JSON: NaN is NULL (as SQLite
    /// keeps it), infinities are the words its input function knows.
    static func number(_ value: Double?) -> JSONValue {
        guard let value, !value.isNaN else { return .null }
        if value.isInfinite { return .string(value > 0 ? "Infinity" : "-Infinity") }
        return .double(value)
    }

    static func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
    static func int(_ value: Int?) -> JSONValue { value.map(JSONValue.int) ?? .null }

    /// A row handed to a function, as `jsonb_to_record` reads it (snake_case keys).
    protocol Row {
        var json: JSONValue { get }
    }

    /// A `history` row.
    struct History: Row {
        let json: JSONValue

        init(_ entry: HistoryEntry) {
            json = .object([
                "team": .string(entry.team), "user_id": .string(entry.user), "channel": .string(entry.channel), "command": .string(entry.command),
                "command_line": text(entry.commandLine), "result_text": text(entry.resultText), "succeeded": .bool(entry.succeeded),
                "agreement": number(entry.agreement), "models_answered": int(entry.modelsAnswered), "models_asked": int(entry.modelsAsked),
                "elapsed": number(entry.elapsed), "created_at": number(entry.createdAt.timeIntervalSince1970),
                "verdict": text(entry.verdict?.rawValue), "score_meaning": text(entry.scoreMeaning?.rawValue), "agreeing": int(entry.agreeing),
                "failure": text(entry.failure),
            ])
        }
    }

    /// A `model_calls` row.
    struct ModelCall: Row {
        let json: JSONValue

        init(_ call: ModelCallRecord) {
            json = .object([
                "platform": .string(call.platform), "team": .string(call.team), "user_id": .string(call.user), "command": .string(call.command),
                "run": .string(call.run), "model": .string(call.model), "tokens_in": .int(call.tokensIn), "tokens_out": .int(call.tokensOut),
                "estimated": .bool(call.estimated), "cost": number(call.cost), "elapsed_ms": .int(call.elapsedMilliseconds),
                "at": number(call.at.timeIntervalSince1970),
            ])
        }
    }

    /// A `ledger` row with the id it was given.
    struct Ledger: Row {
        let json: JSONValue

        init(_ entry: LedgerEntry, id: Int64) throws {
            let entry = entry.storable
            json = .object([
                "id": .int(Int(id)), "team": .string(entry.team), "user_id": .string(entry.user), "channel": .string(entry.channel),
                "origin": .string(entry.origin.rawValue), "claim": text(entry.claim), "answer": text(entry.answer),
                "verdict": text(entry.verdict?.rawValue), "score": number(entry.score), "score_meaning": .string(entry.scoreMeaning.rawValue),
                "answered": .int(entry.answered), "asked": .int(entry.asked), "judges": .string(try LedgerJudgesCoding.encode(entry.judges)),
                "backend": .string(entry.backend), "prompts_version": text(entry.promptsVersion),
                "created_at": number(entry.createdAt.timeIntervalSince1970), "mark_verdict": text(entry.mark?.verdict.rawValue),
                "marked_by": text(entry.mark?.user), "marked_at": number(entry.mark?.markedAt.timeIntervalSince1970),
                "claim_words": entry.claim.map { .array(LedgerSearchQuery.lexemes($0).map(JSONValue.string)) } ?? .null,
            ])
        }
    }

    /// An `outbox` row, its content encoded as SQLiteStore encodes it.
    struct Outbox: Row {
        let json: JSONValue

        init(_ entry: OutboxEntry) throws {
            json = .object([
                "id": .string(entry.id), "platform": .string(entry.platform), "conversation": .string(entry.conversation),
                "address": .string(entry.address), "content": .string(try OutboxContentCoding.encode(entry.content)),
                "replaces": text(entry.replaces), "state": .string(entry.state.rawValue), "attempts": .int(entry.attempts),
                "parts_delivered": .int(entry.partsDelivered), "next_attempt_at": number(entry.nextAttemptAt.timeIntervalSince1970),
                "created_at": number(entry.createdAt.timeIntervalSince1970), "platform_ref": text(entry.platformRef),
                "last_error": text(entry.lastError),
            ])
        }
    }
}
