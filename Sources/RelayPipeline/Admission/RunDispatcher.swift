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
/// - At most `limits.maxInFlight` runs at once; the rest wait in the inbox — in the store, with
///   only their ids and teams here — and are taken team by team in turn (`TeamQueues`). Beyond
///   `limits.busyDepth` waiting, a new command is refused at once with a "busy" answer.
/// - A run ends by writing its reply to the outbox and removing its item from the inbox in one
///   transaction, so a crash at any moment either left the item (the run runs again at the next
///   start) or the reply (delivered, once) — never neither, never both.
/// - A chain's progress becomes one message that is edited ("Running… 2/5"); its outbox id comes
///   from the inbox id, so a run that runs again after a crash edits the same message.
/// - On graceful shutdown it stops starting runs, gives those in flight `grace` to finish, and
///   leaves the rest in the inbox for the next start.
///
/// Grace and progress pacing read the outbox's clock, so tests decide time.
public final class RunDispatcher: RelayInbox, Service, Sendable {
    let relay: Relay
    let outbox: Outbox
    let limits: RunLimits
    let logger: Logger
    /// How long runs in flight get to finish at shutdown before they are left to the next start.
    let grace: Duration
    /// Least time between two progress edits of one run (Slack allows ~1 message a second).
    let progressInterval: Duration
    /// Signalled when the last run in flight finishes, so shutdown need not poll.
    private let idle = WakeSignal()

    private enum RunState {
        case starting
        case running(Task<Void, Never>)
        case abandoned
    }

    private struct State {
        var runs: [Int64: RunState] = [:]
        /// Items being read from the store to start.
        var loading = 0
        var waiting = TeamQueues()
        /// False until the inbox left by the last process is read, and again once shutting down:
        /// meanwhile nothing starts (what arrives waits in the inbox).
        var starting = false
        var stopped = false
    }

    private let state = Mutex(State())

    public init(
        relay: Relay, outbox: Outbox, limits: RunLimits = RunLimits(), grace: Duration = .seconds(20), progressInterval: Duration = .seconds(1),
        logger: Logger
    ) {
        self.relay = relay
        self.outbox = outbox
        self.limits = limits
        self.grace = grace
        self.progressInterval = progressInterval
        self.logger = logger
    }

    var store: any Store { outbox.store }

    /// Runs currently in flight.
    public var inFlight: Int { state.withLock { $0.runs.count } }
    /// Accepted events waiting for a run.
    public var waiting: Int { state.withLock { $0.waiting.count } }

    /// Accepts `event` into the inbox (committed when this returns) and starts it when there is
    /// room; refuses a platform's retry, and anything beyond the busy depth.
    @discardableResult
    public func submit(_ event: Event, route: ReplyRoute) async throws -> Submission {
        let now = outbox.clock.now
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
        guard
            let id = try await store.admit(event, route: route, dedupeKey: dedupeKey, expiresAt: expiresAt, now: now)
        else {
            RelayMetrics.command(RunOutcome.unparsed, outcome: "duplicate")
            return .duplicate
        }
        var stored = event
        stored.eventKey = nil
        let (startNow, position, room) = state.withLock { state -> (Bool, Int, Bool) in
            let room = state.starting && state.runs.count + state.loading < limits.maxInFlight
            if room && state.waiting.count == 0 {
                state.runs[id] = .starting
                return (true, 0, true)
            }
            state.waiting.append(id, team: event.team)
            return (false, state.waiting.count - 1, room)
        }
        recordDepth()
        if startNow {
            launch(InboxItem(id: id, event: stored, route: route, acceptedAt: now))
        } else if room {
            // Others wait although there is room (their items are being read, or a read failed):
            // take them in turn, this one among them.
            Task { await self.startWaiting() }
        }
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
        await startFromInbox()
        try? await gracefulShutdown()
        state.withLock { $0.starting = false }
        let clock = outbox.clock
        let deadline = clock.now + grace
        while inFlight > 0 && clock.now < deadline {
            await idle.wait(until: deadline, clock: clock)
        }
        // What still runs stays in the inbox for the next start; its late result is dropped.
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
        let left = leftovers.count + waiting
        if left > 0 {
            logger.notice("commands not finished at shutdown stay in the inbox; they run at the next start", metadata: ["count": "\(left)"])
        }
    }

