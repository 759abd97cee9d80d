import Foundation
import Logging
import RelayCore
import RelayPipeline
import RelayStore
import RelayTestSupport
import Synchronization
import Testing

/// The outbox under more than it may send at once: replies handed over at a run's end take
/// slots like claimed ones, and a reply that must wait for its turn (pacing, the platform's
/// limits) waits without a slot, so it holds back neither other conversations nor other
/// platforms. The clock is manual: a turn comes only when the test moves it.
@Suite("Outbox fairness under overload")
struct OutboxFairnessTests {
    let logger = Logger(label: "test.outbox-fairness")

    func worker(_ outbox: Outbox, _ senders: [RecordingSender], maxInFlight: Int) -> OutboxWorker {
        let policy = DeliveryPolicy(
            maxAttempts: 3, retry: RetryPolicy(attempts: 3, baseDelay: .milliseconds(10), maxDelay: .milliseconds(20)), lease: .seconds(30),
            pollInterval: .seconds(3600), maxInFlight: maxInFlight, drainTimeout: .seconds(1))
        return OutboxWorker(outbox: outbox, senders: senders, policy: policy, parkedRuns: { _, _ in }, logger: logger)
    }

    /// A run's end hands its reply over in memory, as the dispatcher does.
    func finishRun(_ reply: OutboxEntry, store: any Store, outbox: Outbox) async throws {
        let event = Event(platform: reply.platform, team: "T1", channel: "C1", user: "U1", text: "/fix it")
        let route = ReplyRoute(platform: reply.platform, conversation: reply.conversation, address: reply.address)
        let id = try #require(try await store.admit(event, route: route, dedupeKey: nil, expiresAt: outbox.clock.now, now: outbox.clock.now))
        try await outbox.finishRun(id: id, replies: [reply])
    }

