import Foundation
public import Logging
import NIOCore
public import RelayCore
public import ServiceLifecycle
import Synchronization

/// The relay's `RelayInbox`: accepts events into the durable inbox and runs them, a bounded
/// number at once, turning what they produce into outbox entries: adapters acknowledge the
/// platform once `submit` returns, which is after the event is committed.
///
/// - A run holds its inbox item's lease, renewed while it runs: when its process dies the lease
///   lapses and another process sharing the store (or this one's next start) claims the item and
///   runs it again. An event that arrives while there is room is admitted already leased and
///   starts at once; otherwise it waits in the store for a claim — here when a slot frees, or on
///   another replica — and teams take turns (the store's claim order). At most
///   `limits.maxInFlight` runs at once; beyond `limits.busyDepth` waiting, a new command is
///   refused at once with a "busy" answer.
/// - A run ends by writing its reply to the outbox and removing its item from the inbox in one
///   transaction, fenced by the lease: a crash at any moment either left the item (the run runs
///   again) or the reply (delivered, once) — never neither, never both; a run whose item was
///   taken over meanwhile writes nothing.
/// - A chain's progress becomes one message that is edited ("Running… 2/5"); its outbox id comes
///   from the inbox id, so a run that runs again after a crash edits the same message.
/// - Where a route's platform cannot make a new message idempotent (its sender says so:
///   `ReplySender.answersByEditingPlaceholder`), that message is posted as the run starts
///   ("⏳ Working on /translate…") and the answer is edited into it, so a resend after a crash
///   edits again instead of posting the answer a second time.
/// - On graceful shutdown it stops claiming, gives the runs in flight `grace` to finish, and
///   gives the rest back to the inbox (their leases dropped) for another replica or the next start.
///
/// Grace, leases and progress pacing read the outbox's clock, so tests decide time.
public final class RunDispatcher: RelayInbox, Service, Sendable {
    let relay: Relay
    let outbox: Outbox
    let limits: RunLimits
    let logger: Logger
    /// How long runs in flight get to finish at shutdown before they are left to the next start.
    let grace: Duration
    /// Least time between two progress edits of one run (Slack allows ~1 message a second).
    let progressInterval: Duration
    /// The platforms' senders, asked whether a route's answer must edit a placeholder, and told
    /// when a run starts (to show "typing…").
    let senders: [String: any ReplySender]
    /// Signalled when the last run in flight finishes, so shutdown need not poll.
    private let idle = WakeSignal()

    private enum RunState {
        case starting
        case running(Task<Void, Never>)
        case abandoned
    }

    private struct State {
        var runs: [Int64: RunState] = [:]
        /// When the lease of each run's item ends.
        var leases: [Int64: Date] = [:]
        /// The withdrawal key (`withdrawalKey`) of each run whose command's message can be deleted.
        var withdrawable: [Int64: String] = [:]
        /// Runs withdrawn (and cancelled) here while they ran: they end without asking the store.
        var withdrawn: Set<Int64> = []
        /// Slots taken by submissions whose item is being written, and by a claim in progress.
        var reserved = 0
        /// Items waiting for a claim, here or in other processes: counted at the last full claim,
        /// plus what this process admitted for a claim since.
        var waiting = 0
        /// A claim is due at the next turn of the loop (an item was admitted for a claim, a slot
        /// freed while items wait, another replica wrote one).
        var claimWanted = true
        /// False until the loop runs, and again once shutting down: meanwhile nothing starts (what
        /// arrives waits in the inbox).
        var starting = false
        var stopped = false

        var room: Int { runs.count + reserved }
    }

    private let state = Mutex(State())
    /// Wakes the claim loop.
    private let claimSignal = WakeSignal()

    /// - Parameter senders: the platforms' reply senders (the worker's), asked per route whether
    ///   the run posts a placeholder for its answer to edit; none asked, none posted.
    public init(
        relay: Relay, outbox: Outbox, limits: RunLimits = RunLimits(), grace: Duration = .seconds(20), progressInterval: Duration = .seconds(1),
        senders: [any ReplySender] = [], logger: Logger
    ) {
        self.relay = relay
        self.outbox = outbox
        self.limits = limits
        self.grace = grace
        self.progressInterval = progressInterval
        self.senders = Dictionary(senders.map { ($0.platform, $0) }, uniquingKeysWith: { first, _ in first })
        self.logger = logger
    }