    /// Reads what the last process left in the inbox, then starts runs.
    private func startFromInbox() async {
        do {
            let tickets = try await store.inboxQueue()
            state.withLock { state in
                for ticket in tickets where state.runs[ticket.id] == nil { state.waiting.append(ticket.id, team: ticket.team) }
            }
            if !tickets.isEmpty { logger.notice("running the commands left in the inbox", metadata: ["count": "\(tickets.count)"]) }
        } catch {
            logger.error("could not read the inbox; its commands run at the next start", metadata: ["error": "\(error)"])
        }
        state.withLock { $0.starting = true }
        await startWaiting()
    }

    /// Starts waiting items while there is room, taking teams in turn.
    private func startWaiting() async {
        while true {
            let tickets = state.withLock { state -> [InboxTicket] in
                guard state.starting else { return [] }
                var taken: [InboxTicket] = []
                while state.runs.count + state.loading + taken.count < limits.maxInFlight, let ticket = state.waiting.next() {
                    taken.append(ticket)
                }
                state.loading += taken.count
                return taken
            }
            guard !tickets.isEmpty else { return }
            recordDepth()
            let items = await load(tickets)
            state.withLock { state in
                state.loading -= tickets.count
                for item in items ?? [] { state.runs[item.id] = .starting }
            }
            // A store that cannot be read now is not retried in a loop: the tickets wait again.
            guard let items else { return }
            for item in items { launch(item) }
        }
    }

    /// The items behind `tickets`; one whose event cannot be read is removed from the inbox and
    /// logged. On a store failure the tickets wait again (tried when a run ends or a command
    /// arrives).
    private func load(_ tickets: [InboxTicket]) async -> [InboxItem]? {
        var tickets = tickets
        while true {
            do {
                return try await store.inboxItems(ids: tickets.map(\.id))
            } catch StoreError.unreadableInboxItem(let id, let reason) {
                logger.error("an inbox item cannot be read and is removed", metadata: ["inbox.id": "\(id)", "reason": "\(reason)"])
                _ = try? await store.dropInboxItem(id: id)
                tickets.removeAll { $0.id == id }
            } catch {
                logger.error("could not read waiting commands from the inbox", metadata: ["error": "\(error)"])
                state.withLock { state in
                    for ticket in tickets { state.waiting.append(ticket.id, team: ticket.team) }
                }
                return nil
            }
        }
    }

    private func launch(_ item: InboxItem) {
        let task = Task { await self.execute(item) }
        state.withLock { state in
            if case .starting? = state.runs[item.id] { state.runs[item.id] = .running(task) }
        }
    }

    private func execute(_ item: InboxItem) async {
        let clock = outbox.clock
        let started = clock.now
        RelayMetrics.inboxWait(started.timeIntervalSince(item.acceptedAt))
        let event = item.event
        let route = item.route
        let progress = ProgressMessage(id: "progress:\(item.id)", interval: progressInterval, clock: clock)
        let outcome = await relay.run(event) { step in
            await self.showProgress(step, progress: progress, route: route, id: item.id)
        }
        defer { finished(item.id) }
        // A run abandoned at shutdown stays in the inbox: its (cancelled) result is not written.
        guard state.withLock({ !$0.stopped }) else { return }
        let command = outcome.metricName
        var replies: [OutboxEntry] = []
        if let reply = outcome.reply {
            RelayMetrics.command(command, outcome: reply.kind.rawValue)
            replies.append(
                outbox.entry(
                    platform: route.platform, conversation: route.conversation, address: route.address,
                    content: .reply(reply.withActions(for: event)), replaces: progress.messageID))
        }
        do {
            try await outbox.finishRun(id: item.id, record: outcome.record, replies: replies)
        } catch {
            logger.error(
                "could not store a reply in the outbox; the command runs again at the next start",
                metadata: ["platform": "\(route.platform)", "error": "\(error)"])
        }
        RelayMetrics.runDuration(clock.now.duration(since: started), command: command)
    }

