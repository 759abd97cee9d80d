public import Foundation
public import RelayCore

/// The one way into the outbox: the entry is written to the store, then the worker is woken.
/// Adapters and the run dispatcher enqueue here; only `OutboxWorker` takes entries out.
public final class Outbox: Sendable {
    public let store: any Store
    /// The time every delivery decision is made by (due times, leases, backoff, pacing).
    public let clock: any RelayClock
    let wakeSignal = WakeSignal()

    public init(store: any Store, clock: any RelayClock = SystemClock()) {
        self.store = store
        self.clock = clock
    }

    /// Writes the entry (durably) and wakes the worker.
    public func enqueue(_ entry: OutboxEntry) async throws {
        try await store.enqueue(entry)
        wakeSignal.signal()
    }

    /// Wakes the worker: entries were written by another way (a run's end).
    public func wake() { wakeSignal.signal() }

    /// A pending entry for `content`, due now, with a fresh id.
    public func entry(
        platform: String, conversation: String, address: String, content: OutboxEntry.Content, replaces: String? = nil
    ) -> OutboxEntry {
        let now = clock.now
        return OutboxEntry(
            id: Self.newID(), platform: platform, conversation: conversation, address: address, content: content,
            replaces: replaces, nextAttemptAt: now, createdAt: now)
    }

    /// A new entry id: random, so ids never collide across restarts or replicas.
    public static func newID() -> String { UUID().uuidString.lowercased() }
}
