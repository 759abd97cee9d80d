public import RelayCore
public import RelayPipeline

public import struct Foundation.Date

/// An inbox item as SQLiteStore keeps it: with its lease and its turn.
struct InboxRecord: Sendable {
    var item: InboxItem
    var leasedUntil: Date?
    var turn: Int
    /// What the item holds of its team's budget until its run ends.
    var reserved = 0.0

    func waits(at now: Date) -> Bool { leasedUntil.map { $0 < now } ?? true }
}

extension MemoryStore {
    public func admit(
        _ event: Event, route: ReplyRoute, dedupeKey: String?, expiresAt: Date, now: Date, leaseUntil: Date?, budget: BudgetHold?
    ) throws -> Admitted? {
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
            var decision = BudgetAdmission.unchecked
            if let budget {
                let standing = Self.standing(platform: budget.platform, team: budget.team, from: budget.month.start, to: budget.month.end, contents)
                let own = contents.settings[Self.key(.team(platform: budget.platform, team: budget.team))]?.budget
                decision = budget.decision(limit: own ?? budget.defaultLimit, spent: standing.spent, reserved: standing.reserved)
            }
            let id = contents.nextInboxID
            contents.nextInboxID += 1
            let team = ExactText(event.team)
            let teamLast = contents.inbox.values.filter { ExactText($0.item.event.team) == team }.map(\.turn).max() ?? 0
            let oldest = contents.inbox.values.map(\.turn).min() ?? 0
            let reserved = decision == .within ? budget?.reserve ?? 0 : 0
            var admitted = event
            admitted.budget = InboxItem.budget(over: decision == .over, reserved: reserved)
            contents.inbox[id] = InboxRecord(
                item: InboxItem(id: id, event: admitted, route: route, acceptedAt: now), leasedUntil: leaseUntil?.asKeptBySQLite,
                turn: max(teamLast + 1, oldest), reserved: reserved)
            return Admitted(id: id, budget: admitted.budget)
        }
    }

    public func budgetStanding(platform: String, team: String, from: Date, to: Date) throws -> BudgetStanding {
        try withOpenContents { contents throws(StoreError) in Self.standing(platform: platform, team: team, from: from, to: to, contents) }
    }

    static func standing(platform: String, team: String, from: Date, to: Date, _ contents: Contents) -> BudgetStanding {
        let spent = contents.modelCalls.filter(UsageQuery(platform: platform, team: team, from: from, to: to).matches).compactMap(\.cost).reduce(0, +)
        let reserved = contents.inbox.values.filter { $0.item.route.platform == platform && $0.item.event.team == team }.map(\.reserved).reduce(0, +)
        return BudgetStanding(spent: spent, reserved: reserved)
    }

    public func claimInbox(now: Date, leaseUntil: Date, limit: Int) throws -> [InboxItem] {
        guard limit > 0 else { return [] }
        let now = now.asKeptBySQLite
        return try withOpenContents { contents throws(StoreError) in
            let taken = contents.inbox.values.filter { $0.waits(at: now) }.sorted { ($0.turn, $0.item.id) < ($1.turn, $1.item.id) }.prefix(limit)
            for record in taken { contents.inbox[record.item.id]?.leasedUntil = leaseUntil.asKeptBySQLite }
            return taken.map(\.item)
        }
    }

    public func waitingInboxCount(now: Date) throws -> Int {
        let now = now.asKeptBySQLite
        return try withOpenContents { contents throws(StoreError) in contents.inbox.values.filter { $0.waits(at: now) }.count }
    }

    public func inboxQueue() throws -> [InboxTicket] {
        try withOpenContents { contents throws(StoreError) in
            contents.inbox.keys.sorted().map { InboxTicket(id: $0, team: contents.inbox[$0]!.item.event.team) }
        }
    }

    /// Removes the item, writes the run's record and enqueues the replies at once; nothing
    /// changes when any of it is refused, or when the item is gone (``StoreError/leaseLost(id:)``).
    /// With `leaseUntil`, a reply that finds no pending entry in its conversation is leased and
    /// returned, as SQLiteStore does.
    @discardableResult
    public func finishRun(id: Int64, record: RunRecord, replies: [OutboxEntry], leaseUntil: Date?) throws -> [OutboxEntry] {
        try withOpenContents { contents throws(StoreError) in
            guard contents.inbox[id] != nil else { throw .leaseLost(id: id) }
            // As SQLite's transaction: nothing changes unless all of it is accepted.
            var changed = contents
            changed.inbox.removeValue(forKey: id)
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
            contents = changed
            return handed
        }
    }

    public func dropInboxItem(id: Int64) throws -> Bool {
        try withOpenContents { contents throws(StoreError) in contents.inbox.removeValue(forKey: id) != nil }
    }

    public func releaseInboxLeases() throws {
        try withOpenContents { contents throws(StoreError) in
            for id in contents.inbox.keys { contents.inbox[id]?.leasedUntil = nil }
        }
    }

    public func renewLeases(inbox: [Int64], outbox: [String], until: Date) throws {
        let until = until.asKeptBySQLite
        try withOpenContents { contents throws(StoreError) in
            for id in inbox where contents.inbox[id]?.leasedUntil != nil { contents.inbox[id]?.leasedUntil = until }
            for id in outbox.map(ExactText.init) where contents.outbox[id]?.leasedUntil != nil && contents.outbox[id]?.entry.state == .pending {
                contents.outbox[id]?.leasedUntil = until
            }
        }
    }

    /// In memory, one process: nobody else writes work for this one.
    public func watchForWork(_ wake: @escaping @Sendable (StoreWork) -> Void) {}
}
