import Foundation
import RelayCore
import RelayPipeline

/// Rows handed to the schema's functions as JSON (`jsonb_to_record`), and the one rule text
/// obeys on its way into PostgreSQL.
enum PostgresJSON {
    static func encode(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return withoutNUL(json: String(decoding: try encoder.encode(value), as: UTF8.self))
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
    struct Number: Encodable {
        let value: Double?

        init(_ value: Double?) { self.value = value }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            guard let value, !value.isNaN else { return try container.encodeNil() }
            if value.isInfinite { return try container.encode(value > 0 ? "Infinity" : "-Infinity") }
            try container.encode(value)
        }
    }

    /// A `history` row.
    struct History: Encodable {
        let team, userId, channel, command: String
        let commandLine, resultText: String?
        let succeeded: Bool
        let agreement: Number
        let modelsAnswered, modelsAsked: Int?
        let elapsed, createdAt: Number

        init(_ entry: HistoryEntry) {
            (team, userId, channel, command) = (entry.team, entry.user, entry.channel, entry.command)
            (commandLine, resultText, succeeded) = (entry.commandLine, entry.resultText, entry.succeeded)
            agreement = Number(entry.agreement)
            (modelsAnswered, modelsAsked) = (entry.modelsAnswered, entry.modelsAsked)
            elapsed = Number(entry.elapsed)
            createdAt = Number(entry.createdAt.timeIntervalSince1970)
        }
    }

    /// A `ledger` row with the id it was given.
    struct Ledger: Encodable {
        let id: Int64
        let team, userId, channel, origin: String
        let claim, answer, verdict: String?
        let score: Number
        let scoreMeaning: String
        let answered, asked: Int
        let judges, backend: String
        let promptsVersion: String?
        let createdAt: Number
        let markVerdict, markedBy: String?
        let markedAt: Number

        init(_ entry: LedgerEntry, id: Int64) throws {
            let entry = entry.storable
            self.id = id
            (team, userId, channel, origin) = (entry.team, entry.user, entry.channel, entry.origin.rawValue)
            (claim, answer, verdict) = (entry.claim, entry.answer, entry.verdict?.rawValue)
            score = Number(entry.score)
            scoreMeaning = entry.scoreMeaning.rawValue
            (answered, asked) = (entry.answered, entry.asked)
            judges = try LedgerJudgesCoding.encode(entry.judges)
            backend = entry.backend
            promptsVersion = entry.promptsVersion
            createdAt = Number(entry.createdAt.timeIntervalSince1970)
            (markVerdict, markedBy) = (entry.mark?.verdict.rawValue, entry.mark?.user)
            markedAt = Number(entry.mark?.markedAt.timeIntervalSince1970)
        }
    }

    /// An `outbox` row, its content encoded as SQLiteStore encodes it.
    struct Outbox: Encodable {
        let id, platform, conversation, address, content: String
        let replaces: String?
        let state: String
        let attempts, partsDelivered: Int
        let nextAttemptAt, createdAt: Number
        let platformRef, lastError: String?

        init(_ entry: OutboxEntry) throws {
            (id, platform, conversation, address) = (entry.id, entry.platform, entry.conversation, entry.address)
            content = try OutboxContentCoding.encode(entry.content)
            (replaces, state, attempts, partsDelivered) = (entry.replaces, entry.state.rawValue, entry.attempts, entry.partsDelivered)
            nextAttemptAt = Number(entry.nextAttemptAt.timeIntervalSince1970)
            createdAt = Number(entry.createdAt.timeIntervalSince1970)
            (platformRef, lastError) = (entry.platformRef, entry.lastError)
        }
    }
}
