import Foundation
public import Logging
public import RelayCore
public import ServiceLifecycle
import Synchronization

/// Runs events in the background and turns what they produce into outbox entries: adapters
/// acknowledge the platform at once and hand the event here.
///
/// A chain's progress becomes one message that is edited ("Running… 2/5"), and the result
/// replaces it. On graceful shutdown it stops starting runs, gives those in flight `grace` to
/// finish, and parks the rest in the outbox; the next start runs them again — so a restart never
/// loses a request. Events submitted while shutting down are parked at once. Grace and progress
/// pacing read the outbox's clock, so tests decide time.
public final class RunDispatcher: Service, Sendable {
    let relay: Relay
    let outbox: Outbox
    let logger: Logger
    /// How long runs in flight get to finish at shutdown before they are parked.
    let grace: Duration
    /// Least time between two progress edits of one run (Slack allows ~1 message a second).
    let progressInterval: Duration
    /// Signalled when the last run in flight finishes, so shutdown need not poll.
    private let idle = WakeSignal()

    private enum RunState { case running, finished, parked }

    private struct Run {
        var event: Event
        var route: ReplyRoute
        var state: RunState
        var task: Task<Void, Never>?
    }

    private let runs = Mutex<[Int: Run]>([:])
    private let nextRunID = Atomic<Int>(0)
    private let accepting = Atomic<Bool>(true)

    public init(relay: Relay, outbox: Outbox, grace: Duration = .seconds(20), progressInterval: Duration = .seconds(1), logger: Logger) {
        self.relay = relay
        self.outbox = outbox
        self.grace = grace
        self.progressInterval = progressInterval
        self.logger = logger
    }

    /// Runs currently in flight.
    public var inFlight: Int { runs.withLock { $0.count } }

    /// Starts handling `event` in the background and returns at once.
    public func submit(_ event: Event, route: ReplyRoute) async {
        guard accepting.load(ordering: .acquiring) else {
            await park(event, route: route)
            return
        }
        let id = nextRunID.wrappingAdd(1, ordering: .relaxed).newValue
        runs.withLock { $0[id] = Run(event: event, route: route, state: .running) }
        let task = Task { await self.execute(id: id, event: event, route: route) }
        runs.withLock { runs in
            if runs[id] != nil { runs[id]?.task = task }
        }
    }

    /// Runs again a run that was parked at the last shutdown (its event key is already claimed).
    public func resume(_ entry: OutboxEntry, event: Event) async {
        var event = event
        event.eventKey = nil
        await submit(event, route: ReplyRoute(platform: entry.platform, conversation: entry.conversation, address: entry.address))
    }

    public func run() async throws {
        try? await gracefulShutdown()
        accepting.store(false, ordering: .releasing)
        let clock = outbox.clock
        let deadline = clock.now + grace
        while inFlight > 0 && clock.now < deadline {
            await idle.wait(until: deadline, clock: clock)
        }
        // Whatever is still running is parked now; its task's late result is dropped.
        let leftovers = runs.withLock { runs -> [Run] in
            var parked: [Run] = []
            for (id, run) in runs where run.state == .running {
                runs[id]?.state = .parked
                parked.append(run)
            }
            return parked
        }
        for run in leftovers {
            await park(run.event, route: run.route)
            run.task?.cancel()
        }
        if !leftovers.isEmpty {
            logger.notice("runs still going at shutdown were parked; they run again at the next start", metadata: ["count": "\(leftovers.count)"])
        }
    }

    private func execute(id: Int, event: Event, route: ReplyRoute) async {
        let clock = outbox.clock
        let started = clock.now
        let progress = ProgressMessage(interval: progressInterval, clock: clock)
        let outcome = await relay.run(event) { step in
            await self.showProgress(step, progress: progress, route: route, runID: id)
        }
        // Only the state's owner writes the reply: a parked run's late result is dropped.
        let owned = runs.withLock { runs -> Bool in
            guard runs[id]?.state == .running else { return false }
            runs[id]?.state = .finished
            return true
        }
        defer {
            let empty = runs.withLock { runs in
                runs.removeValue(forKey: id)
                return runs.isEmpty
            }
            if empty { idle.signal() }
        }
        guard owned else { return }
        let command = outcome.metricName
        guard let reply = outcome.reply else {
            RelayMetrics.command(command, outcome: "duplicate")
            return
        }
        RelayMetrics.command(command, outcome: reply.kind.rawValue)
        let entry = outbox.entry(
            platform: route.platform, conversation: route.conversation, address: route.address,
            content: .reply(reply.withActions(for: event)), replaces: progress.messageID)
        do {
            try await outbox.enqueue(entry)
        } catch {
            logger.error("could not store a reply in the outbox", metadata: ["platform": "\(route.platform)", "error": "\(error)"])
        }
        RelayMetrics.runDuration(clock.now.duration(since: started), command: command)
    }

    private func showProgress(_ step: RunProgress, progress: ProgressMessage, route: ReplyRoute, runID: Int) async {
        guard runs.withLock({ $0[runID]?.state == .running }), let replaces = progress.take(step) else { return }
        let entry = outbox.entry(
            platform: route.platform, conversation: route.conversation, address: route.address,
            content: .progress(step), replaces: replaces.isEmpty ? nil : replaces)
        if replaces.isEmpty { progress.posted(entry.id) }
        try? await outbox.enqueue(entry)
    }

    private func park(_ event: Event, route: ReplyRoute) async {
        var event = event
        event.eventKey = nil
        let entry = outbox.entry(platform: route.platform, conversation: route.conversation, address: route.address, content: .parkedRun(event))
        do {
            try await outbox.store.enqueue(entry)  // not woken: the worker is stopping too
            RelayMetrics.parkedRun()
        } catch {
            logger.error("could not park a run at shutdown; it is lost", metadata: ["platform": "\(route.platform)", "error": "\(error)"])
        }
    }
}

/// The one progress message of a run: posted once, then edited at most every `interval` seconds.
final class ProgressMessage: Sendable {
    private struct State {
        var messageID: String?
        var lastShown: Date?
    }

    private let state = Mutex(State())
    let interval: Duration
    let clock: any RelayClock

    init(interval: Duration, clock: any RelayClock) {
        self.interval = interval
        self.clock = clock
    }

    /// The outbox entry the progress message was posted by, for the result to replace.
    var messageID: String? { state.withLock { $0.messageID } }

    /// Whether to show `step`: nil to skip it; "" to post the message; else the id to edit.
    func take(_ step: RunProgress) -> String? {
        state.withLock { state in
            let now = clock.now
            if let last = state.lastShown, now.duration(since: last) < interval { return nil }
            state.lastShown = now
            return state.messageID ?? ""
        }
    }

    func posted(_ id: String) {
        state.withLock { $0.messageID = id }
    }
}