    var store: any Store { outbox.store }
    var clock: any RelayClock { outbox.clock }

    /// Runs currently in flight.
    public var inFlight: Int { state.withLock { $0.runs.count } }
    /// Whether runs start here: from when the dispatcher has taken back what a dead process left
    /// until it shuts down.
    public var isTakingRuns: Bool { state.withLock { $0.starting } }
    /// Accepted events waiting for a run (as far as this process knows).
    public var waiting: Int { state.withLock { $0.waiting } }

    /// Accepts `event` into the inbox (committed when this returns) and starts it when there is
    /// room; refuses a platform's retry, and anything beyond the busy depth.
    @discardableResult
    public func submit(_ event: Event, route: ReplyRoute) async throws -> Submission {
        let now = clock.now
        let dedupeKey = event.eventKey.map { "\(event.platform):\($0)" }
        let expiresAt = now + relay.configuration.dedupeLifetime
        let ahead = waiting
        if ahead >= limits.busyDepth {
            // The key is claimed all the same: a platform's retry of this event (Slack retries
            // events it thinks were not received) is then a duplicate, not a second "busy".
            if let dedupeKey, try await !store.claimEvent(key: dedupeKey, expiresAt: expiresAt, now: now) {
                RelayMetrics.command(RunOutcome.unparsed, outcome: "duplicate")
                return .duplicate
            }
            RelayMetrics.command(RunOutcome.unparsed, outcome: "busy")
            return .busy(ahead: ahead)
        }
        // What it may spend of its team's budget is held as it is written (`BudgetHold`).
        let hold = relay.budgetHold(for: event)
        // Room now, and nobody waiting before it: the item is written leased and runs here.
        let runsHere = state.withLock { state -> Bool in
            guard state.starting, state.waiting == 0, state.room < limits.maxInFlight else { return false }
            state.reserved += 1
            return true
        }
        let admitted: Admitted?
        do {
            admitted = try await store.admit(
                event, route: route, dedupeKey: dedupeKey, expiresAt: expiresAt, now: now, leaseUntil: runsHere ? now + limits.lease : nil,
                budget: hold)
        } catch {
            if runsHere { state.withLock { $0.reserved -= 1 } }
            throw error
        }
        guard let admitted else {
            if runsHere { state.withLock { $0.reserved -= 1 } }
            RelayMetrics.command(RunOutcome.unparsed, outcome: "duplicate")
            return .duplicate
        }
        if runsHere {
            let id = admitted.id
            state.withLock { state in
                state.reserved -= 1
                state.runs[id] = .starting
                state.leases[id] = now + limits.lease
            }
            var stored = event
            stored.eventKey = nil
            stored.budget = admitted.budget
            launch(InboxItem(id: id, event: stored, route: route, acceptedAt: now))
            recordDepth()
            return .accepted(ahead: 0)
        }
        let position = state.withLock { state in
            state.waiting += 1
            state.claimWanted = true
            return state.waiting - 1
        }
        claimSignal.signal()
        recordDepth()
        return .accepted(ahead: position)
    }

    /// Runs again a run that an older relay parked in the outbox at its shutdown.
    public func resume(_ entry: OutboxEntry, event: Event) async {
        var event = event
        event.eventKey = nil
        do {
            try await submit(event, route: ReplyRoute(platform: entry.platform, conversation: entry.conversation, address: entry.address))
        } catch {
            logger.error("could not move a parked run into the inbox", metadata: ["error": "\(error)"])
        }
    }

