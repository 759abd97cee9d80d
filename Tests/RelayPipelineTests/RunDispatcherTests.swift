import Foundation
import Logging
import RelayCore
import RelayPipeline
import RelayStore
import RelayTestSupport
import ServiceLifecycle
import Synchronization
import Testing

/// A backend whose calls never finish until cancelled: a run that is still going at shutdown.
struct HangingTribunal: Tribunal {
    let base = ScriptedTribunal()

    func quick(_ request: QuickRequest) async throws(TribunalError) -> QuickResult {
        try? await Task.sleep(for: .seconds(3600))
        return try await base.quick(request)
    }

    func consensus(_ request: ConsensusRequest) async throws(TribunalError) -> ConsensusResult {
        try? await Task.sleep(for: .seconds(3600))
        return try await base.consensus(request)
    }

    func health() async throws(TribunalError) -> BackendHealth { try await base.health() }
}

@Suite("Run dispatcher")
struct RunDispatcherTests {
    let logger = Logger(label: "test.dispatcher")
    let route = ReplyRoute(platform: "test", conversation: "t:c", address: "addr")

    func event(_ text: String, key: String? = nil) -> Event {
        Event(platform: "test", team: "t", channel: "c", user: "ada", text: text, eventKey: key)
    }

    @Test func aChainShowsProgressInOneMessageThatTheResultReplaces() async throws {
        try await TemporaryDatabase.with { db in
            let store = try await db.open()
            let clock = ManualClock()
            let outbox = Outbox(store: store, clock: clock)
            let relay = Relay(tribunal: ScriptedTribunal(), store: store, clock: clock)
            _ = await relay.handle(
                Event(
                    platform: "test", team: "t", channel: "c", user: "ada", text: "/chain save polish = input > grammar > rewrite:formal > output",
                    isAdmin: true))
            let dispatcher = RunDispatcher(relay: relay, outbox: outbox, progressInterval: .zero, logger: logger)
            let sender = RecordingSender(clock: clock)
            let worker = OutboxWorker(outbox: outbox, senders: [sender], policy: fastPolicy, parkedRuns: { _, _ in }, logger: logger)
            try await whileRunning([worker, dispatcher]) {
                try await dispatcher.submit(event("/run polish we has shipped"), route: route)
                try await eventually("the result") { sender.deliveries.contains { $0.entry.replyBody != nil } }
            }
            let deliveries = sender.deliveries
            let progress = deliveries.filter { if case .progress = $0.entry.content { true } else { false } }
            let first = try #require(progress.first)
            #expect(first.entry.replaces == nil)
            #expect(progress.dropFirst().allSatisfy { $0.entry.replaces == first.entry.id })
            let result = try #require(deliveries.last)
            #expect(result.entry.replyBody?.contains("we has shipped") == true)
            #expect(result.entry.replaces == first.entry.id)
            #expect(result.earlier?.platformRef == "msg-\(first.entry.id.prefix(8))", "the result edits the progress message")
            if case .reply(let reply) = result.entry.content {
                #expect(reply.actions == [.runAgain(commandLine: "/run polish we has shipped")])
            }
            try await store.close()
        }
    }

    /// Issue 28, point 3: where the platform cannot make a new message idempotent, the run posts
    /// "⏳ Working on /fix…" as it starts and the answer edits that message; a private answer or
    /// one that comes at once (`--private`, help) posts none.
    @Test func aRouteWithoutIdempotentSendsGetsAPlaceholderTheAnswerEdits() async throws {
        try await TemporaryDatabase.with { db in
            let store = try await db.open()
            let clock = ManualClock()
            let outbox = Outbox(store: store, clock: clock)
            let sender = RecordingSender(clock: clock, placeholders: true)
            let dispatcher = RunDispatcher(
                relay: Relay(tribunal: ScriptedTribunal(), store: store, clock: clock), outbox: outbox, senders: [sender], logger: logger)
            let worker = OutboxWorker(outbox: outbox, senders: [sender], policy: fastPolicy, parkedRuns: { _, _ in }, logger: logger)
            try await whileRunning([worker, dispatcher]) {
                for line in ["/fix teh cat", "/help", "/fix --private teh dog"] {
                    try await dispatcher.submit(event(line), route: route)
                    try await eventually("the answer to \(line)") { sender.deliveries.contains { $0.entry.replyBody != nil && isAnswer($0, to: line) } }
                }
            }
            let deliveries = sender.deliveries
            let placeholders = deliveries.filter { if case .progress = $0.entry.content { true } else { false } }
            #expect(placeholders.count == 1, "one placeholder: none for /help or --private")
            let placeholder = try #require(placeholders.first)
            #expect(placeholder.entry.content == .progress(.started("/fix")))
            #expect(placeholder.entry.id.hasPrefix("progress:"), "the run's own id: a run again after a crash finds it")
            let answer = try #require(deliveries.first { isAnswer($0, to: "/fix teh cat") })
            #expect(answer.entry.replaces == placeholder.entry.id)
            #expect(answer.earlier?.platformRef == "msg-\(placeholder.entry.id.prefix(8))", "the answer edits the placeholder's message")
            #expect(RunProgress.started("/fix").line == "Working on /fix…")
            for line in ["/help", "/fix --private teh dog"] {
                #expect(deliveries.first { isAnswer($0, to: line) }?.entry.replaces == nil)
            }
            try await store.close()
        }
    }

