public import RelayCore
public import RelayPipeline
import SQLiteNIO

public import struct Foundation.Date

extension SQLiteStore {
    /// Claims the dedupe key (when given) and inserts the item, in one operation of the writer:
    /// concurrent admissions share a commit, and the caller returns only once it is committed.
    public func admit(_ event: Event, route: ReplyRoute, dedupeKey: String?, expiresAt: Date, now: Date) async throws -> Int64? {
        var event = event
        event.eventKey = nil
        let encoded = try InboxEventCoding.encode(event)
        let team = event.team
        return try await perform("accept an event from \(route.platform) into the inbox") { db -> Int64? in
            if let dedupeKey, try !Self.claim(key: dedupeKey, expiresAt: expiresAt, now: now, db) { return nil }
            let row = try db.query(
                """
                INSERT INTO inbox (team, platform, conversation, address, event, accepted_at)
                VALUES (?, ?, ?, ?, ?, ?) RETURNING id
                """,
                [.text(team), .text(route.platform), .text(route.conversation), .text(route.address), .text(encoded), .date(now)]
            ).first
            return try row.map { Int64(try $0.int("id")) }
        }
    }

    /// The items still in the inbox among `ids`, in id order. An item whose event does not decode
    /// throws ``StoreError/unreadableInboxItem(id:reason:)``.
    public func inboxItems(ids: [Int64]) async throws -> [InboxItem] {
        guard !ids.isEmpty else { return [] }
        return try await perform("read \(ids.count) inbox items") { db in
            try db.query(inList: "SELECT * FROM inbox WHERE id IN ({list}) ORDER BY id", ids.map { .integer(SQLiteInt64($0)) })
                .map(InboxItem.init(row:)).sorted { $0.id < $1.id }
        }
    }

    public func inboxQueue() async throws -> [InboxTicket] {
        try await perform("read the inbox") { db in
            try db.query("SELECT id, team FROM inbox ORDER BY id").map { InboxTicket(id: Int64(try $0.int("id")), team: try $0.text("team")) }
        }
    }

    /// Writes the run's record, enqueues the replies and deletes the item in one operation:
    /// after a crash either all of it happened or none (and the run runs again). A reply with no
    /// pending entry before it in its conversation is leased as it is written, when `leaseUntil`
    /// is given, and returned.
    @discardableResult
    public func finishRun(id: Int64, record: RunRecord, replies: [OutboxEntry], leaseUntil: Date?) async throws -> [OutboxEntry] {
        let ledger = try record.ledger.map(LedgerRow.init)
        // A reply that names a fact-check is encoded once the fact-check has its number.
        let numbers = record.numberedByReply != nil
        let rows = numbers ? [] : try replies.map { try OutboxRow($0) }
        return try await perform("finish the run of inbox item \(id)") { db in
            let ledgerIDs = try Self.insert(record, ledger: ledger, db)
            let replies = numbers ? replies.map { record.numbered($0, ledgerIDs: ledgerIDs) } : replies
            let rows = numbers ? try replies.map { try OutboxRow($0) } : rows
            var handed: [OutboxEntry] = []
            for (reply, row) in zip(replies, rows) {
                if let leaseUntil, try Self.isIdle(conversation: reply.conversation, db) {
                    try Self.insert(row, leasedUntil: leaseUntil, db)
                    handed.append(reply)
                } else {
                    try Self.insert(row, db)
                }
            }
            _ = try db.query("DELETE FROM inbox WHERE id = ?", [.integer(SQLiteInt64(id))])
            return handed
        }
    }

    public func dropInboxItem(id: Int64) async throws -> Bool {
        try await perform("remove inbox item \(id)") { db in
            try !db.query("DELETE FROM inbox WHERE id = ? RETURNING id", [.integer(SQLiteInt64(id))]).isEmpty
        }
    }
}

extension InboxItem {
    init(row: SQLRow) throws {
        let id = Int64(try row.int("id"))
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
