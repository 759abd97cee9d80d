public import Foundation
import Logging
import RelayCore
public import RelayPipeline
import SQLiteNIO

extension SQLiteStore {
    /// Writes a new entry as given (callers enqueue pending ones). An id that is already in the
    /// outbox is refused rather than overwritten: ids are idempotency keys, and replacing an entry
    /// could drop a reply that was never sent.
    public func enqueue(_ entry: OutboxEntry) async throws {
        let row = try OutboxRow(entry)
        try await perform("enqueue outbox entry \(entry.id)") { db in try Self.insert(row, db) }
    }

    /// The insert, as a step of an operation (a run's end enqueues its reply with it); leased
    /// until `leasedUntil` when one is given.
    static func insert(_ row: OutboxRow, leasedUntil: Date? = nil, _ db: Database) throws {
        // `seq` is one past the largest in the table, so it grows with every enqueue among the
        // entries still there (purged entries are finished ones, whose order no longer matters).
        let inserted = try db.query(
            """
            INSERT INTO outbox (id, seq, platform, conversation, address, content, replaces, state, attempts,
                parts_delivered, next_attempt_at, created_at, platform_ref, last_error, leased_until)
            VALUES (?, (SELECT IFNULL(MAX(seq), 0) + 1 FROM outbox), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (id) DO NOTHING RETURNING id
            """,
            row.binds + [leasedUntil.map { .date($0) } ?? .null])
        if inserted.isEmpty {
            throw StoreError.operationFailed(operation: "enqueue outbox entry \(row.id)", reason: "an entry with this id already exists")
        }
    }

    /// Whether no entry of `conversation` is pending: a new one would be its head, due at once.
    static func isIdle(conversation: String, _ db: Database) throws -> Bool {
        try db.query("SELECT 1 FROM outbox WHERE state = 'pending' AND conversation = ? LIMIT 1", [.text(conversation)]).isEmpty
    }

    /// Leases up to `limit` due entries until `leaseUntil` and returns them, oldest first; none when
    /// `limit` is not positive.
    ///
    /// A conversation's candidate is its oldest pending entry (by `createdAt`, then enqueue order),
    /// whether or not that one is due or leased: while it waits, the conversation's later entries
    /// wait behind it. Selecting and leasing share one transaction, so no other claim (from this
    /// process or another on the same file) can take the same entries.
    ///
    /// An entry whose content this rhea-relay cannot decode is marked failed, with the reason in
    /// its `lastError`, and logged; it is not returned. Otherwise one unreadable entry would stop
    /// every claim, and its conversation for good.
    public func claimDueOutbox(now: Date, leaseUntil: Date, limit: Int, excluding: Set<String>) async throws -> [OutboxEntry] {
        // SQLite reads a negative LIMIT as "no limit"; a caller asking for none should get none.
        guard limit > 0 else { return [] }
        // The steps are static: the body runs in the writer's drain, not on this store.
        let logger = logger
        return try await perform("claim due outbox entries") { db in
            // One operation, so one savepoint: it is applied whole or not at all.
            var claimed = try Self.dueHeads(now: now, limit: limit, excluding: excluding, db)
            while !claimed.unreadable.isEmpty {
                try Self.markUnreadable(claimed.unreadable, db, logger: logger)
                // The failed heads uncovered their conversations' next entries: select again.
                claimed = try Self.dueHeads(now: now, limit: limit, excluding: excluding, db)
            }
            try Self.lease(claimed.entries.map(\.id), until: leaseUntil, db)
            return claimed.entries
        }
    }

    /// Delivered: state sent, `sentAt` and the platform's message id kept (a nil one keeps what
    /// an earlier part recorded), lease dropped.
    public func markSent(id: String, platformRef: String?, at: Date) async throws {
        try await update(
            id: id, operation: "mark outbox entry \(id) sent",
            set: "state = 'sent', sent_at = ?, platform_ref = COALESCE(?, platform_ref), leased_until = NULL",
            [.date(at), .text(orNull: platformRef)])
    }

    /// One more part accepted: the count and (the first time) the message id kept, attempts
    /// started over, due again at `nextAttemptAt`; lease dropped. One statement, so a crash
    /// leaves either the old count or the new one.
    public func markPartDelivered(id: String, parts: Int, platformRef: String?, nextAttemptAt: Date) async throws {
        try await update(
            id: id, operation: "record a delivered part of outbox entry \(id)",
            set: "parts_delivered = ?, attempts = 0, platform_ref = COALESCE(platform_ref, ?), next_attempt_at = ?, leased_until = NULL",
            [.integer(SQLiteInt64(parts)), .text(orNull: platformRef), .date(nextAttemptAt)])
    }

    /// Not delivered yet: records the attempts and the error, retries at `nextAttemptAt`, drops the
    /// lease. The state is left as it is (pending).
    public func reschedule(id: String, attempts: Int, nextAttemptAt: Date, lastError: String) async throws {
        try await update(
            id: id, operation: "reschedule outbox entry \(id)",
            set: "attempts = ?, next_attempt_at = ?, last_error = ?, leased_until = NULL",
            [.integer(SQLiteInt64(attempts)), .date(nextAttemptAt), .text(lastError)])
    }

    /// Given up: state failed, with the attempts and the reason; lease dropped.
    public func markFailed(id: String, attempts: Int, lastError: String) async throws {
        try await update(
            id: id, operation: "mark outbox entry \(id) failed",
            set: "state = 'failed', attempts = ?, last_error = ?, leased_until = NULL",
            [.integer(SQLiteInt64(attempts)), .text(lastError)])
    }

