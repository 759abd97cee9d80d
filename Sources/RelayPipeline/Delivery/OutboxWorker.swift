public import Foundation
public import Logging
public import RelayCore
import RelayHTTP
public import ServiceLifecycle
import Synchronization

/// Delivers the outbox: claims due entries, sends each through its platform's `ReplySender`,
/// and records what happened — sent, retried later (backoff, `Retry-After`), or failed for good
/// (logged and counted). Entries of one conversation go one at a time and in order (the store
/// hands out only a conversation's oldest pending entry); conversations go in parallel.
///
/// Replies handed over at a run's end and entries claimed from the store wait in one queue,
/// oldest first (`DeliveryQueue`), and take one of `maxInFlight` slots only when they can be
/// sent: an entry whose conversation or platform must wait (pacing, the platform's limits)
/// stays queued, holding no slot, while younger ones that can go are started. So a paced
/// platform under overload neither starves another platform nor its own older replies.
///
/// At start it drops leases left by a previous process, so whatever was stored but not
/// confirmed is sent again. On graceful shutdown it stops claiming, lets deliveries in flight
/// finish, then delivers what is already due for up to `drainTimeout`. Every decision by time
/// (due, lease, backoff, pacing, drain) reads the outbox's clock.
public final class OutboxWorker: Service, Sendable {
    public typealias ParkedRunHandler = @Sendable (OutboxEntry, Event) async -> Void

    let outbox: Outbox
    let senders: [String: any ReplySender]
    let policy: DeliveryPolicy
    let parkedRuns: ParkedRunHandler
    let logger: Logger
    let pacer = ConversationPacer()
    /// The entries being delivered, with when their leases end: how many (room for claims), and
    /// whose leases to renew.
    private let inFlight = Mutex([String: Date]())
    /// Entries leased here and not started yet.
    private let queue: Mutex<DeliveryQueue>
    /// Platforms a wanted claim left in the store for lack of room: claimed for once they have it.
    private let deferredClaims = Mutex(Set<String>())
    private let depthCheckedAt = Mutex(Date.distantPast)

    /// `parkedRuns` receives runs parked at the last shutdown, to run them again.
    public init(
        outbox: Outbox, senders: [any ReplySender], policy: DeliveryPolicy = DeliveryPolicy(),
        parkedRuns: @escaping ParkedRunHandler, logger: Logger
    ) {
        self.outbox = outbox
        self.senders = Dictionary(senders.map { ($0.platform, $0) }, uniquingKeysWith: { first, _ in first })
        self.policy = policy
        self.parkedRuns = parkedRuns
        self.logger = logger
        queue = Mutex(DeliveryQueue(capacity: policy.queueCapacity, claimBatch: Self.claimBatch))
    }

    var store: any Store { outbox.store }
    var clock: any RelayClock { outbox.clock }

