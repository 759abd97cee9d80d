import Foundation
public import RelayCore
import Synchronization

/// The one way into the outbox: the entry is written to the store, then the worker is woken.
/// Adapters and the run dispatcher enqueue here; only `OutboxWorker` takes entries out.
///
/// A run's reply usually finds its conversation idle: the store then leases it to this process as
/// it writes it (`InboxStore.finishRun`), and it is handed to the worker in memory — no claim has
/// to find it. Anything else written here asks the worker for a claim; so does the end of a
/// delivery in a conversation where something was written meanwhile (it may be the head now).
public final class Outbox: Sendable {
    public let store: any Store
    /// The time every delivery decision is made by (due times, leases, backoff, pacing).
    public let clock: any RelayClock
    /// How long a reply handed over at a run's end stays leased (the worker's claim lease).
    let lease: Duration
    let wakeSignal = WakeSignal()
    private let handoff = Mutex(Handoff())

    struct Handoff {
        /// Whether a worker takes replies in memory: from after it dropped the leases of an earlier
        /// process (a lease taken before that would be dropped too) until it stops.
        var open = false
        /// Replies leased at their run's end, waiting for the worker to start them.
        var ready: [OutboxEntry] = []
        /// Entries may be due in the store: the worker should claim (set at first, so a start
        /// claims what an earlier process left).
        var claimWanted = true
        /// Conversations with entries written for a claim and not delivered yet: the end of a
        /// delivery there asks for a claim.
        var waiting: Set<String> = []
    }

    public init(store: any Store, clock: any RelayClock = SystemClock(), lease: Duration = DeliveryPolicy().lease) {
        self.store = store
        self.clock = clock
        self.lease = lease
    }

    /// Writes the entry (durably) and wakes the worker.
    public func enqueue(_ entry: OutboxEntry) async throws {
        try await store.enqueue(entry)
        stored(forClaim: [entry])
    }

    /// A run's end: what it keeps is written, its replies enter the outbox and its inbox item
    /// leaves, in one change; the replies that are their conversation's head go to the worker
    /// at once.
    public func finishRun(id: Int64, record: RunRecord = RunRecord(), replies: [OutboxEntry]) async throws {
        let open = handoff.withLock(\.open)
        let handed = try await store.finishRun(id: id, record: record, replies: replies, leaseUntil: open ? clock.now + lease : nil)
        guard !replies.isEmpty else { return }
        let handedIDs = Set(handed.map(\.id))
        handoff.withLock { handoff in
            handoff.ready += handed
            for reply in replies where !handedIDs.contains(reply.id) {
                handoff.waiting.insert(reply.conversation)
                handoff.claimWanted = true
            }
        }
        wakeSignal.signal()
    }

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

    // MARK: The worker's side

    private func stored(forClaim entries: [OutboxEntry]) {
        handoff.withLock { handoff in
            for entry in entries { handoff.waiting.insert(entry.conversation) }
            handoff.claimWanted = true
        }
        wakeSignal.signal()
    }

    /// The worker starts or stops taking replies in memory. Replies handed over and not taken
    /// when it stops stay leased in the store: the next start drops the lease and sends them.
    func handOver(_ open: Bool) {
        handoff.withLock { $0.open = open }
    }

    /// A claim is wanted at the next chance (no wake: the next delivery's end brings one).
    func wantClaim() {
        handoff.withLock { $0.claimWanted = true }
    }

    /// The replies handed over since the last call, and whether a claim is wanted (which resets it).
    func take() -> (ready: [OutboxEntry], claim: Bool) {
        handoff.withLock { handoff in
            defer {
                handoff.ready.removeAll()
                handoff.claimWanted = false
            }
            return (handoff.ready, handoff.claimWanted)
        }
    }

    /// A delivery attempt is over. A claim is wanted when the entry was claimed (its
    /// conversation's next one may be due now), is still pending (a part, a retry), or when its
    /// conversation had entries written for a claim.
    func attempted(_ entry: OutboxEntry, handed: Bool, stillPending: Bool) {
        let claim = handoff.withLock { handoff in
            let waited = handoff.waiting.remove(entry.conversation) != nil
            if !handed || stillPending || waited { handoff.claimWanted = true }
            return handoff.claimWanted
        }
        if claim { wakeSignal.signal() }
    }
}