    public func run() async throws {
        // A single-process store's leases are all a dead process's: its runs run again here.
        do {
            try await store.releaseInboxLeases()
        } catch {
            logger.error("could not release the inbox's old leases; they lapse on their own", metadata: ["error": "\(error)"])
        }
        store.watchForWork { [weak self] work in
            guard work == .inbox, let self else { return }
            self.state.withLock { $0.claimWanted = true }
            self.claimSignal.signal()
        }
        state.withLock { $0.starting = true }
        let clock = clock
        var lastRenewal = clock.now
        await withGracefulShutdownHandler {
            var lastClaim = Date.distantPast
            while !Task.isCancelled && !Task.isShuttingDownGracefully {
                let now = clock.now
                // A claim also finds items whose process died (their leases lapsed): so at each poll.
                if state.withLock({ $0.claimWanted }) || now >= lastClaim + limits.claimPoll {
                    lastClaim = now
                    await claimAndStart()
                }
                if now >= lastRenewal + limits.renewal {
                    lastRenewal = now
                    await renewLeases()
                }
                await claimSignal.wait(until: min(lastClaim + limits.claimPoll, lastRenewal + limits.renewal), clock: clock)
            }
        } onGracefulShutdown: {
            self.claimSignal.signal()
        }
        state.withLock { $0.starting = false }
        let deadline = clock.now + grace
        while inFlight > 0 && clock.now < deadline {
            if clock.now >= lastRenewal + limits.renewal {
                lastRenewal = clock.now
                await renewLeases()
            }
            await idle.wait(until: min(deadline, lastRenewal + limits.renewal), clock: clock)
        }
        // What still runs goes back to the inbox for another process; its late result is dropped.
        let leftovers = state.withLock { state -> [Task<Void, Never>] in
            state.stopped = true
            var tasks: [Task<Void, Never>] = []
            for (id, run) in state.runs {
                if case .running(let task) = run { tasks.append(task) }
                state.runs[id] = .abandoned
            }
            return tasks
        }
        for task in leftovers { task.cancel() }
        if !leftovers.isEmpty {
            try? await store.releaseInboxLeases()
            logger.notice(
                "commands not finished at shutdown stay in the inbox; another replica or the next start runs them",
                metadata: ["count": "\(leftovers.count)"])
        }
    }

    /// Claims as many waiting items as there is room for, and starts them.
    private func claimAndStart() async {
        let room = state.withLock { state -> Int in
            state.claimWanted = false
            guard state.starting else { return 0 }
            // At most a batch: the slots a claim reserves are closed to new arrivals while it is
            // out, which are then written to wait; on a shared store each such item wakes every
            // replica's claim, which reserved all its room in turn, and so on. A full batch
            // claims again at once.
            let room = min(max(0, limits.maxInFlight - state.room), Self.claimBatch)
            state.reserved += room
            return room
        }
        guard room > 0 else { return }
        let now = clock.now
        let claimed: [InboxItem]
        do {
            claimed = try await store.claimInbox(now: now, leaseUntil: now + limits.lease, limit: room)
        } catch {
            state.withLock { $0.reserved -= room }
            logger.error("could not claim waiting commands from the inbox; trying again shortly", metadata: ["error": "\(error)"])
            return
        }
        // A full claim may have left items behind: count them (for the busy depth) and claim
        // again when a slot frees.
        let left = claimed.count == room ? (try? await store.waitingInboxCount(now: now)) : 0
        let fresh = state.withLock { state -> [InboxItem] in
            state.reserved -= room
            if let left { state.waiting = left }
            // An item already running here (its lease lapsed, and this claim took it back) keeps
            // its one run.
            let fresh = claimed.filter { state.runs[$0.id] == nil }
            for item in claimed { state.leases[item.id] = now + limits.lease }
            for item in fresh { state.runs[item.id] = .starting }
            return fresh
        }
        recordDepth()
        for item in fresh { launch(item) }
        if claimed.count == room, (left ?? 1) > 0 {
            state.withLock { $0.claimWanted = true }
            claimSignal.signal()
        }
    }

    /// The most items one claim takes.
    static let claimBatch = 32

    /// Extends the leases of the runs in flight that would end before the next renewal has a turn
    /// to spare: a run shorter than a third of a lease costs no renewal.
    private func renewLeases() async {
        let now = clock.now
        let until = now + limits.lease
        let ids = state.withLock { state -> [Int64] in
            let due = state.runs.compactMap { id, run -> Int64? in
                if case .abandoned = run { return nil }
                return (state.leases[id] ?? .distantPast) < now + limits.renewal * 2 ? id : nil
            }
            for id in due { state.leases[id] = until }
            return due
        }
        guard !ids.isEmpty else { return }
        do {
            try await store.renewLeases(inbox: ids, outbox: [], until: until)
        } catch {
            logger.error("could not renew the leases of runs in flight; another replica may run them again", metadata: ["error": "\(error)"])
        }
    }