    /// The entry with this id, in any state; nil when there is none. Throws
    /// ``StoreError/unreadableOutboxEntry(id:reason:)`` when its content cannot be decoded.
    public func outboxEntry(id: String) async throws -> OutboxEntry? {
        try await perform("read outbox entry \(id)") { db in
            try db.query("SELECT * FROM outbox WHERE id = ?", [.text(id)]).first.map(OutboxEntry.init(stored:))
        }
    }

    /// Pending entries, leased or not: the outbox depth.
    public func pendingOutboxCount() async throws -> Int {
        try await perform("count pending outbox entries") { db in
            try db.query("SELECT COUNT(*) AS count FROM outbox WHERE state = 'pending'").first?.int("count") ?? 0
        }
    }

    /// Drops every lease. Called at start: this store has one process per file, so any lease left
    /// in it belongs to a process that is gone, and its entries should not wait for it to lapse.
    public func releaseOutboxLeases() async throws {
        try await perform("release outbox leases") { db in
            _ = try db.query("UPDATE outbox SET leased_until = NULL WHERE leased_until IS NOT NULL")
        }
    }

    /// Deletes sent and failed entries created before `before`; pending ones are kept whatever
    /// their age, since they are still to be delivered.
    public func purgeOutbox(before: Date) async throws {
        try await perform("purge the outbox") { db in
            _ = try db.query(
                "DELETE FROM outbox WHERE state IN ('sent', 'failed') AND created_at < ?", [.date(before)])
        }
    }

    // MARK: Claim steps (inside the claim's transaction)

    /// Every conversation's oldest pending entry that is due and not leased, oldest first, split
    /// into the entries that decode and the unreadable ones.
    private static func dueHeads(
        now: Date, limit: Int, excluding: Set<String>, _ db: Database
    ) throws -> (entries: [OutboxEntry], unreadable: [StoreError]) {
        // The platforms left out, as a JSON array (json_each reads it).
        let excluded = JSONValue.array(excluding.sorted().map(JSONValue.string)).serialized().map { String(decoding: $0, as: UTF8.self) } ?? "[]"
        // The window numbers each conversation's pending entries in delivery order; only the first
        // is a candidate, and the due/lease filters apply after numbering so that an entry waiting
        // for its retry still holds back the entries behind it.
        let rows = try db.query(
            """
            SELECT * FROM (
                SELECT *, ROW_NUMBER() OVER (PARTITION BY conversation ORDER BY created_at, seq) AS position
                FROM outbox WHERE state = 'pending'
            )
            WHERE position = 1 AND next_attempt_at <= ? AND (leased_until IS NULL OR leased_until < ?)
                AND platform NOT IN (SELECT value FROM json_each(?))
            ORDER BY created_at, seq
            LIMIT ?
            """,
            [.date(now), .date(now), .text(excluded), .integer(SQLiteInt64(limit))])
        var entries: [OutboxEntry] = []
        var unreadable: [StoreError] = []
        for row in rows {
            do {
                entries.append(try OutboxEntry(stored: row))
            } catch let error as StoreError {
                guard case .unreadableOutboxEntry = error else { throw error }
                unreadable.append(error)
            }
        }
        return (entries, unreadable)
    }

    /// Marks entries whose content cannot be decoded failed, keeping the reason.
    private static func markUnreadable(_ errors: [StoreError], _ db: Database, logger: Logger) throws {
        for error in errors {
            guard case .unreadableOutboxEntry(let id, _) = error else { continue }
            logger.error(
                "Marking an unreadable outbox entry failed",
                metadata: ["outbox.id": .string(id), "error": .string(error.description)])
            _ = try db.query(
                "UPDATE outbox SET state = 'failed', last_error = ?, leased_until = NULL WHERE id = ?",
                [.text(error.description), .text(id)])
        }
    }

    /// Leases the claimed entries.
    private static func lease(_ ids: [String], until: Date, _ db: Database) throws {
        try db.query(inList: "UPDATE outbox SET leased_until = ? WHERE id IN ({list})", leading: [.date(until)], ids.map { .text($0) })
    }

    // MARK: Updates by id

    /// Runs `UPDATE outbox SET <set> WHERE id = ?`; an id with no entry is an error, since the
    /// caller is acting on an entry it believes exists (a lost update would go unnoticed otherwise).
    private func update(id: String, operation: String, set: String, _ binds: [SQLiteData]) async throws {
        try await perform(operation) { db in
            let updated = try db.query(
                "UPDATE outbox SET \(set) WHERE id = ? RETURNING id", binds + [.text(id)])
            if updated.isEmpty {
                throw StoreError.operationFailed(operation: operation, reason: "no outbox entry has this id")
            }
        }
    }
}

/// An entry's column values, encoded before the operation runs (the writer's drain does only
/// SQLite work).
struct OutboxRow: Sendable {
    let id: String
    let binds: [SQLiteData]

    init(_ entry: OutboxEntry) throws {
        id = entry.id
        binds = [
            .text(entry.id), .text(entry.platform), .text(entry.conversation), .text(entry.address),
            .text(try OutboxContentCoding.encode(entry.content)), .text(orNull: entry.replaces),
            .text(entry.state.rawValue), .integer(SQLiteInt64(entry.attempts)),
            .integer(SQLiteInt64(entry.partsDelivered)), .date(entry.nextAttemptAt),
            .date(entry.createdAt), .text(orNull: entry.platformRef), .text(orNull: entry.lastError),
        ]
    }
}
