import Foundation
import PostgresNIO
import RelayCore
import RelayPipeline

/// A row as both SQL stores read it, by column name: the records are decoded once, here, from
/// either engine's rows. A missing or mistyped column throws ``UnexpectedColumnError``.
protocol StoredRow {
    /// The column that holds a record's user: `user` in SQLite, `user_id` in PostgreSQL (where
    /// `user` is a reserved word).
    static var userColumn: String { get }
    func text(_ column: String) throws -> String
    func optionalText(_ column: String) throws -> String?
    func int(_ column: String) throws -> Int
    func optionalInt(_ column: String) throws -> Int?
    func double(_ column: String) throws -> Double
    func optionalDouble(_ column: String) throws -> Double?
    func bool(_ column: String) throws -> Bool
    func date(_ column: String) throws -> Date
}

extension SQLRow: StoredRow {
    static var userColumn: String { "user" }
}

extension PostgresRandomAccessRow: StoredRow {
    static var userColumn: String { "user_id" }
}

extension StoredRow {
    func int64(_ column: String) throws -> Int64 { Int64(try int(column)) }
    func optionalDate(_ column: String) throws -> Date? { try optionalDouble(column).map(Date.init(timeIntervalSince1970:)) }
}

extension OutboxEntry {
    /// Reads a row of the `outbox` table. Content that does not decode throws
    /// ``StoreError/unreadableOutboxEntry(id:reason:)`` naming the entry, so callers can tell it from
    /// a broken store (a missing or mistyped column, which throws ``UnexpectedColumnError``).
    init(stored row: some StoredRow) throws {
        let id = try row.text("id")
        guard let state = State(rawValue: try row.text("state")) else {
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
            address: try row.text("address"), content: content, replaces: try row.optionalText("replaces"),
            state: state, attempts: try row.int("attempts"), partsDelivered: try row.int("parts_delivered"),
            nextAttemptAt: try row.date("next_attempt_at"), createdAt: try row.date("created_at"),
            platformRef: try row.optionalText("platform_ref"), lastError: try row.optionalText("last_error"))
    }
}

extension InboxItem {
    /// Reads a row of the `inbox` table; an event that does not decode throws
    /// ``StoreError/unreadableInboxItem(id:reason:)``.
    init(stored row: some StoredRow) throws {
        let id = try row.int64("id")
        let event: Event
        do {
            event = try InboxEventCoding.decode(try row.text("event"))
        } catch let error as UnexpectedColumnError {
            throw error
        } catch {
            throw StoreError.unreadableInboxItem(id: id, reason: OutboxContentCoding.reason(for: error))
        }
        var admitted = event
        admitted.budget = InboxItem.budget(over: try row.bool("over_budget"), reserved: try row.double("reserved"))
        self.init(
            id: id, event: admitted,
            route: ReplyRoute(platform: try row.text("platform"), conversation: try row.text("conversation"), address: try row.text("address")),
            acceptedAt: try row.date("accepted_at"))
    }
}

extension HistoryEntry {
    init<Row: StoredRow>(stored row: Row) throws {
        self.init(
            team: try row.text("team"), user: try row.text(Row.userColumn), channel: try row.text("channel"),
            command: try row.text("command"), commandLine: try row.optionalText("command_line"),
            resultText: try row.optionalText("result_text"), succeeded: try row.bool("succeeded"),
            agreement: try row.optionalDouble("agreement"), modelsAnswered: try row.optionalInt("models_answered"),
            modelsAsked: try row.optionalInt("models_asked"), elapsed: try row.double("elapsed"),
            createdAt: try row.date("created_at"), verdict: try row.optionalText("verdict").flatMap(Verdict.init(rawValue:)),
            scoreMeaning: try row.optionalText("score_meaning").flatMap(ScoreMeaning.init(rawValue:)), agreeing: try row.optionalInt("agreeing"),
            failure: try row.optionalText("failure"))
    }
}

extension LedgerEntry {
    init<Row: StoredRow>(stored row: Row) throws {
        try self.init(stored: row, judges: LedgerJudgesCoding.decode(try row.text("judges")))
    }

    /// The entry with `judges` read another way than from its JSON (`LedgerJudgesCoding.votes`).
    init<Row: StoredRow>(stored row: Row, judges: [LedgerJudge]) throws {
        var mark: LedgerMark?
        if let verdict = try row.optionalText("mark_verdict").flatMap(Verdict.init(rawValue:)), let user = try row.optionalText("marked_by"),
            let at = try row.optionalDate("marked_at")
        {
            mark = LedgerMark(verdict: verdict, user: user, markedAt: at)
        }
        self.init(
            id: try row.int64("id"), team: try row.text("team"), user: try row.text(Row.userColumn), channel: try row.text("channel"),
            origin: LedgerOrigin(rawValue: try row.text("origin")) ?? .tribunal, claim: try row.optionalText("claim"),
            answer: try row.optionalText("answer"), verdict: try row.optionalText("verdict").flatMap(Verdict.init(rawValue:)),
            score: try row.double("score"), scoreMeaning: ScoreMeaning(rawValue: try row.text("score_meaning")) ?? .agreement,
            answered: try row.int("answered"), asked: try row.int("asked"), judges: judges,
            backend: try row.text("backend"), promptsVersion: try row.optionalText("prompts_version"), createdAt: try row.date("created_at"),
            mark: mark)
    }
}

extension LedgerStamp {
    init(stored row: some StoredRow) throws {
        self.init(
            id: try row.int64("id"), backend: try row.text("backend"), mark: try row.optionalText("mark_verdict").flatMap(Verdict.init(rawValue:)))
    }
}

extension CustomCommand {
    init(stored row: some StoredRow) throws {
        self.init(
            team: try row.text("team"), name: try row.text("name"), template: try row.text("template"),
            creator: try row.text("creator"), createdAt: try row.date("created_at"))
    }
}

extension AdminGrant {
    init(stored row: some StoredRow) throws {
        self.init(
            platform: try row.text("platform"), team: try row.text("team"), user: try row.text("user_id"), userName: try row.text("user_name"),
            grantedBy: try row.text("granted_by"), grantedAt: try row.date("granted_at"))
    }
}

extension ModelCallRecord {
    init(stored row: some StoredRow) throws {
        self.init(
            platform: try row.text("platform"), team: try row.text("team"), user: try row.text("user_id"), command: try row.text("command"),
            run: try row.text("run"), model: try row.text("model"), tokensIn: try row.int("tokens_in"), tokensOut: try row.int("tokens_out"),
            estimated: try row.bool("estimated"), cost: try row.optionalDouble("cost"), elapsedMilliseconds: try row.int("elapsed_ms"),
            at: try row.date("at"))
    }
}

extension SavedChain {
    init(stored row: some StoredRow) throws {
        self.init(
            team: try row.text("team"), name: try row.text("name"), source: try row.text("source"),
            creator: try row.text("creator"), createdAt: try row.date("created_at"), updatedAt: try row.date("updated_at"))
    }
}

/// How the `receipts` setting is stored: a word, as the other settings are, so a value a newer
/// version writes is logged and read as unset rather than misread.
enum ReceiptsColumn: String {
    case on, off

    init(_ isOn: Bool) { self = isOn ? .on : .off }

    var isOn: Bool { self == .on }
}
