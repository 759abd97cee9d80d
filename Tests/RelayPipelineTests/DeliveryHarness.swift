import Foundation
import RelayCore
import RelayPipeline
import RelayStore
import RelayTestSupport
import ServiceLifecycle
import Synchronization

/// A platform that records what it is asked to deliver and answers from a script
/// (then `.sent` with a made-up message id). Each delivery is stamped with the clock's time.
final class RecordingSender: ReplySender {
    struct Delivery: Sendable {
        var entry: OutboxEntry
        var earlier: OutboxEntry?
        var at: Date
    }

    let platform: String
    let interval: Duration
    let clock: any RelayClock
    /// What `answersByEditingPlaceholder` says for every address.
    let placeholders: Bool
    private let script: Mutex<[DeliveryOutcome]>
    /// Scripts of single conversations, which are delivered in parallel (in no fixed order).
    private let scripts: Mutex<[String: [DeliveryOutcome]]>
    private let log = RequestLog<Delivery>()
    /// Holds a delivery whose reply body is held, until released: "in flight" as a state.
    let gate = FakeGate()
    /// When each conversation's next message can go, and any message at all: the platform's
    /// limits as `takeTurn(for:now:)` and `platformWait(now:)` report them.
    let turns = Mutex<(conversations: [String: Date], platform: Date?)>(([:], nil))
    /// Deliveries in progress now, and the most at once.
    private let active = Mutex<(now: Int, most: Int)>((0, 0))
    /// Like a platform client that paces the bot's requests: a delivery held at the gate is
    /// waiting for its turn, and asks `DeliveryPermit` before it takes it.
    let pacesByPermit: Bool
    /// Deliveries that gave their turn up: the permit was gone when it came.
    private let givenUp = Mutex<[String]>([])

    /// `script` answers deliveries in the order they come; `scripts` per conversation first.
    init(
        platform: String = "test", clock: any RelayClock = SystemClock(), minimumInterval: Duration = .zero, script: [DeliveryOutcome] = [],
        scripts: [String: [DeliveryOutcome]] = [:], placeholders: Bool = false, pacesByPermit: Bool = false
    ) {
        self.pacesByPermit = pacesByPermit
        self.platform = platform
        self.placeholders = placeholders
        self.clock = clock
        self.interval = minimumInterval
        self.script = Mutex(script)
        self.scripts = Mutex(scripts)
    }

    func minimumInterval(for entry: OutboxEntry) -> Duration { interval }

    func takeTurn(for entry: OutboxEntry, now: Date) -> Duration {
        turns.withLock { $0.conversations[entry.conversation].map { max(.zero, $0.duration(since: now)) } ?? .zero }
    }

    func platformWait(now: Date) -> Duration {
        turns.withLock { $0.platform.map { max(.zero, $0.duration(since: now)) } ?? .zero }
    }

    /// The most deliveries that were in progress at once.
    var mostAtOnce: Int { active.withLock { $0.most } }

    func answersByEditingPlaceholder(at address: String) -> Bool { placeholders }

    func deliver(_ entry: OutboxEntry, earlier: OutboxEntry?) async -> DeliveryOutcome {
        active.withLock { active in
            active.now += 1
            active.most = max(active.most, active.now)
        }
        defer { active.withLock { $0.now -= 1 } }
        log.append(Delivery(entry: entry, earlier: earlier, at: clock.now), key: "")
        if let body = entry.replyBody { await gate.pass(body) }
        if pacesByPermit, !DeliveryPermit.isHeld {
            givenUp.withLock { $0.append(entry.replyBody ?? entry.id) }
            return .rateLimited(retryAfter: .zero, reason: "another replica delivers this platform now")
        }
        let scripted = scripts.withLock { scripts -> DeliveryOutcome? in
            guard var queue = scripts[entry.conversation], !queue.isEmpty else { return nil }
            defer { scripts[entry.conversation] = queue }
            return queue.removeFirst()
        }
        return scripted ?? script.withLock { $0.isEmpty ? nil : $0.removeFirst() } ?? .sent(platformRef: "msg-\(entry.id.prefix(8))")
    }

