public import RelayCore

public import struct Foundation.Date

/// The durable inbox (docs/serving.md, "Accepting"): an accepted event is committed here before the platform is
/// acknowledged, and stays until its run's reply is in the outbox — the two change in one
/// transaction — so a crash at any moment loses no acknowledged command and answers none twice.
/// Every `Store` is one.
public protocol InboxStore: Sendable {
    /// Commits an accepted event for `route` and returns its id; with `dedupeKey`, only when the
    /// key is not claimed yet (it is claimed in the same transaction until `expiresAt`) — nil
    /// then: a platform's retry of an event already accepted, by this process or another
    /// sharing the store. The event is kept without its event key.
    ///
    /// With `leaseUntil`, the item is leased to this process as it is written (it runs here at
    /// once); without, it waits for a claim (``claimInbox(now:leaseUntil:limit:)``), here or on
    /// another replica.
    ///
    /// With `budget`, and a budget for the team (its own, else `budget.defaultLimit`), the item
    /// holds `budget.reserve` of its team's month if that fits beside what the month spent (its
    /// model calls' cost) and what the team's other items hold; if it does not, the item is
    /// admitted all the same, marked over (`Admitted.budget`, `InboxItem.event.budget`), and
    /// holds nothing — its run says so and asks no model. The look and the hold are one step
    /// with the insert: replicas admitting at once keep one count.
    func admit(
        _ event: Event, route: ReplyRoute, dedupeKey: String?, expiresAt: Date, now: Date, leaseUntil: Date?, budget: BudgetHold?
    ) async throws -> Admitted?
    /// Leases up to `limit` items that wait — never leased, or whose lease ended before `now` (a
    /// process that died with them) — until `leaseUntil`, and returns them in turn order: teams
    /// take turns (an item's turn is one past its team's last one, and never before the oldest
    /// item's), so one team's flood does not starve another; within a turn, oldest first. Two
    /// claims at once never return the same item. An item whose event does not decode is
    /// removed and logged rather than returned.
    func claimInbox(now: Date, leaseUntil: Date, limit: Int) async throws -> [InboxItem]
    /// How many items wait for a claim (unleased, or leased until before `now`).
    func waitingInboxCount(now: Date) async throws -> Int
    /// Every item's id and team, oldest first, leased or not: what the inbox holds.
    func inboxQueue() async throws -> [InboxTicket]
    /// A run's end, in one transaction: what it keeps (`record`: its history row, its
    /// fact-checks) written, `replies` enqueued in the outbox — a reply that names a fact-check
    /// of the record gets its number (`RunRecord.numbered`) — and the item removed.
    ///
    /// Fenced: when the item is no longer this process's — gone, or leased by another replica
    /// since this one's lease lapsed — nothing is written and ``StoreError/leaseLost(id:)`` is
    /// thrown: the run was taken over, and its other run answers.
    ///
    /// With `leaseUntil`, a reply that is its conversation's only pending entry is leased until
    /// then as it is written, and returned: the caller delivers it at once, without a claim
    /// (`OutboxStore.claimDueOutbox`) finding it again. The others wait to be claimed.
    @discardableResult
    func finishRun(id: Int64, record: RunRecord, replies: [OutboxEntry], leaseUntil: Date?) async throws -> [OutboxEntry]
    /// What a team's month has spent (its model calls' cost from `from` to `to`), and what its
    /// inbox items hold for runs not ended yet.
    func budgetStanding(platform: String, team: String, from: Date, to: Date) async throws -> BudgetStanding
    /// Removes an item that cannot run (its event does not decode); returns whether it was there.
    func dropInboxItem(id: Int64) async throws -> Bool
    /// Drops the inbox leases of processes known to be gone: at start, a single-process store's
    /// leases are all a dead process's; a shared store drops only this process's own.
    func releaseInboxLeases() async throws
}

/// An admitted item: its id, and what admission decided of its team's budget (`BudgetHold`).
public struct Admitted: Sendable, Hashable {
    public var id: Int64
    public var budget: BudgetAdmission

    public init(id: Int64, budget: BudgetAdmission = .unchecked) {
        self.id = id
        self.budget = budget
    }

    public var overBudget: Bool { budget == .over }
}

extension InboxStore {
    /// Admits an item that waits for a claim.
    public func admit(_ event: Event, route: ReplyRoute, dedupeKey: String?, expiresAt: Date, now: Date) async throws -> Int64? {
        try await admit(event, route: route, dedupeKey: dedupeKey, expiresAt: expiresAt, now: now, leaseUntil: nil)
    }

    /// Admits an item with no look at a budget; its id.
    public func admit(_ event: Event, route: ReplyRoute, dedupeKey: String?, expiresAt: Date, now: Date, leaseUntil: Date?) async throws -> Int64? {
        try await admit(event, route: route, dedupeKey: dedupeKey, expiresAt: expiresAt, now: now, leaseUntil: leaseUntil, budget: nil)?.id
    }

    /// A run's end that keeps nothing but its replies, every one left for a claim.
    public func finishRun(id: Int64, replies: [OutboxEntry]) async throws {
        try await finishRun(id: id, record: RunRecord(), replies: replies, leaseUntil: nil)
    }

    /// A run's end that keeps nothing but its replies.
    @discardableResult
    public func finishRun(id: Int64, replies: [OutboxEntry], leaseUntil: Date?) async throws -> [OutboxEntry] {
        try await finishRun(id: id, record: RunRecord(), replies: replies, leaseUntil: leaseUntil)
    }
}