    /// Whether `delivery` is the reply to `line` (ScriptedTribunal echoes the text; /help lists commands).
    func isAnswer(_ delivery: RecordingSender.Delivery, to line: String) -> Bool {
        guard let body = delivery.entry.replyBody else { return false }
        if line == "/help" { return body.contains("/translate") }
        return body.contains(line.split(separator: " ").last.map(String.init) ?? line)
    }

    @Test func aRetriedPlatformEventGetsOneReply() async throws {
        try await TemporaryDatabase.with { db in
            let store = try await db.open()
            let outbox = Outbox(store: store, clock: ManualClock())
            let dispatcher = RunDispatcher(relay: Relay(tribunal: ScriptedTribunal(), store: store), outbox: outbox, logger: logger)
            let sender = RecordingSender()
            let worker = OutboxWorker(outbox: outbox, senders: [sender], policy: fastPolicy, parkedRuns: { _, _ in }, logger: logger)
            try await whileRunning([worker, dispatcher]) {
                var submissions: [Submission] = []
                for _ in 0..<3 { submissions.append(try await dispatcher.submit(event("/fix teh cat", key: "Ev1"), route: route)) }
                #expect(submissions == [.accepted(ahead: 0), .duplicate, .duplicate])
                // Every run has finished and everything it wrote is delivered: nothing more can come.
                try await eventually("every run to finish and its reply to be delivered") {
                    let pending = try await store.pendingOutboxCount()
                    return dispatcher.inFlight == 0 && pending == 0
                }
            }
            #expect(sender.deliveries.count == 1)
            try await store.close()
        }
    }

    @Test func shutdownLeavesUnfinishedRunsInTheInboxAndTheNextStartRunsThemOnce() async throws {
        try await TemporaryDatabase.with { db in
            // First life: the backend never answers; shutdown comes after a 20 s grace on the clock.
            var store = try await db.open()
            let clock = ManualClock()
            var outbox = Outbox(store: store, clock: clock)
            let slow = RunDispatcher(relay: Relay(tribunal: HangingTribunal(), store: store), outbox: outbox, grace: .seconds(20), logger: logger)
            let group = ServiceGroup(services: [slow], logger: logger)
            let running = Task { try await group.run() }
            try await slow.submit(event("/fix teh cat", key: "Ev9"), route: route)
            try await eventually("the run to start") { slow.inFlight == 1 }
            await group.triggerGracefulShutdown()
            // The grace is measured on the clock; the run is given it, then left in the inbox.
            // (Once the dispatcher stops taking runs, its one sleeper is the grace.)
            try await eventually("the dispatcher to stop taking runs") { !slow.isTakingRuns }
            await clock.waitForSleepers(1)
            clock.advance(by: .seconds(20))
            try await running.value
            #expect(try await store.inboxQueue().count == 1, "the command stays in the inbox")
            #expect(try await store.pendingOutboxCount() == 0, "and no reply was written for it")
            try await store.close()

            // Second life: the command runs again and its reply goes out once.
            store = try await db.open()
            outbox = Outbox(store: store, clock: clock)
            let dispatcher = RunDispatcher(relay: Relay(tribunal: ScriptedTribunal(), store: store), outbox: outbox, logger: logger)
            let sender = RecordingSender(clock: clock)
            let worker = OutboxWorker(outbox: outbox, senders: [sender], policy: fastPolicy, parkedRuns: { _, _ in }, logger: logger)
            try await whileRunning([worker, dispatcher]) {
                _ = try await sender.next()
                try await eventually("the rerun to finish and be delivered") {
                    let pending = try await store.pendingOutboxCount()
                    return dispatcher.inFlight == 0 && pending == 0
                }
            }
            #expect(sender.deliveries.count == 1)
            #expect(sender.deliveries.first?.entry.replyBody?.contains("teh cat") == true)
            #expect(sender.deliveries.first?.entry.conversation == "t:c")
            #expect(try await store.inboxQueue().isEmpty)
            try await store.close()
        }
    }

    @Test func eventsArrivingDuringShutdownStayInTheInbox() async throws {
        try await TemporaryDatabase.with { db in
            let store = try await db.open()
            let dispatcher = RunDispatcher(
                relay: Relay(tribunal: ScriptedTribunal(), store: store), outbox: Outbox(store: store, clock: ManualClock()), logger: logger)
            let group = ServiceGroup(services: [dispatcher], logger: logger)
            let running = Task { try await group.run() }
            await group.triggerGracefulShutdown()
            try await running.value
            #expect(try await dispatcher.submit(event("/fix late"), route: route) == .accepted(ahead: 0))
            #expect(try await store.inboxQueue().count == 1)
            #expect(dispatcher.inFlight == 0, "nothing starts while shutting down")
            try await store.close()
        }
    }
}