    var deliveries: [Delivery] { log.all }

    /// The bodies of the deliveries that gave their turn up (`pacesByPermit`).
    var gaveUp: [String] { givenUp.withLock { $0 } }

    /// The next delivery attempt (in order), waiting for it to happen.
    func next() async throws -> Delivery {
        guard let delivery = await log.next("") else { throw EventuallyTimedOut(what: "a delivery (\(deliveries.count) so far)") }
        return delivery
    }

    /// The first `count` delivery attempts, waiting for them.
    func first(_ count: Int) async throws -> [Delivery] {
        var out: [Delivery] = []
        for _ in 0..<count { out.append(try await next()) }
        return out
    }
}

/// Waits until no entry of `store` is pending: the worker has written back every outcome,
/// which happens just after the sender returned (stopping it sooner cancels the write).
func waitUntilNothingPending(_ store: any Store) async throws {
    try await eventually("no outbox entry pending") { try await store.pendingOutboxCount() == 0 }
}

/// Moves `clock` forward in `step`s, letting the code under test run between steps, until
/// `done` holds. Times the code records are then clock times, whatever the machine's load.
///
/// With `idleSleepers`, a step is taken only once that many tasks sleep on the clock (the code
/// under test is idle, waiting for time), so a step never lands while it is still working and
/// the times it records are exact.
func advance(
    _ clock: ManualClock, by step: Duration, idleSleepers: Int = 0, until what: String, _ done: () async throws -> Bool
) async throws {
    for _ in 0..<20_000 {
        if try await done() { return }
        if clock.sleeperCount >= idleSleepers { clock.advance(by: step) }
        try await Task.sleep(for: .milliseconds(1))
    }
    throw EventuallyTimedOut(what: what)
}

/// Waits until the worker has done all it can do without the clock moving: it is waiting on
/// `clock` (its only sleeper) and still waiting after the tasks it woke have had their turns (a
/// hundred yields in a row). What a check then finds not started will not start until the test
/// moves the clock or releases a delivery — no wall-clock pause decides it.
func settled(_ clock: ManualClock, what: String) async throws {
    var quietTurns = 0
    for _ in 0..<200_000 {
        quietTurns = clock.sleeperCount >= 1 ? quietTurns + 1 : 0
        if quietTurns >= 100 { return }
        await Task.yield()
    }
    throw EventuallyTimedOut(what: what)
}

/// Runs `worker` in the background while `body` runs, then stops it.
func whileRunning<T>(_ worker: OutboxWorker, _ body: () async throws -> T) async throws -> T {
    try await whileRunning([worker], body)
}

/// Runs the services (each `run()` in a task of its own) while `body` runs, then cancels them.
func whileRunning<T>(_ services: [any Service], _ body: () async throws -> T) async throws -> T {
    let tasks = services.map { service in Task { try await service.run() } }
    defer { tasks.forEach { $0.cancel() } }
    let result = try await body()
    for task in tasks {
        task.cancel()
        _ = await task.result
    }
    return result
}

extension Outbox {
    /// A reply entry for the test platform.
    func reply(_ text: String, conversation: String = "t:c", replaces: String? = nil) -> OutboxEntry {
        entry(
            platform: "test", conversation: conversation, address: "addr:\(conversation)", content: .reply(Reply(kind: .result, body: text)), replaces: replaces
        )
    }
}

extension OutboxEntry {
    var replyBody: String? {
        if case .reply(let reply) = content { return reply.body }
        return nil
    }
}

let fastPolicy = DeliveryPolicy(
    maxAttempts: 3, retry: RetryPolicy(attempts: 3, baseDelay: .milliseconds(10), maxDelay: .milliseconds(20)), lease: .seconds(30),
    pollInterval: .milliseconds(50),
    drainTimeout: .seconds(1))