    private func launch(_ item: InboxItem) {
        let task = Task { await self.execute(item) }
        let key = Self.withdrawalKey(item.event, platform: item.route.platform)
        state.withLock { state in
            if case .starting? = state.runs[item.id] {
                state.runs[item.id] = .running(task)
                state.withdrawable[item.id] = key
            }
        }
    }

    private func execute(_ item: InboxItem) async {
        let clock = outbox.clock
        let started = clock.now
        RelayMetrics.inboxWait(started.timeIntervalSince(item.acceptedAt))
        let event = item.event
        let route = item.route
        let withdrawal = Self.withdrawalKey(event, platform: route.platform)
        if await isWithdrawn(withdrawal) {
            defer { finished(item.id) }
            await dropWithdrawn(item, placeholder: nil)
            return
        }
        let progress = ProgressMessage(
            id: "progress:\(item.id)", interval: progressInterval, streaming: senders[route.platform]?.streaming(at: route.address) ?? .none, clock: clock)
        if let sender = senders[route.platform] {
            // "typing…" while the models work; cosmetic, so never waited for.
            Task { await sender.runStarted(at: route.address) }
        }
        // The placeholder the answer is edited into, where a new message could show twice.
        if senders[route.platform]?.answersByEditingPlaceholder(at: route.address) == true, let step = await relay.startingStep(for: event) {
            await showProgress(step, progress: progress, route: route, id: item.id)
        }
        let outcome = await relay.run(event) { step in
            await self.showProgress(step, progress: progress, route: route, id: item.id)
        }
        // No text of the answer being written may come after the whole answer.
        await progress.close()
        defer { finished(item.id) }
        // A run abandoned at shutdown stays in the inbox: its (cancelled) result is not written.
        guard state.withLock({ !$0.stopped }) else { return }
        let command = outcome.metricName
        // Deleted while it ran: nothing of it is kept or answered. Withdrawn here, the run was
        // cancelled too: its last writes go in a task of their own, which a cancelled store call
        // cannot refuse.
        var withdrawn = state.withLock { $0.withdrawn.contains(item.id) }
        if !withdrawn { withdrawn = await isWithdrawn(withdrawal) }
        if withdrawn {
            let placeholder = progress.messageID
            await Task { await self.dropWithdrawn(item, placeholder: placeholder) }.value
            return
        }
        var replies: [OutboxEntry] = []
        if let reply = outcome.reply {
            RelayMetrics.command(command, outcome: reply.kind.rawValue)
            var answer = outbox.entry(
                platform: route.platform, conversation: route.conversation, address: route.address,
                content: .reply(reply.withActions(for: event)), replaces: progress.messageID)
            // Found by its command's message, should that be deleted before it is sent. A message
            // runs once (its event key), but a key forgotten after `dedupeLifetime`, or another
            // event naming the same message, must not make the answer's id clash with an earlier
            // one: that answer keeps a random id (and cannot be withdrawn).
            if let message = event.sourceMessage {
                let id = Self.answerID(platform: route.platform, message: message)
                var taken = true  // also when the store cannot say
                do { taken = try await store.outboxEntry(id: id) != nil } catch {}
                if !taken { answer.id = id }
            }
            replies.append(answer)
        }
        do {
            try await outbox.finishRun(id: item.id, record: outcome.record, replies: replies)
            // A deletion marked between the check above and this commit looked for the answer
            // before it was there: this second look drops it (`withdraw` looks after marking).
            if let message = event.sourceMessage, !replies.isEmpty, await isWithdrawn(withdrawal) {
                try await dropQueuedAnswer(platform: route.platform, message: message)
            }
        } catch StoreError.leaseLost {
            RelayMetrics.command(command, outcome: "taken_over")
            logger.notice("a run's command was taken over by another process while it ran; its result is dropped", metadata: ["inbox.id": "\(item.id)"])
        } catch {
            logger.error(
                "could not store a reply in the outbox; the command runs again once its lease lapses",
                metadata: ["platform": "\(route.platform)", "error": "\(error)"])
        }
        RelayMetrics.runDuration(clock.now.duration(since: started), command: command)
    }

    /// A run is over: its slot goes to the next waiting item.
    private func finished(_ id: Int64) {
        let (empty, claim) = state.withLock { state in
            state.runs.removeValue(forKey: id)
            state.leases.removeValue(forKey: id)
            state.withdrawable.removeValue(forKey: id)
            state.withdrawn.remove(id)
            if state.waiting > 0 { state.claimWanted = true }
            return (state.runs.isEmpty, state.claimWanted)
        }
        if empty { idle.signal() }
        if claim { claimSignal.signal() }
    }