@Suite("Runs: bounded, fair, busy, and safe across a crash")
struct BoundedRunsTests {
    let logger = Logger(label: "test.runs")

    func route(_ team: String) -> ReplyRoute { ReplyRoute(platform: "test", conversation: "\(team):c", address: "addr:\(team)") }

    func event(_ text: String, team: String) -> Event {
        Event(platform: "test", team: team, channel: "c", user: "ada", text: text)
    }

    @Test func beyondTheBusyDepthACommandIsAnsweredBusyAndNotStored() async throws {
        try await TemporaryDatabase.with { db in
            let store = try await db.open()
            let dispatcher = RunDispatcher(
                relay: Relay(tribunal: HangingTribunal(), store: store), outbox: Outbox(store: store, clock: ManualClock()),
                limits: RunLimits(maxInFlight: 1, busyDepth: 2), logger: logger)
            #expect(try await dispatcher.submit(event("/fix one", team: "A"), route: route("A")) == .accepted(ahead: 0))
            let running = Task { try await dispatcher.run() }
            try await eventually("the first command to run") { dispatcher.inFlight == 1 }
            #expect(try await dispatcher.submit(event("/fix two", team: "A"), route: route("A")) == .accepted(ahead: 0))
            #expect(try await dispatcher.submit(event("/fix three", team: "A"), route: route("A")) == .accepted(ahead: 1))
            let busy = try await dispatcher.submit(event("/fix four", team: "A"), route: route("A"))
            #expect(busy == .busy(ahead: 2))
            #expect(busy.busyMessage?.contains("2 commands ahead of you") == true)
            #expect(try await store.inboxQueue().count == 3, "the refused command was not stored")
            // A platform's retry of a refused event is not told "busy" a second time.
            var keyed = event("/fix five", team: "A")
            keyed.eventKey = "Ev5"
            #expect(try await dispatcher.submit(keyed, route: route("A")) == .busy(ahead: 2))
            #expect(try await dispatcher.submit(keyed, route: route("A")) == .duplicate)
            #expect(dispatcher.inFlight == 1, "runs are capped")
            try await store.close()
            running.cancel()
        }
    }

    @Test func oneTeamsFloodDoesNotStarveAnother() async throws {
        try await TemporaryDatabase.with { db in
            let store = try await db.open()
            let recorder = ScriptedTribunal.Recorder()
            let dispatcher = RunDispatcher(
                relay: Relay(tribunal: ScriptedTribunal(recorder: recorder), store: store), outbox: Outbox(store: store, clock: ManualClock()),
                limits: RunLimits(maxInFlight: 1, busyDepth: 100), logger: logger)
            // Accepted before the dispatcher starts: all wait in the inbox, team A's ten first.
            for index in 0..<10 { try await dispatcher.submit(event("/fix flood \(index)", team: "A"), route: route("A")) }
            try await dispatcher.submit(event("/fix mine", team: "B"), route: route("B"))
            try await whileRunning([dispatcher]) {
                try await eventually("every command to run") { await recorder.quickRequests.count == 11 }
            }
            let order = await recorder.quickRequests.map(\.text)
            let position = try #require(order.firstIndex(of: "mine"))
            #expect(position <= 1, "team B's command ran after at most one of team A's: \(order)")
            #expect(try await store.inboxQueue().isEmpty)
            try await store.close()
        }
    }

    @Test func aCrashMidRunLosesNothingAndAnswersOnce() async throws {
        try await TemporaryDatabase.with { db in
            // First life: commands accepted, one running on a backend that never answers, the
            // others waiting; then the process dies — no shutdown, nothing parked.
            let first = try await db.open()
            let dying = RunDispatcher(
                relay: Relay(tribunal: HangingTribunal(), store: first), outbox: Outbox(store: first, clock: ManualClock()),
                limits: RunLimits(maxInFlight: 1, busyDepth: 100), logger: logger)
            let life = Task { try await dying.run() }
            for index in 0..<3 { try await dying.submit(event("/fix crash \(index)", team: "A"), route: route("A")) }
            try await eventually("a run to be in flight") { dying.inFlight == 1 }
            // The same file opened again, as the next process would; the first one is gone.
            let store = try await db.open()
            try await first.close()
            life.cancel()

            let outbox = Outbox(store: store, clock: ManualClock())
            let dispatcher = RunDispatcher(relay: Relay(tribunal: ScriptedTribunal(), store: store), outbox: outbox, logger: logger)
            let sender = RecordingSender()
            let worker = OutboxWorker(outbox: outbox, senders: [sender], policy: fastPolicy, parkedRuns: { _, _ in }, logger: logger)
            try await whileRunning([worker, dispatcher]) {
                try await eventually("every accepted command to be answered") {
                    let pending = try await store.pendingOutboxCount()
                    return sender.deliveries.count == 3 && pending == 0
                }
            }
            let answered = sender.deliveries.compactMap(\.entry.replyBody).sorted()
            #expect(answered.count == 3)
            for index in 0..<3 { #expect(answered.filter { $0.contains("crash \(index)") }.count == 1) }
            #expect(try await store.inboxQueue().isEmpty)
            try await store.close()
        }
    }
}
