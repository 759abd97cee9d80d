import RelayCore

public import struct Foundation.Date

/// The outbox part of the store (docs/serving.md, "Delivery"): replies are written before they are sent and marked
/// sent after, so a restart resends whatever was not confirmed. Every `Store` is one.
public protocol OutboxStore: Sendable {
    /// Writes a new entry (state pending). Before anything is sent.
    func enqueue(_ entry: OutboxEntry) async throws
    /// Leases up to `limit` entries until `leaseUntil`, oldest first, and returns them. Only the
    /// oldest pending entry of each conversation is a candidate, and only when it is due
    /// (`nextAttemptAt <= now`) and not leased (no lease, or one that ended before `now`): so a
    /// conversation's replies go out one at a time and in order, even across retries.
    /// Entries of the `excluding` platforms are left to others: a replica of a shared store
    /// sends a platform whose limits count per bot only while it holds its delivery lease (docs/replicas.md).
    func claimDueOutbox(now: Date, leaseUntil: Date, limit: Int, excluding: Set<String>) async throws -> [OutboxEntry]
    /// Delivered: state sent, the platform's message id kept for later edits (a nil one keeps
    /// what an earlier part recorded), lease dropped.
    func markSent(id: String, platformRef: String?, at: Date) async throws
    /// One more part accepted: `partsDelivered` becomes `parts`, the attempts start over, the
    /// entry stays pending and is due at `nextAttemptAt`; `platformRef`, when given and none is
    /// stored yet, is kept (the first part's message id). Lease dropped.
    func markPartDelivered(id: String, parts: Int, platformRef: String?, nextAttemptAt: Date) async throws
    /// Not delivered yet: count the attempt, try again at `nextAttemptAt`, lease dropped.
    func reschedule(id: String, attempts: Int, nextAttemptAt: Date, lastError: String) async throws
    /// Given up: state failed, with the reason.
    func markFailed(id: String, attempts: Int, lastError: String) async throws
    func outboxEntry(id: String) async throws -> OutboxEntry?
    /// Pending entries (leased or not): the outbox depth.
    func pendingOutboxCount() async throws -> Int
    /// Drops every lease: at start, a single-process store's leases belong to a process that is gone.
    func releaseOutboxLeases() async throws
    /// Deletes sent and failed entries created before `before` (they hold reply text).
    func purgeOutbox(before: Date) async throws
}

extension OutboxStore {
    /// Claims due entries of every platform.
    public func claimDueOutbox(now: Date, leaseUntil: Date, limit: Int) async throws -> [OutboxEntry] {
        try await claimDueOutbox(now: now, leaseUntil: leaseUntil, limit: limit, excluding: [])
    }
}