    public func run() async throws {
        try await store.releaseOutboxLeases()
        outbox.handOver(true)
        // Another replica's entries written for a claim: claim at once rather than at the poll.
        store.watchForWork { [outbox] work in
            guard work == .outbox else { return }
            outbox.wantClaim()
            outbox.wakeSignal.signal()
        }
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                var lastClaim = Date.distantPast
                var lastRenewal = clock.now
                while !Task.isCancelled && !Task.isShuttingDownGracefully {
                    claimIfRoomCame()
                    let (handed, handedLeasedUntil, claimWanted) = outbox.take()
                    outbox.full(
                        queue.withLock { queue in
                            queue.add(handed, handed: true, leasedUntil: handedLeasedUntil)
                            return queue.full
                        })
                    let now = clock.now
                    // A claim reads the whole pending outbox: only when something may be there
                    // that was not handed over, and at each poll (retries coming due, other writers).
                    if claimWanted || now >= lastClaim + policy.pollInterval {
                        lastClaim = now
                        await claim()
                    }
                    await handBackLostPlatforms()
                    let nextStart = startReady(in: &group)
                    if now >= lastRenewal + policy.renewal {
                        lastRenewal = now
                        await renewLeases()
                    }
                    await recordDepth()
                    var wake = min(lastClaim + policy.pollInterval, lastRenewal + policy.renewal)
                    if let nextStart { wake = min(wake, nextStart) }
                    await outbox.wakeSignal.wait(until: wake, clock: clock)
                }
            }
        } onGracefulShutdown: {
            self.outbox.wakeSignal.signal()
        }
        outbox.handOver(false)
        if !Task.isCancelled { await drain() }
        await recordDepth(force: true)
    }

    /// From now on `platform`'s entries are delivered here only while `deliverWhileHeld` runs:
    /// called for each such platform before the worker starts.
    public func deliverOnlyUnderLease(_ platform: String) {
        outbox.deliverUnderLease(platform)
    }

    /// Delivers `platform`'s entries while this runs: the body of its delivery lease on a shared
    /// store (`DeliveryLease`), so only the lease's holder sends that platform's replies.
    ///
    /// It sends only until `sendsUntil()` (asked before each send): the lease's last confirmation
    /// by the store, plus a window a little longer than the time between renewals. A holder
    /// learns that its lease moved only at its next renewal, which a loaded store can delay by
    /// seconds; bounded by its confirmations, it stops sending before the window ends whether or
    /// not it has learnt. Its successor first keeps `quiet`, that window and the platform's
    /// rate window (a second) after it: what the predecessor sent before it stopped still
    /// counts against the bot's limits per second and per chat.
    ///
    /// It returns when cancelled (the lease was lost) or at a graceful shutdown; the shutdown
    /// stops the services in reverse, so this worker has drained by then, and only then is the
    /// lease released.
    public func deliverWhileHeld(_ platform: String, quiet: Duration, sendsUntil: @escaping @Sendable () -> Date = { .distantFuture }) async {
        do {
            try await clock.sleep(for: quiet)
        } catch {
            return
        }
        guard !Task.isCancelled else { return }
        logger.info("outbox: this replica delivers the platform's replies", metadata: ["platform": "\(platform)"])
        outbox.holdsLease(of: platform, sendsUntil: sendsUntil)
        defer { outbox.holdsLease(of: platform, sendsUntil: nil) }
        try? await gracefulShutdown()
    }

    /// Gives back the queued entries of platforms whose delivery lease this replica lost: their
    /// leases in the store end now, so the new holder claims them, and none is sent from here.
    /// Sent from here they would be paced by this replica's limiter while the holder paces its
    /// own sends, and together break the limits the platform counts per bot (Telegram's 30
    /// messages a second): a replica that stalled past its lease kept sending its queue.
    private func handBackLostPlatforms() async {
        let excluded = outbox.excludedPlatforms
        guard !excluded.isEmpty else { return }
        let lost = queue.withLock { $0.removeAll(of: excluded) }
        guard !lost.isEmpty else { return }
        logger.notice(
            "outbox: another replica delivers this platform now; handing its queued replies back",
            metadata: ["platforms": "\(excluded.sorted())", "entries": "\(lost.count)"])
        do {
            // Ending a lease is renewing it to now: claims take entries whose lease has ended.
            try await store.renewLeases(inbox: [], outbox: lost.map(\.entry.id), until: clock.now)
        } catch {
            // They stay leased here until their leases lapse; then the holder claims them.
            logger.warning("outbox: could not hand queued replies back; they go once their leases lapse", metadata: ["error": "\(error)"])
        }
        outbox.full(queue.withLock(\.full))
    }

    /// Claims due entries into the queue, leaving in the store the platforms whose share of the
    /// queue has too little room: each claim reads the pending outbox, so a full platform
    /// draining one entry at a time (paced) is not worth a claim per entry.
    private func claim() async {
        let crowded = queue.withLock(\.notWorthAClaim)
        deferredClaims.withLock { $0 = crowded }
        guard !crowded.isEmpty, Set(senders.keys).isSubset(of: crowded) else { return await claim(excluding: crowded) }
    }

    /// A claim is wanted when a platform it left in the store has room now.
    private func claimIfRoomCame() {
        let crowded = queue.withLock(\.notWorthAClaim)
        let roomCame = deferredClaims.withLock { deferred in
            defer { deferred.formIntersection(crowded) }
            return !deferred.isSubset(of: crowded)
        }
        if roomCame { outbox.wantClaim() }
    }

    private func claim(excluding crowded: Set<String>) async {
        let limit = Self.claimBatch * 4
        let now = clock.now
        let entries: [OutboxEntry]
        do {
            entries = try await store.claimDueOutbox(
                now: now, leaseUntil: now + policy.lease, limit: limit, excluding: outbox.excludedPlatforms.union(crowded))
        } catch {
            logger.error("outbox: could not read the store", metadata: ["error": "\(error)"])
            return
        }
        // A full claim may have left due entries behind.
        if entries.count == limit { outbox.wantClaim() }
        outbox.full(
            queue.withLock { queue in
                queue.add(entries, handed: false, leasedUntil: now + policy.lease)
                return queue.full
            })
    }

    /// The smallest claim worth a read of the store for a platform with entries queued.
    static let claimBatch = 32

    /// Starts the oldest queued entries that can be sent now, as many as there are free slots;
    /// returns when the first entry left waiting can go.
    private func startReady(in group: inout DiscardingTaskGroup) -> Date? {
        let slots = policy.maxInFlight - inFlight.withLock { $0.count }
        let now = clock.now
        let (ready, nextAt, left) = queue.withLock { queue in
            let taken = queue.takeReady(
                limit: slots, now: now, platformWait: { self.senders[$0]?.platformWait(now: now) ?? .zero },
                wait: { entry in
                    // Parked runs are not messages; an entry of a platform not running fails at once.
                    if case .parkedRun = entry.content { return .zero }
                    guard let sender = self.senders[entry.platform] else { return .zero }
                    // The conversation's own pacing first: the sender's turn is taken only for an
                    // entry that starts.
                    let paced = self.pacer.wait(entry.conversation, interval: sender.minimumInterval(for: entry), now: now)
                    return paced > .zero ? paced : sender.takeTurn(for: entry, now: now)
                })
            return (taken.ready, taken.nextAt, queue.full)
        }
        outbox.full(left)
        for item in ready { start(item, in: &group) }
        return nextAt
    }

    private func start(_ item: DeliveryQueue.Item, in group: inout DiscardingTaskGroup) {
        let entry = item.entry
        inFlight.withLock { $0[entry.id] = item.leasedUntil }
        group.addTask {
            let stillPending = await self.deliver(entry)
            self.inFlight.withLock { _ = $0.removeValue(forKey: entry.id) }
            self.outbox.attempted(entry, handed: item.handed, stillPending: stillPending)
            // A slot is free: the next queued entry that can go takes it.
            if !self.queue.withLock(\.isEmpty) { self.outbox.wakeSignal.signal() }
        }
    }

    /// Extends the leases of the deliveries in flight that would end before the next renewal
    /// has a turn to spare (a slow platform, a paced conversation); a delivery shorter than a
    /// third of a lease costs no renewal.
    private func renewLeases() async {
        let now = clock.now
        let until = now + policy.lease
        let deadline = now + policy.renewal * 2
        let due = inFlight.withLock { leases -> [String: Date] in
            let due = leases.filter { $0.value < deadline }
            for id in due.keys { leases[id] = until }
            return due
        }
        // Queued entries are leased too: another process must not claim them while they wait here.
        let queuedDue = queue.withLock { $0.extendLeases(endingBefore: deadline, to: until) }
        guard !due.isEmpty || !queuedDue.isEmpty else { return }
        do {
            try await store.renewLeases(inbox: [], outbox: Array(due.keys) + Array(queuedDue.keys), until: until)
        } catch {
            // The store keeps the leases as they were, and `finish` goes by them.
            inFlight.withLock { leases in
                for (id, end) in due where leases[id] == until { leases[id] = end }
            }
            queue.withLock { $0.restoreLeases(queuedDue, ifStill: until) }
            logger.error("outbox: could not renew the leases of deliveries in flight", metadata: ["error": "\(error)"])
        }
    }

    /// At shutdown: delivers what is due now, oldest first, until nothing deliverable is left
    /// or the drain timeout passes. Parked runs stay for the next start.
    private func drain() async {
        let end = clock.now + policy.drainTimeout
        var parked: Set<String> = []
        var queued = queue.withLock { $0.removeAll() }.map(\.entry)
        while clock.now < end {
            let now = clock.now
            let handed = queued + outbox.take().ready
            queued = []
            guard
                let entries = try? await store.claimDueOutbox(
                    now: now, leaseUntil: now + policy.lease, limit: policy.maxInFlight, excluding: outbox.excludedPlatforms)
            else { return }
            var deliverable = handed
            for entry in entries {
                if case .parkedRun = entry.content {
                    parked.insert(entry.id)
                    try? await store.reschedule(id: entry.id, attempts: entry.attempts, nextAttemptAt: entry.nextAttemptAt, lastError: entry.lastError ?? "")
                } else {
                    deliverable.append(entry)
                }
            }
            guard !deliverable.isEmpty else { return }
            await withDiscardingTaskGroup { group in
                for entry in deliverable { group.addTask { await self.deliver(entry) } }
            }
        }
        logger.warning("outbox: drain time is up; the rest is delivered at the next start")
    }

    /// One attempt at one entry, and its outcome written back. Returns whether the entry may
    /// still be pending (a part delivered, a retry to come).
    @discardableResult
    func deliver(_ stored: OutboxEntry) async -> Bool {
        let entry = outbox.opened(stored)
        if case .parkedRun(let event) = entry.content {
            // Handed to the dispatcher, which runs it again and enqueues its reply.
            await finish(entry) { try await store.markSent(id: entry.id, platformRef: nil, at: clock.now) }
            await parkedRuns(entry, event)
            return false
        }
        guard let sender = senders[entry.platform] else {
            logger.error(
                "outbox: no adapter for this platform is running; entry given up", metadata: ["platform": "\(entry.platform)", "entry": "\(entry.id)"])
            RelayMetrics.delivery(platform: entry.platform, outcome: "failed")
            await finish(entry) { try await store.markFailed(id: entry.id, attempts: entry.attempts, lastError: "no \(entry.platform) adapter is configured") }
            return false
        }
        // Started when the conversation's turn had come (`startReady`): no wait here, but for a
        // drain at shutdown.
        let wait = pacer.reserve(entry.conversation, interval: sender.minimumInterval(for: entry), now: clock.now)
        if wait > .zero { try? await clock.sleep(for: wait) }

        let earlier = try? await entry.replaces.asyncFlatMap { try await store.outboxEntry(id: $0) }
        let outcome = await DeliveryPermit.$check.withValue(DeliveryPermit.Check { [outbox] in outbox.delivers(entry.platform) }) {
            await sender.deliver(entry, earlier: earlier)
        }
        let attempts = entry.attempts + 1
        let now = clock.now
        if !outbox.delivers(entry.platform), outcome.isPassing {
            // The lease moved while this waited (`DeliveryPermit`): the holder sends it, and this
            // was no attempt of its.
            await finish(entry) {
                try await store.reschedule(
                    id: entry.id, attempts: entry.attempts, nextAttemptAt: now, lastError: "handed to the replica that delivers \(entry.platform) now")
            }
            return true
        }
        switch outcome {
        case .sent(let platformRef):
            RelayMetrics.delivery(platform: entry.platform, outcome: "sent")
            await finish(entry) { try await store.markSent(id: entry.id, platformRef: platformRef, at: now) }
        case .partDelivered(let platformRef):
            // Recorded before the next part is tried: a retry or a restart resumes after it.
            // Due at once; the pacer spaces the parts like any sends to the conversation.
            RelayMetrics.delivery(platform: entry.platform, outcome: "part_sent")
            await finish(entry) {
                try await store.markPartDelivered(id: entry.id, parts: entry.partsDelivered + 1, platformRef: platformRef, nextAttemptAt: now)
            }
        case .rateLimited(let retryAfter, let reason):
            RelayMetrics.delivery(platform: entry.platform, outcome: "rate_limited")
            // Read from outside: clamped, so no server can park a conversation for long.
            let wait = min(max(.zero, retryAfter), RetryAfter.maximum)
            pacer.hold(entry.conversation, for: wait, now: now)
            await retryOrGiveUp(entry, attempts: attempts, at: now + wait, reason: reason)
        case .retryable(let reason):
            RelayMetrics.delivery(platform: entry.platform, outcome: "retry")
            let delay = policy.retry.delay(afterAttempt: attempts)
            await retryOrGiveUp(entry, attempts: attempts, at: now + delay, reason: reason)
        case .rejected(let reason):
            RelayMetrics.delivery(platform: entry.platform, outcome: "failed")
            logger.error(
                "outbox: the platform refused a reply for good", metadata: ["platform": "\(entry.platform)", "entry": "\(entry.id)", "reason": "\(reason)"])
            await finish(entry) { try await store.markFailed(id: entry.id, attempts: attempts, lastError: reason) }
        }
        switch outcome {
        case .sent, .rejected: return false
        case .partDelivered, .rateLimited, .retryable: return true
        }
    }

    private func retryOrGiveUp(_ entry: OutboxEntry, attempts: Int, at next: Date, reason: String) async {
        guard attempts < policy.maxAttempts else {
            RelayMetrics.delivery(platform: entry.platform, outcome: "failed")
            logger.error(
                "outbox: reply given up after \(attempts) attempts", metadata: ["platform": "\(entry.platform)", "entry": "\(entry.id)", "reason": "\(reason)"])
            await finish(entry) { try await store.markFailed(id: entry.id, attempts: attempts, lastError: reason) }
            return
        }
        logger.notice(
            "outbox: delivery will be retried",
            metadata: ["platform": "\(entry.platform)", "entry": "\(entry.id)", "attempt": "\(attempts)", "reason": "\(reason)"])
        await finish(entry) { try await store.reschedule(id: entry.id, attempts: attempts, nextAttemptAt: next, lastError: reason) }
    }

    /// Writes an outcome. A write that fails (the store restarting) is tried again, a little
    /// apart, while more than a third of the entry's lease is left — room for one more write
    /// the store gives up on — since an outcome left unwritten has the entry delivered again once
    /// its lease lapses: a reply the platform took would reach the person twice. Past that the
    /// failure is logged, and the lease left to lapse (the entry is tried again).
    private func finish(_ entry: OutboxEntry, _ write: () async throws -> Void) async {
        var pause: Duration = .milliseconds(250)
        while true {
            do {
                try await write()
                return
            } catch {
                let leasedUntil = inFlight.withLock { $0[entry.id] }
                guard let leasedUntil, !Task.isCancelled, clock.now + pause + policy.renewal < leasedUntil else {
                    logger.error("outbox: could not record a delivery outcome", metadata: ["entry": "\(entry.id)", "error": "\(error)"])
                    return
                }
                logger.warning("outbox: could not record a delivery outcome; trying again", metadata: ["entry": "\(entry.id)", "error": "\(error)"])
                try? await clock.sleep(for: pause)
                pause = min(pause * 2, .seconds(2))
            }
        }
    }

    private func recordDepth(force: Bool = false) async {
        let now = clock.now
        let due = depthCheckedAt.withLock { last -> Bool in
            guard force || now.duration(since: last) > .seconds(1) else { return false }
            last = now
            return true
        }
        guard due, let depth = try? await store.pendingOutboxCount() else { return }
        RelayMetrics.outboxDepth(depth)
    }
}

