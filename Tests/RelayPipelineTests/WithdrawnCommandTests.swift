import Foundation
import Logging
import RelayCore
import RelayPipeline
import RelayStore
import RelayTestSupport
import RelayTestTags
import Synchronization
import Testing

/// A backend that answers once let through, and counts the calls that arrived.
final class HeldTribunal: Tribunal {
    let base = ScriptedTribunal()
    private let state = Mutex((arrived: 0, open: false))

    var arrived: Int { state.withLock { $0.arrived } }
    func open() { state.withLock { $0.open = true } }

    func quick(_ request: QuickRequest) async throws(TribunalError) -> QuickResult {
        state.withLock { $0.arrived += 1 }
        // Bounded: a test that never opens it fails on its own wait, not here.
        for _ in 0..<3000 where !state.withLock({ $0.open }) { try? await Task.sleep(for: .milliseconds(10)) }
        return try await base.quick(request)
    }

    func consensus(_ request: ConsensusRequest) async throws(TribunalError) -> ConsensusResult { try await base.consensus(request) }
    func health() async throws(TribunalError) -> BackendHealth { try await base.health() }
}

/// Issue 47, point 9: a command whose message is deleted (or redacted) before its answer is
/// posted is not answered; a "working on it" message already shown says why.
@Suite("Withdrawn commands")
struct WithdrawnCommandTests {
    let logger = Logger(label: "test.withdrawn")
    let route = ReplyRoute(platform: "test", conversation: "t:c", address: "addr")

    func event(_ text: String, message: String, key: String? = nil) -> Event {
        Event(platform: "test", team: "t", channel: "c", user: "ada", text: text, eventKey: key, sourceMessage: message)
    }

    /// Runs `body` with a dispatcher over `tribunal` and a SQLite store; the sender posts a
    /// placeholder first when `placeholders`.
    func withDispatcher(
        tribunal: any Tribunal = ScriptedTribunal(), placeholders: Bool = false,
        _ body: (RunDispatcher, OutboxWorker, RecordingSender, any Store) async throws -> Void
    ) async throws {
        try await TemporaryDatabase.with { db in
            try await Self.withDispatcher(store: try await db.open(), tribunal: tribunal, placeholders: placeholders, logger: logger, body)
        }
    }

    static func withDispatcher(
        store: any Store, tribunal: any Tribunal, placeholders: Bool, logger: Logger,
        _ body: (RunDispatcher, OutboxWorker, RecordingSender, any Store) async throws -> Void
    ) async throws {
        let clock = ManualClock()
        let outbox = Outbox(store: store, clock: clock)
        let sender = RecordingSender(clock: clock, placeholders: placeholders)
        let dispatcher = RunDispatcher(relay: Relay(tribunal: tribunal, store: store, clock: clock), outbox: outbox, senders: [sender], logger: logger)
        let worker = OutboxWorker(outbox: outbox, senders: [sender], policy: fastPolicy, parkedRuns: { _, _ in }, logger: logger)
        do {
            try await body(dispatcher, worker, sender, store)
        } catch {
            try? await store.close()
            throw error
        }
        try await store.close()
    }

    func settled(_ dispatcher: RunDispatcher, _ store: any Store) async throws {
        try await eventually("every run to end and its replies to be delivered") {
            let pending = try await store.pendingOutboxCount()
            return dispatcher.inFlight == 0 && dispatcher.waiting == 0 && pending == 0
        }
    }

    @Test func aCommandDeletedBeforeItRunsIsNotAnswered() async throws {
        try await withDispatcher { dispatcher, worker, sender, store in
            try await whileRunning([worker, dispatcher]) {
                // The deletion can be seen first (Matrix: in the same sync, after the message).
                try await dispatcher.withdraw(platform: "test", message: "m1")
                try await dispatcher.submit(event("/fix teh cat", message: "m1"), route: route)
                try await dispatcher.submit(event("/fix teh dog", message: "m2"), route: route)
                try await eventually("the other command's answer") { sender.deliveries.contains { $0.entry.replyBody?.contains("dog") == true } }
                try await settled(dispatcher, store)
            }
            #expect(sender.deliveries.compactMap(\.entry.replyBody) == ["[grammar@cheap] teh dog"])
        }
    }

    @Test func aCommandDeletedWhileItRunsIsNotAnsweredAndItsPlaceholderSaysSo() async throws {
        try await TemporaryDatabase.with { db in try await Self.deletedWhileItRuns(store: try await db.open(), logger: logger) }
    }

