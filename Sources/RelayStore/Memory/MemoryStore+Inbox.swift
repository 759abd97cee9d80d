public import RelayCore
public import RelayPipeline

public import struct Foundation.Date

extension MemoryStore {
    public func admit(_ event: Event, route: ReplyRoute, dedupeKey: String?, expiresAt: Date, now: Date) throws -> Int64? {
        var event = event
        event.eventKey = nil
        // Through the JSON SQLiteStore keeps events in, so both refuse and return the same.
        let operation = "accept an event from \(route.platform) into the inbox"
        do {
            event = try InboxEventCoding.decode(InboxEventCoding.encode(event))
        } catch {
            throw StoreError.operationFailed(operation: operation, reason: StoreError.reason(for: error))
        }
        let (expiresAt, now) = (expiresAt.asKeptBySQLite, now.asKeptBySQLite)
        return try withOpenContents { contents throws(StoreError) in
            if let dedupeKey {
                let key = ExactText(dedupeKey)
                if let claimed = contents.dedupe[key], claimed > now { return nil }
                contents.dedupe[key] = expiresAt
            }
            let id = contents.nextInboxID
            contents.nextInboxID += 1
            contents.inbox[id] = InboxItem(id: id, event: event, route: route, acceptedAt: now)
            return id
        }
    }

    public func inboxItems(ids: [Int64]) throws -> [InboxItem] {
        try withOpenContents { contents throws(StoreError) in
            Set(ids).sorted().compactMap { contents.inbox[$0] }
        }
    }

    public func inboxQueue() throws -> [InboxTicket] {
        try withOpenContents { contents throws(StoreError) in
            contents.inbox.keys.sorted().map { InboxTicket(id: $0, team: contents.inbox[$0]!.event.team) }
        }
    }

    /// Writes the run's record, enqueues the replies and removes the item at once; nothing
    /// changes when any of it is refused. With `leaseUntil`, a reply that finds no pending entry
    /// in its conversation is leased and returned, as SQLiteStore does.
    @discardableResult
    public func finishRun(id: Int64, record: RunRecord, replies: [OutboxEntry], leaseUntil: Date?) throws -> [OutboxEntry] {
        try withOpenContents { contents throws(StoreError) in
            // As SQLite's transaction: nothing changes unless all of it is accepted.
            var changed = contents
            let ledgerIDs = try Self.insert(record, into: &changed)
            let replies = try replies.map { reply throws(StoreError) in try Self.prepared(record.numbered(reply, ledgerIDs: ledgerIDs)) }
            var handed: [OutboxEntry] = []
            for reply in replies {
                let conversation = ExactText(reply.conversation)
                let idle = !changed.outbox.values.contains { $0.entry.state == .pending && ExactText($0.entry.conversation) == conversation }
                try Self.insert(reply, into: &changed)
                if let leaseUntil, idle {
                    changed.outbox[ExactText(reply.id)]?.leasedUntil = leaseUntil.asKeptBySQLite
                    handed.append(reply)
                }
            }
            changed.inbox.removeValue(forKey: id)
            contents = changed
            return handed
        }
    }

    public func dropInboxItem(id: Int64) throws -> Bool {
        try withOpenContents { contents throws(StoreError) in contents.inbox.removeValue(forKey: id) != nil }
    }
}