    @Test func repliesHandedOverAtARunsEndTakeNoMoreThanMaxInFlightSlots() async throws {
        try await TemporaryDatabase.with { db in
            let store = try await db.open()
            let clock = ManualClock()
            let outbox = Outbox(store: store, clock: clock)
            let sender = RecordingSender(clock: clock)
            let texts = (1...6).map { "reply \($0)" }
            for text in texts { sender.gate.hold(text) }
            try await whileRunning(worker(outbox, [sender], maxInFlight: 2)) {
                try await eventually("the worker to start") { try await store.pendingOutboxCount() == 0 }
                for (index, text) in texts.enumerated() {
                    try await finishRun(outbox.reply(text, conversation: "t:\(index)"), store: store, outbox: outbox)
                }
                // Two slots: two replies at the platform, the other four waiting their turn.
                _ = try await sender.first(2)
                try await settled(clock, what: "the worker waiting with two replies at the platform")
                #expect(sender.deliveries.count == 2)
                // One answered: one more starts, no more.
                sender.gate.release(try #require(sender.deliveries.first?.entry.replyBody))
                _ = try await sender.next()
                try await eventually("the first one written back") { try await store.pendingOutboxCount() == 5 }
                try await settled(clock, what: "the worker waiting with the next reply at the platform")
                #expect(sender.deliveries.count == 3)
                sender.gate.releaseAll()
                try await waitUntilNothingPending(store)
            }
            #expect(Set(sender.deliveries.compactMap(\.entry.replyBody)) == Set(texts))
            #expect(sender.deliveries.count == 6)
            #expect(sender.mostAtOnce == 2)
            try await store.close()
        }
    }

    @Test func aReplyThatMustWaitForItsTurnHoldsNoSlotAndYoungerRepliesGoPastIt() async throws {
        try await TemporaryDatabase.with { db in
            let store = try await db.open()
            let clock = ManualClock()
            let outbox = Outbox(store: store, clock: clock)
            let sender = RecordingSender(clock: clock)
            // The platform lets the busy chat have its next message only in 10 s.
            sender.turns.withLock { $0.conversations["t:busy"] = clock.now + .seconds(10) }
            try await whileRunning(worker(outbox, [sender], maxInFlight: 1)) {
                try await eventually("the worker to start") { try await store.pendingOutboxCount() == 0 }
                try await finishRun(outbox.reply("to the busy chat", conversation: "t:busy"), store: store, outbox: outbox)
                try await finishRun(outbox.reply("first elsewhere", conversation: "t:a"), store: store, outbox: outbox)
                try await finishRun(outbox.reply("second elsewhere", conversation: "t:b"), store: store, outbox: outbox)
                // The one slot serves the chats that can take a message now, one after the other.
                #expect(try await sender.first(2).map(\.entry.replyBody) == ["first elsewhere", "second elsewhere"])
                try await eventually("both marked sent") { try await store.pendingOutboxCount() == 1 }
                clock.advance(by: .seconds(10))
                #expect(try await sender.next().entry.replyBody == "to the busy chat")
                try await waitUntilNothingPending(store)
            }
            // Sent when its turn came, not before.
            let busy = try #require(sender.deliveries.first { $0.entry.conversation == "t:busy" })
            #expect(busy.at >= clock.now)
            try await store.close()
        }
    }

    @Test func aPlatformAtItsOverallLimitDoesNotHoldBackAnother() async throws {
        try await TemporaryDatabase.with { db in
            let store = try await db.open()
            let clock = ManualClock()
            let outbox = Outbox(store: store, clock: clock)
            let paced = RecordingSender(platform: "paced", clock: clock)
            let other = RecordingSender(clock: clock)
            paced.turns.withLock { $0.platform = clock.now + .seconds(5) }
            try await whileRunning(worker(outbox, [paced, other], maxInFlight: 1)) {
                try await eventually("the worker to start") { try await store.pendingOutboxCount() == 0 }
                // More than its share of the queue (64): the rest wait in the store for a claim.
                for index in 0..<100 {
                    let entry = outbox.entry(
                        platform: "paced", conversation: "p:\(index)", address: "addr", content: .reply(Reply(kind: .result, body: "paced \(index)")))
                    try await finishRun(entry, store: store, outbox: outbox)
                }
                try await finishRun(outbox.reply("not paced"), store: store, outbox: outbox)
                #expect(try await other.next().entry.replyBody == "not paced")
                #expect(paced.deliveries.isEmpty)
                // A millisecond more: instants are `Date`s, whose Double loses a little.
                clock.advance(by: .seconds(5) + .milliseconds(1))
                _ = try await paced.first(100)
                try await waitUntilNothingPending(store)
            }
            // Oldest first once the platform could send again.
            #expect(paced.deliveries.compactMap(\.entry.replyBody) == (0..<100).map { "paced \($0)" })
            try await store.close()
        }
    }

    @Test func aRateLimitedReplyGoesBeforeYoungerRepliesOnceItsWaitIsOver() async throws {
        try await TemporaryDatabase.with { db in
            let store = try await db.open()
            let clock = ManualClock()
            let outbox = Outbox(store: store, clock: clock)
            let sender = RecordingSender(clock: clock, scripts: ["t:old": [.rateLimited(retryAfter: .seconds(2), reason: "429")]])
            try await whileRunning(worker(outbox, [sender], maxInFlight: 1)) {
                try await eventually("the worker to start") { try await store.pendingOutboxCount() == 0 }
                try await finishRun(outbox.reply("old", conversation: "t:old"), store: store, outbox: outbox)
                #expect(try await sender.next().entry.replyBody == "old")
                try await eventually("the 429 written back") { try await store.outboxEntry(id: sender.deliveries[0].entry.id)?.attempts == 1 }
                // Younger replies, held at the platform one at a time while the old one waits.
                for index in 0..<3 { sender.gate.hold("young \(index)") }
                for index in 0..<3 {
                    clock.advance(by: .milliseconds(1))
                    try await finishRun(outbox.reply("young \(index)", conversation: "t:y\(index)"), store: store, outbox: outbox)
                }
                #expect(try await sender.next().entry.replyBody == "young 0")
                // The old reply's wait is over while "young 0" is at the platform: it is next.
                clock.advance(by: .seconds(2))
                try await outbox.enqueue(outbox.reply("a poke for a claim", conversation: "t:poke"))
                // Time for the claim the poke asks for, before the slot frees: nothing outside the
                // worker shows that claim, and the order checked below holds once it is done.
                try await Task.sleep(for: .milliseconds(100))
                sender.gate.releaseAll()
                try await waitUntilNothingPending(store)
            }
            let order = sender.deliveries.compactMap(\.entry.replyBody)
            #expect(Array(order.prefix(3)) == ["old", "young 0", "old"])
            try await store.close()
        }
    }
}