extension Optional {
    fileprivate func asyncFlatMap<U>(_ transform: (Wrapped) async throws -> U?) async rethrows -> U? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}

/// How the outbox worker claims, paces and retries deliveries.
public struct DeliveryPolicy: Sendable, Hashable {
    /// Tries per entry, 429s included; then the entry is marked failed, logged and counted.
    public var maxAttempts: Int
    /// Backoff between tries that failed for a reason that may pass (5xx, timeouts).
    public var retry: RetryPolicy
    /// How long a claimed entry stays invisible to other claims; renewed every third of it while
    /// it is being delivered, so a process that dies leaves its deliveries to others within
    /// about this long.
    public var lease: Duration
    /// Time between looks at the outbox when nothing woke the worker.
    public var pollInterval: Duration
    /// Deliveries in flight at once (across conversations; one per conversation at a time).
    /// An entry waiting for its turn (pacing, the platform's limits) holds no slot. 256 by
    /// default: the marks of deliveries in flight share the store's group commits, and with 64
    /// a 20 000-command Slack flood's replies fell 2.4 s behind its acks (with 256: 0.07 s).
    public var maxInFlight: Int
    /// How long delivered and failed entries are kept (they hold reply text) before purging.
    public var keepFinished: Duration
    /// How long a graceful shutdown spends delivering what is already due.
    public var drainTimeout: Duration

