public import Foundation
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
        /// Replies leased at their run's end, waiting for the worker to queue them, and until when.
        var ready: [OutboxEntry] = []
        var readyLeasedUntil: Date = .distantFuture
        /// Platforms whose share of the worker's queue is full: their replies wait in the store
        /// for a claim rather than being handed over.
        var full: Set<String> = []
        /// Entries may be due in the store: the worker should claim (set at first, so a start
        /// claims what an earlier process left).
        var claimWanted = true
        /// Conversations with entries written for a claim and not delivered yet: the end of a
        /// delivery there asks for a claim.
        var waiting: Set<String> = []
        /// Platforms this process delivers only while it holds their delivery lease (a shared
        /// store's platforms whose limits count per bot), and those whose lease it holds now,
        /// each with until when it may send: its lease's last confirmation, plus a window.
        var leased: Set<String> = []
        var held: [String: @Sendable () -> Date] = [:]

        /// The platforms whose entries this process leaves to the replica holding their lease.
        func excluded(at now: Date) -> Set<String> { leased.filter { !delivers($0, at: now) } }
        func delivers(_ platform: String, at now: Date) -> Bool {
            guard leased.contains(platform) else { return true }
            guard let sendsUntil = held[platform] else { return false }
            return now < sendsUntil()
        }
    }

    public init(store: any Store, clock: any RelayClock = SystemClock(), lease: Duration = DeliveryPolicy().lease, sealer: SecretSealer? = nil) {
        self.store = store
        self.clock = clock
        self.lease = lease
        self.sealer = sealer
    }

    /// Seals a secret reply's text while it waits (`Reply.isSecret`: a sign-in link), so it never
    /// rests in the store in plain text; nil (tests) keeps it as it is.
    let sealer: SecretSealer?

    /// What marks a sealed text: the sealed value follows.
    static let sealedPrefix = "sealed:v1:"

    /// `entry` as it is stored: a secret reply's text sealed.
    func sealed(_ entry: OutboxEntry) -> OutboxEntry {
        guard let sealer, case .reply(var reply) = entry.content, reply.isSecret, !reply.body.hasPrefix(Self.sealedPrefix) else { return entry }
        reply.body = Self.sealedPrefix + sealer.seal(reply.body)
        var entry = entry
        entry.content = .reply(reply)
        return entry
    }

    /// `entry` as it is delivered: a sealed text opened; one that no longer opens (the relay's
    /// secret changed) is replaced by the reason the asker gets nothing (`Reply.secretRefused`).
    func opened(_ entry: OutboxEntry) -> OutboxEntry {
        guard case .reply(let reply) = entry.content, reply.isSecret, reply.body.hasPrefix(Self.sealedPrefix) else { return entry }
        var entry = entry
        if let text = sealer?.open(String(reply.body.dropFirst(Self.sealedPrefix.count))) {
            var opened = reply
            opened.body = text
            entry.content = .reply(opened)
        } else {
            entry.content = .reply(.secretRefused)
        }
        return entry
    }

    /// Writes the entry (durably) and wakes the worker.
    public func enqueue(_ entry: OutboxEntry) async throws {
        try await store.enqueue(sealed(entry))
        stored(forClaim: [entry])
    }

    /// A run's end: what it keeps is written, its replies enter the outbox and its inbox item
    /// leaves, in one change; the replies that are their conversation's head go to the worker
    /// at once.
    public func finishRun(id: Int64, record: RunRecord = RunRecord(), replies: [OutboxEntry]) async throws {
        // Replies of a platform another replica delivers are left for its claim.
        let now = clock.now
        let open = handoff.withLock { handoff in
            handoff.open && replies.allSatisfy { handoff.delivers($0.platform, at: now) && !handoff.full.contains($0.platform) }
        }
        let leaseUntil = clock.now + lease
        let handed = try await store.finishRun(id: id, record: record, replies: replies.map(sealed), leaseUntil: open ? leaseUntil : nil)
        guard !replies.isEmpty else { return }
        let handedIDs = Set(handed.map(\.id))
        handoff.withLock { handoff in
            handoff.ready += handed
            if !handed.isEmpty { handoff.readyLeasedUntil = min(handoff.readyLeasedUntil, leaseUntil) }
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

    /// The platforms whose share of the worker's queue is full now.
    func full(_ platforms: Set<String>) {
        handoff.withLock { $0.full = platforms }
    }

    /// Whether this process delivers `platform`'s entries now.
    func delivers(_ platform: String) -> Bool {
        let now = clock.now
        return handoff.withLock { $0.delivers(platform, at: now) }
    }

    /// The platforms whose entries this process leaves to another replica now.
    var excludedPlatforms: Set<String> {
        let now = clock.now
        return handoff.withLock { $0.excluded(at: now) }
    }

    /// From now on `platform`'s entries are delivered here only while this process holds its
    /// delivery lease (`OutboxWorker.deliverWhileHeld`). Set before the worker starts.
    func deliverUnderLease(_ platform: String) {
        handoff.withLock { _ = $0.leased.insert(platform) }
    }

    /// This process holds `platform`'s delivery lease from now on, sending until `sendsUntil()`
    /// (asked at each decision), or no longer (nil: it lost or gave it up). Taking one asks for
    /// a claim at once.
    func holdsLease(of platform: String, sendsUntil: (@Sendable () -> Date)?) {
        handoff.withLock { handoff in
            handoff.held[platform] = sendsUntil
            if sendsUntil != nil { handoff.claimWanted = true }
        }
        wakeSignal.signal()
    }

    /// A claim is wanted at the next chance (no wake: the next delivery's end brings one).
    func wantClaim() {
        handoff.withLock { $0.claimWanted = true }
    }

    /// The replies handed over since the last call, the earliest end of their leases, and
    /// whether a claim is wanted (which resets it).
    func take() -> (ready: [OutboxEntry], leasedUntil: Date, claim: Bool) {
        handoff.withLock { handoff in
            defer {
                handoff.ready.removeAll()
                handoff.readyLeasedUntil = .distantFuture
                handoff.claimWanted = false
            }
            return (handoff.ready, handoff.readyLeasedUntil, handoff.claimWanted)
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

/// One reply waiting to be delivered, or one run parked at shutdown to be run again at start.
///
/// Written to the store before anything is sent and marked sent after, so a restart resends
/// whatever was not confirmed (docs/serving.md). The relay never looks inside `address`: each adapter
/// writes its own (and seals anything secret in it, such as a Slack `response_url`, before it
/// reaches the store).
public struct OutboxEntry: Sendable, Hashable, Codable {
    public enum Content: Sendable, Hashable, Codable {
        /// A reply to post (or, with `replaces`, to put in place of an earlier message).
        case reply(Reply)
        /// Progress of a running chain, shown by editing one message; superseded by the next.
        case progress(RunProgress)
        /// A run that was still going at shutdown; the next start runs it again and replies.
        case parkedRun(Event)
    }

    public enum State: String, Sendable, Hashable, Codable {
        /// Waiting (or leased by a worker) to be delivered.
        case pending
        /// Delivered: the platform confirmed it.
        case sent
        /// Given up after the retry bound, or refused for good by the platform; logged and counted.
        case failed
    }

    /// Unique; also the idempotency key where the platform has one.
    public var id: String
    /// The adapter that delivers it (`slack`, `terminal`…).
    public var platform: String
    /// The rate-limit and ordering key: entries of one conversation go out one at a time, in order.
    public var conversation: String
    /// Where to deliver, in the adapter's own encoding (opaque to the relay and the store).
    public var address: String
    public var content: Content
    /// The id of an earlier entry whose posted message this one edits (progress, then the result).
    public var replaces: String?
    public var state: State
    /// Failed delivery attempts at the current part (reset when a part is accepted).
    public var attempts: Int
    /// Parts of a reply the platform has accepted, in order. A reply rendered as several
    /// messages is delivered one part per attempt; a retry resumes at part `partsDelivered`,
    /// so an accepted part is never sent again.
    public var partsDelivered: Int
    /// Not before this instant (backoff, `Retry-After`).
    public var nextAttemptAt: Date
    public var createdAt: Date
    /// The platform's id of the delivered message (Slack `ts`), for later edits; for a reply in
    /// parts, the first part's.
    public var platformRef: String?
    /// Why the last attempt failed; never holds a secret.
    public var lastError: String?

    public init(
        id: String, platform: String, conversation: String, address: String, content: Content,
        replaces: String? = nil, state: State = .pending, attempts: Int = 0, partsDelivered: Int = 0, nextAttemptAt: Date,
        createdAt: Date, platformRef: String? = nil, lastError: String? = nil
    ) {
        self.id = id
        self.platform = platform
        self.conversation = conversation
        self.address = address
        self.content = content
        self.replaces = replaces
        self.state = state
        self.attempts = attempts
        self.partsDelivered = max(0, partsDelivered)
        self.nextAttemptAt = nextAttemptAt
        self.createdAt = createdAt
        self.platformRef = platformRef
        self.lastError = lastError
    }
}

/// Wakes a waiting loop early when something happens (an entry enqueued, the last run
/// finished), so it does not wait for its next poll. Signals coalesce: many signals while the
/// waiter is busy make one wake-up.
final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.pending = true
            return nil
        }
        waiter?.resume()
    }

    /// Returns at the next signal (or at once if one came since the last wait), at `deadline`
    /// on `clock`, or when the task is cancelled. One waiter at a time.
    func wait(until deadline: Date, clock: any RelayClock) async {
        // A signal already came (the usual case under load): no tasks, no timer.
        let signalled = state.withLock { state in
            defer { state.pending = false }
            return state.pending
        }
        if signalled { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitForSignal() }
            group.addTask { try? await clock.sleep(until: deadline) }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForSignal() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    if state.pending {
                        state.pending = false
                        return true
                    }
                    // Cancelled before we could wait: the signal stays for the next waiter.
                    if Task.isCancelled { return true }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }
}