    /// The run is cancelled when its command is withdrawn; what it writes then must still be
    /// written (a cancelled PostgreSQL call is refused, unlike SQLite's).
    static func deletedWhileItRuns(store: any Store, logger: Logger) async throws {
        let route = ReplyRoute(platform: "test", conversation: "t:c", address: "addr")
        func event(_ text: String, message: String) -> Event {
            Event(platform: "test", team: "t", channel: "c", user: "ada", text: text, sourceMessage: message)
        }
        let tribunal = HeldTribunal()
        try await withDispatcher(store: store, tribunal: tribunal, placeholders: true, logger: logger) { dispatcher, worker, sender, store in
            try await whileRunning([worker, dispatcher]) {
                try await dispatcher.submit(event("/fix teh cat", message: "m1"), route: route)
                try await eventually("the placeholder, and the run asking the backend") {
                    tribunal.arrived == 1 && sender.deliveries.contains { $0.entry.content == .progress(.started("/fix")) }
                }
                try await dispatcher.withdraw(platform: "test", message: "m1")
                tribunal.open()
                try await eventually("every run to end and its replies to be delivered") {
                    let pending = try await store.pendingOutboxCount()
                    return dispatcher.inFlight == 0 && dispatcher.waiting == 0 && pending == 0
                }
            }
            let bodies = sender.deliveries.compactMap(\.entry.replyBody)
            #expect(bodies == ["The command was deleted, so it is not answered."], "no answer: \(bodies)")
            let note = try #require(sender.deliveries.last)
            let placeholder = try #require(sender.deliveries.first)
            #expect(note.entry.replaces == placeholder.entry.id, "the placeholder's message is edited")
            #expect(try await store.history(team: "t", user: "ada", limit: 10).isEmpty, "nothing of it is kept")
        }
    }

    @Test func anAnswerQueuedAndNotYetSentIsDropped() async throws {
        try await withDispatcher(placeholders: true) { dispatcher, worker, sender, store in
            // The worker is not running: the placeholder and the answer wait in the outbox.
            try await whileRunning([dispatcher]) {
                try await dispatcher.submit(event("/fix teh cat", message: "m1"), route: route)
                try await eventually("the run to end") {
                    let pending = try await store.pendingOutboxCount()
                    return dispatcher.inFlight == 0 && pending == 2
                }
                try await dispatcher.withdraw(platform: "test", message: "m1")
                // Withdrawn twice (a platform's retry of the deletion): the same.
                try await dispatcher.withdraw(platform: "test", message: "m1")
            }
            try await whileRunning([worker]) {
                try await eventually("the outbox to empty") { try await store.pendingOutboxCount() == 0 }
            }
            #expect(sender.deliveries.compactMap(\.entry.replyBody) == ["The command was deleted, so it is not answered."])
            #expect(try await store.outboxEntry(id: "answer:test:m1")?.state == .failed)
        }
    }

    @Test func anAnswerAlreadySentStaysAndNothingMoreIsPosted() async throws {
        try await withDispatcher { dispatcher, worker, sender, store in
            try await whileRunning([worker, dispatcher]) {
                try await dispatcher.submit(event("/fix teh cat", message: "m1"), route: route)
                try await settled(dispatcher, store)
                try await dispatcher.withdraw(platform: "test", message: "m1")
                try await settled(dispatcher, store)
            }
            #expect(sender.deliveries.compactMap(\.entry.replyBody) == ["[grammar@cheap] teh cat"])
        }
    }

    @Test func twoCommandsNamingOneMessageAreBothAnswered() async throws {
        // As when a message's event key was forgotten (past `dedupeLifetime`) and it comes again:
        // its second answer must not clash with the first in the outbox.
        try await withDispatcher { dispatcher, worker, sender, store in
            try await whileRunning([worker, dispatcher]) {
                try await dispatcher.submit(event("/fix teh cat", message: "m1", key: "Ev1"), route: route)
                try await settled(dispatcher, store)
                try await dispatcher.submit(event("/fix teh dog", message: "m1", key: "Ev2"), route: route)
                try await settled(dispatcher, store)
            }
            #expect(sender.deliveries.compactMap(\.entry.replyBody) == ["[grammar@cheap] teh cat", "[grammar@cheap] teh dog"])
        }
    }
}

@Suite("Withdrawn commands on PostgreSQL", .tags(.peers))
struct WithdrawnCommandPostgresTests {
    @Test func aCommandDeletedWhileItRunsIsNotAnsweredAndItsPlaceholderSaysSo() async throws {
        try await PostgresTestServer.shared().withDatabase { database in
            let store = try await PostgresStore.open(url: try PostgresURL(database.url))
            try await WithdrawnCommandTests.deletedWhileItRuns(store: store, logger: Logger(label: "test.withdrawn"))
        }
    }
}