    /// A run is over: its slot goes to the next waiting item.
    private func finished(_ id: Int64) {
        let (empty, waiting) = state.withLock { state in
            state.runs.removeValue(forKey: id)
            return (state.runs.isEmpty, state.waiting.count > 0)
        }
        if empty { idle.signal() }
        if waiting { Task { await self.startWaiting() } }
    }

    private func showProgress(_ step: RunProgress, progress: ProgressMessage, route: ReplyRoute, id: Int64) async {
        guard state.withLock({ !$0.stopped }), let replaces = progress.take(step) else { return }
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
    }

    private func recordDepth() {
        let (waiting, running) = state.withLock { ($0.waiting.count, $0.runs.count) }
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
        guard let command = try? CommandParser().parse(event.text) else { return nil }
        switch command.kind {
        case .translate, .action(.grammar), .action(.rewrite): return await relay.handle(event)
        default: return nil
        }
    }
}

/// The one progress message of a run: posted once, then edited at most every `interval` seconds.
final class ProgressMessage: Sendable {
    private struct State {
        var posted = false
        var lastShown: Date?
    }

    /// The outbox id of the message's first post.
    let id: String
    private let state = Mutex(State())
    let interval: Duration
    let clock: any RelayClock

    init(id: String, interval: Duration, clock: any RelayClock) {
        self.id = id
        self.interval = interval
        self.clock = clock
    }

    /// The outbox entry the progress message was posted by, for the result to replace.
    var messageID: String? { state.withLock { $0.posted ? id : nil } }

    /// Whether to show `step`: nil to skip it; "" to post the message; else the id to edit.
    func take(_ step: RunProgress) -> String? {
        state.withLock { state in
            let now = clock.now
            if let last = state.lastShown, now.duration(since: last) < interval { return nil }
            state.lastShown = now
            return state.posted ? id : ""
        }
    }

    func posted() {
        state.withLock { $0.posted = true }
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

    public init(maxInFlight: Int = RunLimits.defaultMaxInFlight, busyDepth: Int = 5000) {
        self.maxInFlight = maxInFlight
        self.busyDepth = busyDepth
    }

    public static var defaultMaxInFlight: Int { 256 * max(1, System.coreCount) }
}

/// The inbox's waiting items as the scheduler sees them: ids per team, and the teams taken in
/// turn — so one team's flood cannot starve another team, whose next command is taken after at
/// most one of each other team's.
struct TeamQueues {
    private var queues: [String: FIFO<Int64>] = [:]
    /// Teams with waiting items, in the order they are served.
    private var turns = FIFO<String>()
    private var ids: Set<Int64> = []

    var count: Int { ids.count }

    func contains(_ id: Int64) -> Bool { ids.contains(id) }

    /// Adds an item at the end of its team's queue; nothing when it is already waiting.
    mutating func append(_ id: Int64, team: String) {
        guard ids.insert(id).inserted else { return }
        if queues[team, default: FIFO()].isEmpty { turns.push(team) }
        queues[team, default: FIFO()].push(id)
    }

    /// The next item: the head of the team whose turn it is; that team goes to the back.
    mutating func next() -> InboxTicket? {
        while let team = turns.pop() {
            guard let id = queues[team]?.pop() else { continue }
            if queues[team]?.isEmpty == false {
                turns.push(team)
            } else {
                queues[team] = nil
            }
            ids.remove(id)
            return InboxTicket(id: id, team: team)
        }
        return nil
    }
}

/// A first-in-first-out queue on an array: pops move a head index, and the consumed front is
/// dropped once it is more than half of the storage.
struct FIFO<Element> {
    private var items: [Element] = []
    private var head = 0

    var isEmpty: Bool { head == items.count }
    var count: Int { items.count - head }

    mutating func push(_ item: Element) { items.append(item) }

    mutating func pop() -> Element? {
        guard head < items.count else { return nil }
        let item = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 64 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return item
    }
}
