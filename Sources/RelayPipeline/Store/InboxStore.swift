public import RelayCore

public import struct Foundation.Date

/// The durable inbox (DESIGN §6): an accepted event is committed here before the platform is
/// acknowledged, and stays until its run's reply is in the outbox — the two change in one
/// transaction — so a crash at any moment loses no acknowledged command and answers none twice.
/// Every `Store` is one.
public protocol InboxStore: Sendable {
    /// Commits an accepted event for `route` and returns its id; with `dedupeKey`, only when the
    /// key is not claimed yet (it is claimed in the same transaction until `expiresAt`) — nil
    /// then: a platform's retry of an event already accepted. The event is kept without its
    /// event key.
    func admit(_ event: Event, route: ReplyRoute, dedupeKey: String?, expiresAt: Date, now: Date) async throws -> Int64?
    /// The inbox items with these ids that are still there, in id order.
    func inboxItems(ids: [Int64]) async throws -> [InboxItem]
    /// Every item's id and team, oldest first: what is still to run (at start).
    func inboxQueue() async throws -> [InboxTicket]
    /// A run's end, in one transaction: what it keeps (`record`: its history row, its
    /// fact-checks) written, `replies` enqueued in the outbox — a reply that names a fact-check
    /// of the record gets its number (`RunRecord.numbered`) — and the item removed.
    ///
    /// With `leaseUntil`, a reply that is its conversation's only pending entry is leased until
    /// then as it is written, and returned: the caller delivers it at once, without a claim
    /// (`OutboxStore.claimDueOutbox`) finding it again. The others wait to be claimed.
    @discardableResult
    func finishRun(id: Int64, record: RunRecord, replies: [OutboxEntry], leaseUntil: Date?) async throws -> [OutboxEntry]
    /// Removes an item that cannot run (its event does not decode); returns whether it was there.
    func dropInboxItem(id: Int64) async throws -> Bool
}

extension InboxStore {
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