    public init(
        maxAttempts: Int = 10, retry: RetryPolicy = RetryPolicy(attempts: 10, baseDelay: .seconds(1), maxDelay: .seconds(60)),
        lease: Duration = .seconds(15), pollInterval: Duration = .seconds(1), maxInFlight: Int = 256,
        keepFinished: Duration = .seconds(86_400), drainTimeout: Duration = .seconds(10)
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.retry = retry
        self.lease = max(.milliseconds(30), lease)
        self.pollInterval = pollInterval
        self.maxInFlight = max(1, maxInFlight)
        self.keepFinished = keepFinished
        self.drainTimeout = drainTimeout
    }
}

extension DeliveryPolicy {
    /// How often the leases of deliveries in flight are renewed.
    var renewal: Duration { lease / 3 }
    /// Entries of one platform leased here waiting for a slot or their turn, at most: four
    /// slots' worth, enough for a paced platform's backlog of a few seconds; the rest wait in
    /// the store.
    var queueCapacity: Int { max(64, maxInFlight * 4) }
}

/// Spaces the sends of one conversation (Slack allows about one message per second per
/// channel) and holds a conversation back after the platform said 429.
///
/// Each send keeps its own interval from the send before it (`DeliveryLimits.minimumInterval`):
/// a post waits a second after the last send to its channel, an edit of a message already there
/// does not. Thread-safe; the map is pruned of past instants so it does not grow with every
/// channel seen. Time comes from the caller (the worker's clock), so tests decide it.
final class ConversationPacer: Sendable {
    private struct Slot {
        /// When the conversation's last send was reserved to go.
        var last: Date?
        /// Nothing goes before this (a `Retry-After`).
        var heldUntil: Date?