    private func showProgress(_ step: RunProgress, progress: ProgressMessage, route: ReplyRoute, id: Int64) async {
        guard state.withLock({ !$0.stopped }), progress.enter() else { return }
        // The run's end waits for this show to be queued (`ProgressMessage.close`).
        defer { progress.leave() }
        let replaces: String
        switch progress.take(step) {
        case .skip: return
        case .wait(let until):
            progress.flush(at: until) { step in await self.showProgress(step, progress: progress, route: route, id: id) }
            return
        case .post: replaces = ""
        case .edit(let id): replaces = id
        }
        if step.partial != nil {
            // An answer being written waits an interval, then shows its latest text, while the
            // text shown last is not delivered yet (the conversation is busy: the outbox holds one
            // at a time, so what goes is the latest), or while answers written at once have used
            // the platform's edits (a workspace's, a bot's; asked last, as asking takes one).
            var lastPending = false
            if let last = progress.lastPartial { lastPending = (try? await store.outboxEntry(id: last))?.state == .pending }
            if lastPending || senders[route.platform]?.admitsPartialEdit(at: route.address, now: outbox.clock.now) == false {
                let until = progress.hold(step)
                progress.flush(at: until) { step in await self.showProgress(step, progress: progress, route: route, id: id) }
                return
            }
        }
        var entry = outbox.entry(
            platform: route.platform, conversation: route.conversation, address: route.address,
            content: .progress(step), replaces: replaces.isEmpty ? nil : replaces)
        if replaces.isEmpty {
            // The first progress post has the run's own id: after a crash, the run that runs again
            // finds it and edits that message instead of posting a second one.
            // (The store refuses the id when that post exists.)
            entry.id = progress.id
            try? await outbox.enqueue(entry)
            progress.posted()
            return
        }
        try? await outbox.enqueue(entry)
        if step.partial != nil { progress.shownPartial(entry.id) }
    }

    private func recordDepth() {
        let (waiting, running) = state.withLock { ($0.waiting, $0.runs.count) }
        RelayMetrics.inbox(waiting: waiting, running: running)
    }
}

// MARK: The inbox adapters see

extension RunDispatcher {
    @discardableResult
    public func post(_ reply: Reply, route: ReplyRoute, onceAs key: String?, replacing: String?) async throws -> Bool {
        var entry = outbox.entry(
            platform: route.platform, conversation: route.conversation, address: route.address, content: .reply(reply), replaces: replacing)
        guard let key else {
            try await outbox.enqueue(entry)
            return true
        }
        // The key is the entry's id, and the store refuses a second entry with an id it holds:
        // two clicks racing each other still queue one reply.
        entry.id = "once:" + key
        if try await store.outboxEntry(id: entry.id) != nil { return false }
        do {
            try await outbox.enqueue(entry)
            return true
        } catch {
            if (try? await store.outboxEntry(id: entry.id)) != nil { return false }
            throw error
        }
    }

    public func outboxEntry(id: String) async throws -> OutboxEntry? {
        try await store.outboxEntry(id: id)
    }

    /// Only the quick actions whose answer is text to insert: a translation, a fix, a rewrite.
    public func answerNow(_ event: Event) async -> Reply? {
        switch event.command.command?.kind {
        case .translate, .action(.grammar), .action(.rewrite): return await relay.handle(event)
        default: return nil
        }
    }
}

// MARK: Withdrawn commands

extension RunDispatcher {
    /// The mark a deleted command's message leaves in the store (beside the platforms' event
    /// keys, and kept as long), nil for an event whose message cannot be deleted.
    static func withdrawalKey(_ event: Event, platform: String) -> String? {
        event.sourceMessage.map { withdrawalKey(platform: platform, message: $0) }
    }

    static func withdrawalKey(platform: String, message: String) -> String { "withdrawn:\(platform):\(message)" }

    /// The outbox id of the answer to the command `message` carried.
    static func answerID(platform: String, message: String) -> String { "answer:\(platform):\(message)" }

    /// What a "working on it" message becomes when its command is deleted.
    static let withdrawnNote = "The command was deleted, so it is not answered."

