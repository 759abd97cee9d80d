public import Foundation
import PostgresNIO
public import RelayCore
public import RelayPipeline

extension PostgresStore {
    /// Claims the dedupe key (when given) and inserts the item in one statement: a platform's
    /// retry that reaches another replica finds the key taken, whichever commits first.
    public func admit(_ event: Event, route: ReplyRoute, dedupeKey: String?, expiresAt: Date, now: Date) async throws -> Int64? {
        var event = event
        event.eventKey = nil
        let encoded = try InboxEventCoding.encode(event)
        let (expires, accepted) = (expiresAt.timeIntervalSince1970, now.timeIntervalSince1970)
        let rows = try await query(
            "accept an event from \(route.platform) into the inbox",
            """
            WITH claim AS (
                INSERT INTO dedupe (key, expires_at) SELECT k, \(expires) FROM (SELECT \(dedupeKey)::text AS k) AS given
                WHERE k IS NOT NULL
                ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at WHERE dedupe.expires_at <= \(accepted)
                RETURNING key
            )
            INSERT INTO inbox (team, platform, conversation, address, event, accepted_at)
            SELECT \(event.team), \(route.platform), \(route.conversation), \(route.address), \(encoded), \(accepted)
            WHERE \(dedupeKey)::text IS NULL OR EXISTS (SELECT 1 FROM claim)
            RETURNING id
            """)
        return try rows.first?.int64("id")
    }

    /// The items still in the inbox among `ids`, in id order. An item whose event does not decode
    /// throws ``StoreError/unreadableInboxItem(id:reason:)``.
    public func inboxItems(ids: [Int64]) async throws -> [InboxItem] {
        guard !ids.isEmpty else { return [] }
        return try await query("read \(ids.count) inbox items", "SELECT * FROM inbox WHERE id = ANY(\(ids)) ORDER BY id")
            .map(InboxItem.init(postgres:))
    }

    public func inboxQueue() async throws -> [InboxTicket] {
        try await query("read the inbox", "SELECT id, team FROM inbox ORDER BY id").map {
            InboxTicket(id: try $0.int64("id"), team: try $0.text("team"))
        }
    }

    /// The run's end in one call of ``PostgresFunctions/finishRun``: one round trip, unless the
    /// run changes the team's data (applied first, in the same transaction) or its reply names a
    /// fact-check (whose number is taken from the sequence first).
    @discardableResult
    public func finishRun(id: Int64, record: RunRecord, replies: [OutboxEntry], leaseUntil: Date?) async throws -> [OutboxEntry] {
        let operation = "finish the run of inbox item \(id)"
        let ledgerIDs = try await newLedgerIDs(count: record.ledger.count)
        let replies = replies.map { record.numbered($0, ledgerIDs: ledgerIDs) }
        let call = try finishCall(id: id, record: record, ledgerIDs: ledgerIDs, replies: replies, leaseUntil: leaseUntil)
        let rows: [PostgresRandomAccessRow]
        if record.changes.isEmpty {
            rows = try await query(operation, call)
        } else {
            let changes = record.changes
            rows = try await transaction(operation) { connection in
                for change in changes { try await Self.apply(change, connection) }
                return try await connection.query(call)
            }
            dropCached(for: changes)
        }
        let handed = Set(try rows.map { try $0.text("id") })
        return replies.filter { handed.contains($0.id) }
    }

    public func dropInboxItem(id: Int64) async throws -> Bool {
        try await !query("remove inbox item \(id)", "DELETE FROM inbox WHERE id = \(id) RETURNING id").isEmpty
    }

    /// The call of the schema's function for a run's end (`id` 0 with no item: a record alone).
    func finishCall(id: Int64, record: RunRecord, ledgerIDs: [Int64], replies: [OutboxEntry], leaseUntil: Date?) throws -> PostgresQuery {
        let history = try record.history.map { try PostgresJSON.encode(PostgresJSON.History($0)) }
        let ledger = try PostgresJSON.encode(zip(record.ledger, ledgerIDs).map { try PostgresJSON.Ledger($0, id: $1) })
        let outbox = try PostgresJSON.encode(replies.map { try PostgresJSON.Outbox($0) })
        let lease = leaseUntil?.timeIntervalSince1970
        return "SELECT relay_finish_run(\(id), \(owner), \(history)::jsonb, \(ledger)::jsonb, \(outbox)::jsonb, \(lease)) AS id"
    }

    /// `count` fresh ledger ids, in order (none asked: no round trip).
    func newLedgerIDs(count: Int) async throws -> [Int64] {
        guard count > 0 else { return [] }
        return try await query(
            "number \(count) fact-checks",
            "SELECT nextval(pg_get_serial_sequence('ledger', 'id')) AS id FROM generate_series(1, \(count)) ORDER BY 1"
        ).map { try $0.int64("id") }
    }
}

// What a run keeps, on its own (the terminal, `rhea-relay run`).
extension PostgresStore {
    public func recordRun(_ entry: HistoryEntry) async throws {
        _ = try await record(RunRecord(history: entry))
    }

    public func record(_ run: RunRecord) async throws -> [Int64] {
        let operation = "record a run in team \(run.history?.team ?? run.ledger.first?.team ?? "")"
        let ledgerIDs = try await newLedgerIDs(count: run.ledger.count)
        // Item 0 is never an inbox id (identities start at 1): the function finds none to remove.
        let call = try finishCall(id: 0, record: run, ledgerIDs: ledgerIDs, replies: [], leaseUntil: nil)
        if run.changes.isEmpty {
            try await query(operation, call)
        } else {
            let changes = run.changes
            try await transaction(operation) { connection in
                for change in changes { try await Self.apply(change, connection) }
                try await connection.query(call)
            }
            dropCached(for: changes)
        }
        return ledgerIDs
    }

    public func recordConsensus(_ entry: LedgerEntry) async throws -> Int64 {
        try await record(RunRecord(ledger: [entry]))[0]
    }
}

// Dedupe.
extension PostgresStore {
    public func claimEvent(key: String, expiresAt: Date, now: Date) async throws -> Bool {
        try await !query(
            "claim event key \(key)",
            """
            INSERT INTO dedupe (key, expires_at) VALUES (\(key), \(expiresAt.timeIntervalSince1970))
            ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at WHERE dedupe.expires_at <= \(now.timeIntervalSince1970)
            RETURNING key
            """
        ).isEmpty
    }

    public func purgeExpiredClaims(now: Date) async throws {
        try await query("purge expired event keys", "DELETE FROM dedupe WHERE expires_at <= \(now.timeIntervalSince1970)")
    }
}

extension InboxItem {
    init(postgres row: PostgresRandomAccessRow) throws {
        let id = try row.int64("id")
        let event: Event
        do {
            event = try InboxEventCoding.decode(try row.text("event"))
        } catch let error as UnexpectedColumnError {
            throw error
        } catch {
            throw StoreError.unreadableInboxItem(id: id, reason: OutboxContentCoding.reason(for: error))
        }
        self.init(
            id: id, event: event,
            route: ReplyRoute(platform: try row.text("platform"), conversation: try row.text("conversation"), address: try row.text("address")),
            acceptedAt: try row.date("accepted_at"))
    }
}