        func earliest(after interval: Duration, now: Date) -> Date {
            max(now, last.map { $0 + max(.zero, interval) } ?? now, heldUntil ?? now)
        }
    }

    private struct Slots {
        var byConversation: [String: Slot] = [:]
        /// The count past which stale slots are dropped: twice what the last pruning kept (4 096
        /// at least), so pruning costs O(1) a reservation however many conversations are recent.
        /// (Checked at every reservation past 4 096, it made a flood of 20 000 commands, each in
        /// a thread of its own, O(n²): 2.6 ms of CPU a command, `slack-bench --platform teams`.)
        var pruneAt = ConversationPacer.pruneThreshold
    }

    static let pruneThreshold = 4096

    private let slots = Mutex(Slots())

    /// How many conversations have a slot (for tests).
    var count: Int { slots.withLock { $0.byConversation.count } }

    /// How long until a send keeping `interval` from the last may go to the conversation,
    /// without taking the slot.
    func wait(_ conversation: String, interval: Duration, now: Date) -> Duration {
        slots.withLock { slots in
            guard let slot = slots.byConversation[conversation] else { return .zero }
            return slot.earliest(after: interval, now: now).duration(since: now)
        }
    }

    /// Takes the conversation's next send slot for a send keeping `interval` from the last;
    /// returns how long to wait before using it.
    func reserve(_ conversation: String, interval: Duration, now: Date) -> Duration {
        slots.withLock { slots in
            if slots.byConversation.count > slots.pruneAt {
                // A slot an hour old no longer holds anything back.
                slots.byConversation = slots.byConversation.filter {
                    ($0.value.heldUntil ?? .distantPast) > now || ($0.value.last ?? .distantPast) > now - 3600
                }
                slots.pruneAt = max(Self.pruneThreshold, 2 * slots.byConversation.count)
            }
            var slot = slots.byConversation[conversation] ?? Slot()
            let start = slot.earliest(after: interval, now: now)
            slot.last = start
            slots.byConversation[conversation] = slot
            return start.duration(since: now)
        }
    }

    /// Nothing goes to this conversation for `duration` (a `Retry-After`).
    func hold(_ conversation: String, for duration: Duration, now: Date) {
        let until = now + max(.zero, duration)
        slots.withLock { slots in
            var slot = slots.byConversation[conversation] ?? Slot()
            slot.heldUntil = max(slot.heldUntil ?? until, until)
            slots.byConversation[conversation] = slot
        }
    }
}