    public func withdraw(platform: String, message: String) async throws {
        let now = clock.now
        let key = Self.withdrawalKey(platform: platform, message: message)
        _ = try await store.claimEvent(key: key, expiresAt: now + relay.configuration.dedupeLifetime, now: now)
        // A run here stops at once (one elsewhere finds the mark as it ends, and runs not started
        // find it as they start).
        let tasks = state.withLock { state in
            state.withdrawable.compactMap { id, withdrawable -> Task<Void, Never>? in
                guard withdrawable == key, case .running(let task)? = state.runs[id] else { return nil }
                state.withdrawn.insert(id)
                return task
            }
        }
        for task in tasks { task.cancel() }
        try await dropQueuedAnswer(platform: platform, message: message)
    }

    /// The answer to the command `message` carried, queued and not yet sent: marked failed, and
    /// the placeholder it was to replace says why.
    func dropQueuedAnswer(platform: String, message: String) async throws {
        let answerID = Self.answerID(platform: platform, message: message)
        guard let answer = try await store.outboxEntry(id: answerID), answer.state == .pending, answer.partsDelivered == 0 else { return }
        try await store.markFailed(id: answerID, attempts: answer.attempts, lastError: "withdrawn: its command was deleted before it was sent")
        RelayMetrics.command(RunOutcome.unparsed, outcome: "withdrawn")
        if let placeholder = answer.replaces {
            try await outbox.enqueue(
                outbox.entry(
                    platform: answer.platform, conversation: answer.conversation, address: answer.address, content: .reply(.info(Self.withdrawnNote)),
                    replaces: placeholder))
        }
    }

    /// Whether the command behind `key` was withdrawn; a store that cannot say is taken as no
    /// (the command is answered).
    func isWithdrawn(_ key: String?) async -> Bool {
        guard let key else { return false }
        return (try? await store.isClaimed(key: key, now: clock.now)) == true
    }

    /// Ends a withdrawn run: its item leaves the inbox with nothing kept, and a "working on it"
    /// message it showed says why no answer follows.
    func dropWithdrawn(_ item: InboxItem, placeholder: String?) async {
        RelayMetrics.command(RunOutcome.unparsed, outcome: "withdrawn")
        let route = item.route
        let note = placeholder.map {
            outbox.entry(
                platform: route.platform, conversation: route.conversation, address: route.address, content: .reply(.info(Self.withdrawnNote)),
                replaces: $0)
        }
        do {
            try await outbox.finishRun(id: item.id, replies: note.map { [$0] } ?? [])
            logger.info("a command deleted before its answer was not answered", metadata: ["inbox.id": "\(item.id)"])
        } catch {
            logger.error("could not drop a deleted command from the inbox; it runs again once its lease lapses", metadata: ["error": "\(error)"])
        }
    }
}

/// How much runs at once, and how much may wait (`runs.*` in configuration).
public struct RunLimits: Sendable, Hashable {
    /// Runs in flight at most; more wait in the inbox (in the store, not in memory). Runs mostly
    /// wait on the backend, so the default allows 256 per core: enough for 200 people with a
    /// backend that takes 200 ms, small enough that memory stays bounded.
    public var maxInFlight: Int
    /// Commands waiting in the inbox beyond which new ones are refused with a "busy" answer
    /// rather than queued for longer than anyone would wait.
    public var busyDepth: Int

    /// How long a run's lease on its inbox item lasts; it is renewed every third of it while the
    /// run goes on. A process that dies leaves its runs to others within about this long.
    public var lease: Duration
    /// How often the store is asked for waiting items when nothing woke the dispatcher: it finds
    /// the items of processes that died (their leases lapsed), and those written by other
    /// replicas while their notifications were lost.
    public var claimPoll: Duration

    public init(maxInFlight: Int = RunLimits.defaultMaxInFlight, busyDepth: Int = 5000, lease: Duration = .seconds(10), claimPoll: Duration = .seconds(1)) {
        self.maxInFlight = maxInFlight
        self.busyDepth = busyDepth
        self.lease = max(.milliseconds(30), lease)
        self.claimPoll = max(.milliseconds(10), claimPoll)
    }

    /// How often the leases of runs in flight are renewed.
    var renewal: Duration { lease / 3 }

    public static var defaultMaxInFlight: Int { 256 * max(1, System.coreCount) }
}
