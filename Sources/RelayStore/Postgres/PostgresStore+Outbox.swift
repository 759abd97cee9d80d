public import Foundation
import Logging
import PostgresNIO
public import RelayPipeline

extension PostgresStore {
    /// Writes a new entry as given; an id already in the outbox is refused (ids are idempotency
    /// keys), across replicas too.
    public func enqueue(_ entry: OutboxEntry) async throws {
        let row = PostgresJSON.encode([try PostgresJSON.Outbox(entry)])
        try await query(
            "enqueue outbox entry \(entry.id)", "SELECT relay_finish_run(NULL, \(owner), NULL, '[]'::jsonb, \(row)::jsonb, NULL)")
    }

    /// Leases up to `limit` due heads until `leaseUntil`, oldest first, in one statement.
    ///
    /// A conversation's head is its oldest pending entry, due or not, leased or not: while it
    /// waits, the conversation waits. The heads are locked `FOR UPDATE SKIP LOCKED` and checked
    /// again once locked, so replicas claiming at once never take the same entry, and an entry
    /// another replica marked meanwhile is left alone.
    ///
    /// An entry whose content this rhea-relay cannot decode is marked failed and logged, as
    /// SQLiteStore does.
    public func claimDueOutbox(now: Date, leaseUntil: Date, limit: Int, excluding: Set<String>) async throws -> [OutboxEntry] {
        guard limit > 0 else { return [] }
        let (at, until) = (now.timeIntervalSince1970, leaseUntil.timeIntervalSince1970)
        let excluded = excluding.sorted().map { PostgresJSON.withoutNUL($0) }
        let rows = try await query(
            "claim due outbox entries",
            """
            WITH heads AS (
                SELECT DISTINCT ON (conversation) id FROM outbox WHERE state = 'pending'
                ORDER BY conversation, created_at, seq
            ), due AS (
                SELECT o.id FROM outbox o JOIN heads USING (id)
                WHERE o.state = 'pending' AND o.next_attempt_at <= \(at) AND (o.leased_until IS NULL OR o.leased_until < \(at))
                    AND NOT (o.platform = ANY(\(excluded)))
                ORDER BY o.created_at, o.seq LIMIT \(limit)
                FOR UPDATE OF o SKIP LOCKED
            )
            UPDATE outbox SET leased_until = \(until), owner = \(owner) FROM due WHERE outbox.id = due.id
            RETURNING outbox.*
            """)
        var claimed: [(order: (Double, Int64), entry: OutboxEntry)] = []
        var unreadable: [StoreError] = []
        for row in rows {
            do {
                claimed.append(((try row.double("created_at"), try row.int64("seq")), try OutboxEntry(stored: row)))
            } catch let error as StoreError {
                guard case .unreadableOutboxEntry = error else { throw error }
                unreadable.append(error)
            }
        }
        var entries = claimed.sorted { $0.order < $1.order }.map(\.entry)
        guard !unreadable.isEmpty else { return entries }
        for error in unreadable {
            guard case .unreadableOutboxEntry(let id, _) = error else { continue }
            logger.error("Marking an unreadable outbox entry failed", metadata: ["outbox.id": .string(id), "error": .string(error.description)])
            try await query(
                "mark outbox entry \(id) failed",
                "UPDATE outbox SET state = 'failed', last_error = \(error.description), leased_until = NULL, owner = NULL WHERE id = \(id)")
        }
        // The failed heads uncovered their conversations' next entries; the readable ones
        // claimed stay leased to this call.
        if entries.count < limit {
            entries += try await claimDueOutbox(now: now, leaseUntil: leaseUntil, limit: limit - entries.count, excluding: excluding)
            entries.sort { $0.createdAt < $1.createdAt }
        }
        return entries
    }

    /// Marks that arrive while one is being written go together in the next statement.
    public func markSent(id: String, platformRef: String?, at: Date) async throws {
        let operation = "mark outbox entry \(id) sent"
        let mark = MarkSentBatcher.Mark(id: id, sentAt: at.timeIntervalSince1970, platformRef: platformRef.map { PostgresJSON.withoutNUL($0) })
        let found = try await marks.mark(mark) { [self] batch in
            Set(try await execute("mark \(batch.count) outbox entries sent", PostgresHotStatements.MarkSent(marks: batch)))
        }
        guard found else { throw StoreError.operationFailed(operation: operation, reason: "no outbox entry has this id") }
    }

    public func markPartDelivered(id: String, parts: Int, platformRef: String?, nextAttemptAt: Date) async throws {
        try await update(
            id: id, operation: "record a delivered part of outbox entry \(id)",
            "UPDATE outbox SET parts_delivered = \(parts), attempts = 0, platform_ref = COALESCE(platform_ref, \(platformRef)), next_attempt_at = \(nextAttemptAt.timeIntervalSince1970), leased_until = NULL, owner = NULL WHERE id = \(id) RETURNING id"
        )
    }

    public func reschedule(id: String, attempts: Int, nextAttemptAt: Date, lastError: String) async throws {
        try await update(
            id: id, operation: "reschedule outbox entry \(id)",
            "UPDATE outbox SET attempts = \(attempts), next_attempt_at = \(nextAttemptAt.timeIntervalSince1970), last_error = \(PostgresJSON.withoutNUL(lastError)), leased_until = NULL, owner = NULL WHERE id = \(id) RETURNING id"
        )
    }

    public func markFailed(id: String, attempts: Int, lastError: String) async throws {
        try await update(
            id: id, operation: "mark outbox entry \(id) failed",
            "UPDATE outbox SET state = 'failed', attempts = \(attempts), last_error = \(PostgresJSON.withoutNUL(lastError)), leased_until = NULL, owner = NULL WHERE id = \(id) RETURNING id"
        )
    }

    public func outboxEntry(id: String) async throws -> OutboxEntry? {
        try await query("read outbox entry \(id)", "SELECT * FROM outbox WHERE id = \(id)").first.map(OutboxEntry.init(stored:))
    }

    public func pendingOutboxCount() async throws -> Int {
        try await query("count pending outbox entries", "SELECT count(*) AS count FROM outbox WHERE state = 'pending'", within: requestTimeout)
            .first?.int("count") ?? 0
    }

    /// Drops the leases this replica holds. Other replicas' leases are theirs until they lapse:
    /// this store cannot tell a live replica from a dead one.
    public func releaseOutboxLeases() async throws {
        try await query(
            "release outbox leases", "UPDATE outbox SET leased_until = NULL, owner = NULL WHERE owner = \(owner) AND leased_until IS NOT NULL")
    }

    public func purgeOutbox(before: Date) async throws {
        try await query(
            "purge the outbox", "DELETE FROM outbox WHERE state IN ('sent', 'failed') AND created_at < \(before.timeIntervalSince1970)")
    }

    /// An update by id; an id with no entry is an error, as in SQLiteStore.
    private func update(id: String, operation: String, _ statement: PostgresQuery) async throws {
        if try await query(operation, statement).isEmpty {
            throw StoreError.operationFailed(operation: operation, reason: "no outbox entry has this id")
        }
    }
}
