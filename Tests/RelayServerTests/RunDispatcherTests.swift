import Foundation
import Logging
import RelayCore
import RelayServer
import RelayStore
import RelayTestSupport
import ServiceLifecycle
import Synchronization
import Testing

/// A backend whose quick calls take `delay` seconds (or until cancelled).
struct SlowTribunal: Tribunal {
    let base = ScriptedTribunal()
    let delay: Double

    func quick(_ request: QuickRequest) async throws(TribunalError) -> QuickResult {
        try? await Task.sleep(for: .seconds(delay))
        return try await base.quick(request)
    }

    func consensus(_ request: ConsensusRequest) async throws(TribunalError) -> ConsensusResult {
        try? await Task.sleep(for: .seconds(delay))
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
            let outbox = Outbox(store: store)
            let relay = Relay(tribunal: ScriptedTribunal(), store: store)
            _ = await relay.handle(event("/chain save polish = input > grammar > rewrite:formal > output"))
            let dispatcher = RunDispatcher(relay: relay, outbox: outbox, progressInterval: .zero, logger: logger)
            let sender = RecordingSender()
            let worker = OutboxWorker(outbox: outbox, senders: [sender], policy: fastPolicy, parkedRuns: { _, _ in }, logger: logger)
            let deliveries = try await whileRunning(worker) {
                await dispatcher.submit(event("/run polish we has shipped"), route: route)
                for _ in 0..<500 where !(sender.deliveries.contains { $0.entry.replyBody != nil }) {
                    try await Task.sleep(for: .milliseconds(10))
                }
                return sender.deliveries
            }
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

    @Test func aRetriedPlatformEventGetsOneReply() async throws {
        try await TemporaryDatabase.with { db in
            let store = try await db.open()
            let outbox = Outbox(store: store)
            let dispatcher = RunDispatcher(relay: Relay(tribunal: ScriptedTribunal(), store: store), outbox: outbox, logger: logger)
            let sender = RecordingSender()
            let worker = OutboxWorker(outbox: outbox, senders: [sender], policy: fastPolicy, parkedRuns: { _, _ in }, logger: logger)
            try await whileRunning(worker) {
                for _ in 0..<3 { await dispatcher.submit(event("/fix teh cat", key: "Ev1"), route: route) }
                _ = try await sender.wait(for: 1)
                try await Task.sleep(for: .milliseconds(300))
            }
            #expect(sender.deliveries.count == 1)
            try await store.close()
        }
    }

    @Test func shutdownParksUnfinishedRunsAndTheNextStartRunsThemOnce() async throws {
        try await TemporaryDatabase.with { db in
            // First life: the backend is slow; shutdown comes after a 0.2 s grace.
            var store = try await db.open()
            var outbox = Outbox(store: store)
            let slow = RunDispatcher(relay: Relay(tribunal: SlowTribunal(delay: 30), store: store), outbox: outbox, grace: .milliseconds(200), logger: logger)
            let group = ServiceGroup(services: [slow], logger: logger)
            let running = Task { try await group.run() }
            await slow.submit(event("/fix teh cat", key: "Ev9"), route: route)
            #expect(slow.inFlight == 1)
            await group.triggerGracefulShutdown()
            try await running.value
            #expect(try await store.pendingOutboxCount() == 1, "the run is parked")
            try await store.close()

            // Second life: the parked run runs again and its reply goes out once.
            store = try await db.open()
            outbox = Outbox(store: store)
            let dispatcher = RunDispatcher(relay: Relay(tribunal: ScriptedTribunal(), store: store), outbox: outbox, logger: logger)
            let sender = RecordingSender()
            let worker = OutboxWorker(
                outbox: outbox, senders: [sender], policy: fastPolicy, parkedRuns: { entry, event in await dispatcher.resume(entry, event: event) },
                logger: logger)
            try await whileRunning(worker) {
                _ = try await sender.wait(for: 1)
                try await waitUntilNothingPending(store)
                try await Task.sleep(for: .milliseconds(300))
            }
            #expect(sender.deliveries.count == 1)
            #expect(sender.deliveries.first?.entry.replyBody?.contains("teh cat") == true)
            #expect(sender.deliveries.first?.entry.conversation == "t:c")
            #expect(try await store.pendingOutboxCount() == 0)
            try await store.close()
        }
    }

    @Test func eventsArrivingDuringShutdownAreParkedNotLost() async throws {
        try await TemporaryDatabase.with { db in
            let store = try await db.open()
            let dispatcher = RunDispatcher(relay: Relay(tribunal: ScriptedTribunal(), store: store), outbox: Outbox(store: store), grace: .milliseconds(100), logger: logger)
            let group = ServiceGroup(services: [dispatcher], logger: logger)
            let running = Task { try await group.run() }
            await group.triggerGracefulShutdown()
            try await running.value
            await dispatcher.submit(event("/fix late"), route: route)
            #expect(try await store.pendingOutboxCount() == 1)
            try await store.close()
        }
    }
}
