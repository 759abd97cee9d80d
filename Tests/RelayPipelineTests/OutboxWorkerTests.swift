import Foundation
import Logging
import RelayCore
import RelayPipeline
import RelayStore
import RelayTestSupport
import Testing

/// The outbox worker on a manual clock: retries, Retry-After and pacing are checked in clock
/// time, which the tests advance; nothing waits for real time to pass.
@Suite("Outbox worker")
struct OutboxWorkerTests {
    let logger = Logger(label: "test.outbox")

    func worker(_ outbox: Outbox, _ sender: RecordingSender, policy: DeliveryPolicy = fastPolicy, parked: @escaping OutboxWorker.ParkedRunHandler = { _, _ in })
        -> OutboxWorker
    {
        OutboxWorker(outbox: outbox, senders: [sender], policy: policy, parkedRuns: parked, logger: logger)
    }

    @Test func repliesOfOneConversationGoOutInOrderAndAreMarkedSent() async throws {
        try await TemporaryDatabase.with { db in
            let store = try await db.open()
            let clock = ManualClock()
            let outbox = Outbox(store: store, clock: clock)
            let entries = [outbox.reply("one"), outbox.reply("two"), outbox.reply("elsewhere", conversation: "t:other"), outbox.reply("three")]
            for entry in entries { try await outbox.enqueue(entry) }
            let sender = RecordingSender(clock: clock)
            let deliveries = try await whileRunning(worker(outbox, sender)) {
                let deliveries = try await sender.first(4)
                try await waitUntilNothingPending(store)
                return deliveries
            }
            let inConversation = deliveries.filter { $0.entry.conversation == "t:c" }.compactMap(\.entry.replyBody)
            #expect(inConversation == ["one", "two", "three"])
            for entry in entries {
                let stored = try await store.outboxEntry(id: entry.id)
                #expect(stored?.state == .sent)
                #expect(stored?.platformRef == "msg-\(entry.id.prefix(8))")
            }
            #expect(sender.deliveries.count == 4)
            try await store.close()
        }
    }

    /// The clock never moves here, so the worker's poll never comes: whatever is delivered after
    /// the start was handed over at a run's end, or claimed because a delivery's end asked for it.
    @Test func runsRepliesGoOutAtOnceAndWhatIsWrittenBehindThemFollowsInOrderWithoutAPoll() async throws {
        try await TemporaryDatabase.with { db in
            let store = try await db.open()
            let clock = ManualClock()
            let outbox = Outbox(store: store, clock: clock)
            let sender = RecordingSender(clock: clock)
            sender.gate.hold("first")
            func finishRun(_ reply: OutboxEntry) async throws {
                let event = Event(platform: "test", team: "T1", channel: "C1", user: "U1", text: "/fix it")
                let route = ReplyRoute(platform: "test", conversation: reply.conversation, address: reply.address)
                let id = try #require(try await store.admit(event, route: route, dedupeKey: nil, expiresAt: clock.now, now: clock.now))
                try await outbox.finishRun(id: id, replies: [reply])
            }
            try await whileRunning(worker(outbox, sender)) {
                // The start's claim has run (nothing was there); from here on only handovers and asked-for claims.
                try await eventually("the worker to start") { try await store.pendingOutboxCount() == 0 }
                try await finishRun(outbox.reply("first"))
                #expect(try await sender.next().entry.replyBody == "first")
                // While "first" is in flight: a post written for a claim, and a run's reply behind it.
                try await outbox.enqueue(outbox.reply("second"))
                try await finishRun(outbox.reply("third"))
                // Another conversation is not held back.
                try await finishRun(outbox.reply("elsewhere", conversation: "t:other"))
                #expect(try await sender.next().entry.replyBody == "elsewhere")
                sender.gate.release("first")
                #expect(try await sender.first(2).map(\.entry.replyBody) == ["second", "third"])
                try await waitUntilNothingPending(store)
            }
            #expect(sender.deliveries.compactMap(\.entry.replyBody) == ["first", "elsewhere", "second", "third"])
            #expect(try await store.inboxQueue().isEmpty)
            try await store.close()
        }
    }

    @Test func aRateLimitedReplyIsRetriedNoSoonerThanRetryAfter() async throws {
        try await TemporaryDatabase.with { db in
            let store = try await db.open()
            let clock = ManualClock()
            let outbox = Outbox(store: store, clock: clock)
            let entry = outbox.reply("hello")
            try await outbox.enqueue(entry)
            let sender = RecordingSender(clock: clock, script: [.rateLimited(retryAfter: .seconds(1), reason: "HTTP 429")])
            try await whileRunning(worker(outbox, sender)) {
                _ = try await sender.next()
                try await advance(clock, by: .milliseconds(100), until: "the retry") { sender.deliveries.count >= 2 }
                try await waitUntilNothingPending(store)
            }
            let deliveries = sender.deliveries
            #expect(deliveries.count == 2)
            #expect(deliveries[1].at.duration(since: deliveries[0].at) >= .seconds(1) - .microseconds(1))
            let stored = try await store.outboxEntry(id: entry.id)
            #expect(stored?.state == .sent)
            #expect(stored?.attempts == 1)
            try await store.close()
        }
    }

    @Test(arguments: [Duration.seconds(-5), .seconds(1e12), .seconds(Int64.max)])
    func aHostileRetryAfterNeverTrapsNorParksTheConversationForLong(retryAfter: Duration) async throws {
        try await TemporaryDatabase.with { db in
            let store = try await db.open()
            let clock = ManualClock()
            let outbox = Outbox(store: store, clock: clock)
            let entry = outbox.reply("hello")
            try await outbox.enqueue(entry)
            let sender = RecordingSender(clock: clock, script: [.rateLimited(retryAfter: retryAfter, reason: "HTTP 429")])
            try await whileRunning(worker(outbox, sender)) {
                let first = try await sender.next()
                try await eventually("the retry to be scheduled") { try await store.outboxEntry(id: entry.id)?.attempts == 1 }
                let next = try #require(try await store.outboxEntry(id: entry.id)?.nextAttemptAt)
                #expect(next.duration(since: first.at) <= .seconds(15 * 60))
                #expect(next.duration(since: first.at) >= .zero)
            }
            try await store.close()
        }
    }

    @Test func passingFailuresAreRetriedThenGivenUpWithTheReason() async throws {
        try await TemporaryDatabase.with { db in
            let store = try await db.open()
            let clock = ManualClock()
            let outbox = Outbox(store: store, clock: clock)
            let doomed = outbox.reply("never", conversation: "t:a")
            let refused = outbox.reply("refused", conversation: "t:b")
            try await outbox.enqueue(doomed)
            try await outbox.enqueue(refused)
            let sender = RecordingSender(
                clock: clock,
                scripts: [
                    "t:a": [.retryable(reason: "HTTP 503"), .retryable(reason: "HTTP 503"), .retryable(reason: "timed out")],
                    "t:b": [.rejected(reason: "channel_not_found")],
                ])
            try await whileRunning(worker(outbox, sender)) {
                try await advance(clock, by: .milliseconds(10), until: "every attempt") { sender.deliveries.count >= 4 }
                try await waitUntilNothingPending(store)
                // Nothing is pending, so nothing can be delivered again, however long we wait.
                clock.advance(by: .seconds(3600))
            }
            #expect(sender.deliveries.count == 4, "3 tries of one, 1 of the refused one, no more")
            let failed = try await store.outboxEntry(id: doomed.id)
            #expect(failed?.state == .failed)
            #expect(failed?.attempts == 3)
            let gone = try await store.outboxEntry(id: refused.id)
            #expect(gone?.state == .failed)
            #expect(gone?.lastError == "channel_not_found")
            try await store.close()
        }
    }

    @Test func aReplyStoredButNotSentBeforeACrashIsDeliveredExactlyOnceAfterRestart() async throws {
        try await TemporaryDatabase.with { db in
            var store = try await db.open()
            let clock = ManualClock()
            var outbox = Outbox(store: store, clock: clock)
            let entry = outbox.reply("survives")
            try await outbox.enqueue(entry)
            // The crashed process had claimed it (a long lease) and died before sending.
            _ = try await store.claimDueOutbox(now: clock.now, leaseUntil: clock.now + .seconds(3600), limit: 10)
            try await store.close()

            store = try await db.open()
            outbox = Outbox(store: store, clock: clock)
            let sender = RecordingSender(clock: clock)
            try await whileRunning(worker(outbox, sender)) {
                _ = try await sender.next()
                try await waitUntilNothingPending(store)
            }
            #expect(sender.deliveries.map(\.entry.id) == [entry.id])
            #expect(try await store.outboxEntry(id: entry.id)?.state == .sent)
            try await store.close()
        }
    }

    @Test func aReplyForAPlatformThatIsNotRunningFailsWithTheReason() async throws {
        try await TemporaryDatabase.with { db in
            let store = try await db.open()
            let outbox = Outbox(store: store, clock: ManualClock())
            let entry = outbox.entry(platform: "discord", conversation: "x", address: "", content: .reply(.info("hi")))
            try await outbox.enqueue(entry)
            try await whileRunning(worker(outbox, RecordingSender())) {
                try await eventually("the entry to be given up") { try await store.outboxEntry(id: entry.id)?.state != .pending }
            }
            let stored = try await store.outboxEntry(id: entry.id)
            #expect(stored?.state == .failed)
            #expect(stored?.lastError == "no discord adapter is configured")
            try await store.close()
        }
    }

    @Test func sendsToOneConversationAreSpacedByTheSendersInterval() async throws {
        try await TemporaryDatabase.with { db in
            let store = try await db.open()
            let clock = ManualClock()
            let outbox = Outbox(store: store, clock: clock)
            for text in ["a", "b", "c"] { try await outbox.enqueue(outbox.reply(text)) }
            let sender = RecordingSender(clock: clock, minimumInterval: .milliseconds(200))
            try await whileRunning(worker(outbox, sender)) {
                // Idle is the worker's one wait: until its poll, or the next entry's turn when sooner.
                try await advance(clock, by: .milliseconds(50), idleSleepers: 1, until: "three sends") { sender.deliveries.count >= 3 }
            }
            let deliveries = sender.deliveries
            // Within a microsecond: clock instants are `Date`s, whose Double loses a little.
            #expect(deliveries[1].at.duration(since: deliveries[0].at) >= .milliseconds(200) - .microseconds(1))
            #expect(deliveries[2].at.duration(since: deliveries[1].at) >= .milliseconds(200) - .microseconds(1))
            try await store.close()
        }
    }

    @Test func aReplyInPartsIsSentPartByPartPacedAndResumesAfterTheFailedPart() async throws {
        try await TemporaryDatabase.with { db in
            let store = try await db.open()
            let clock = ManualClock()
            let outbox = Outbox(store: store, clock: clock)
            let entry = outbox.reply("three parts")
            try await outbox.enqueue(entry)
            let sender = RecordingSender(
                clock: clock, minimumInterval: .milliseconds(200),
                script: [
                    .partDelivered(platformRef: "first"), .rateLimited(retryAfter: .seconds(1), reason: "HTTP 429"),
                    .partDelivered(platformRef: "second"), .sent(platformRef: nil),
                ])
            try await whileRunning(worker(outbox, sender)) {
                try await advance(clock, by: .milliseconds(50), idleSleepers: 1, until: "four attempts") { sender.deliveries.count >= 4 }
                try await waitUntilNothingPending(store)
            }
            let deliveries = sender.deliveries
            // Each attempt asks for the part after the last one accepted; the 429 held back part 2 only.
            #expect(deliveries.map(\.entry.partsDelivered) == [0, 1, 1, 2])
            #expect(deliveries[1].at.duration(since: deliveries[0].at) >= .milliseconds(200) - .microseconds(1))
            #expect(deliveries[2].at.duration(since: deliveries[1].at) >= .seconds(1) - .microseconds(1))
            #expect(deliveries[3].at.duration(since: deliveries[2].at) >= .milliseconds(200) - .microseconds(1))
            let stored = try #require(try await store.outboxEntry(id: entry.id))
            #expect(stored.state == .sent)
            #expect(stored.partsDelivered == 2)
            #expect(stored.platformRef == "first")
            try await store.close()
        }
    }

    /// A replica that loses a platform's delivery lease (its renewals stalled past the lease)
    /// hands the replies it had queued back at once: the new holder sends them, and none leaves
    /// from here. Sent from both, they would be paced twice, by each replica's own limiter, and
    /// break the limits the platform counts per bot (issue 49).
    @Test func aReplicaThatLosesTheDeliveryLeaseHandsItsQueuedRepliesToTheNewHolder() async throws {
        try await TemporaryDatabase.with { db in
            let store = try await db.open()
            let clock = ManualClock()
            let policy = DeliveryPolicy(lease: .seconds(30), pollInterval: .milliseconds(50), maxInFlight: 1)
            let (old, new) = (RecordingSender(clock: clock), RecordingSender(clock: clock))
            let oldWorker = worker(Outbox(store: store, clock: clock), old, policy: policy)
            let newWorker = worker(Outbox(store: store, clock: clock), new, policy: policy)
            for worker in [oldWorker, newWorker] { worker.deliverOnlyUnderLease("test") }
            let outbox = Outbox(store: store, clock: clock)
            let entries = (1...5).map { outbox.reply("reply \($0)", conversation: "t:\($0)") }
            // The first delivery stays in flight, so the other four wait in the holder's queue.
            old.gate.hold("reply 1")
            // Both replicas run; each drops a single-process store's leases as it starts, so both
            // have started (each waits on the clock) before anything is claimed.
            try await whileRunning([newWorker, oldWorker]) {
                await clock.waitForSleepers(2)
                // Written before the lease is taken: taking it asks for a claim (the clock, and so the
                // poll, never moves here).
                for entry in entries { try await outbox.enqueue(entry) }
                let held = Task { await oldWorker.deliverWhileHeld("test", quiet: .zero) }
                #expect(try await old.next().entry.replyBody == "reply 1")
                // The lease is lost (cancelled, as when it could not be renewed in time); another
                // replica takes it.
                held.cancel()
                await held.value
                let holding = Task { await newWorker.deliverWhileHeld("test", quiet: .zero) }
                defer { holding.cancel() }
                try await advance(clock, by: .milliseconds(10), until: "the new holder to send the four queued replies") { new.deliveries.count >= 4 }
                old.gate.release("reply 1")
                try await waitUntilNothingPending(store)
            }
            #expect(old.deliveries.compactMap(\.entry.replyBody) == ["reply 1"], "the one in flight when the lease was lost, and no other")
            #expect(new.deliveries.compactMap(\.entry.replyBody).sorted() == ["reply 2", "reply 3", "reply 4", "reply 5"])
            for entry in entries { #expect(try await store.outboxEntry(id: entry.id)?.state == .sent) }
            try await store.close()
        }
    }

    /// Deliveries already started but still waiting for their turn inside the sender (a client
    /// pacing the bot's requests) when the lease is lost give the turn up: the new holder sends
    /// them, and the give-up counts no attempt.
    @Test func deliveriesWaitingForTheirTurnWhenTheLeaseIsLostAreLeftToTheNewHolder() async throws {
        try await TemporaryDatabase.with { db in
            let store = try await db.open()
            let clock = ManualClock()
            let policy = DeliveryPolicy(lease: .seconds(30), pollInterval: .milliseconds(50))
            let (old, new) = (RecordingSender(clock: clock, pacesByPermit: true), RecordingSender(clock: clock, pacesByPermit: true))
            let oldWorker = worker(Outbox(store: store, clock: clock), old, policy: policy)
            let newWorker = worker(Outbox(store: store, clock: clock), new, policy: policy)
            for worker in [oldWorker, newWorker] { worker.deliverOnlyUnderLease("test") }
            let outbox = Outbox(store: store, clock: clock)
            let entries = (1...3).map { outbox.reply("reply \($0)", conversation: "t:\($0)") }
            for entry in entries { old.gate.hold(entry.replyBody!) }
            try await whileRunning([newWorker, oldWorker]) {
                await clock.waitForSleepers(2)
                // Written before the lease is taken: taking it asks for a claim (the clock, and so the
                // poll, never moves here).
                for entry in entries { try await outbox.enqueue(entry) }
                let held = Task { await oldWorker.deliverWhileHeld("test", quiet: .zero) }
                _ = try await old.first(3)
                held.cancel()
                await held.value
                for entry in entries { old.gate.release(entry.replyBody!) }
                try await eventually("the three turns given up") { old.gaveUp.count == 3 }
                let holding = Task { await newWorker.deliverWhileHeld("test", quiet: .zero) }
                defer { holding.cancel() }
                try await advance(clock, by: .milliseconds(10), until: "the new holder to send the three") { new.deliveries.count >= 3 }
                try await waitUntilNothingPending(store)
            }
            #expect(old.gaveUp.sorted() == ["reply 1", "reply 2", "reply 3"])
            #expect(new.deliveries.compactMap(\.entry.replyBody).sorted() == ["reply 1", "reply 2", "reply 3"])
            #expect(new.deliveries.allSatisfy { $0.entry.attempts == 0 }, "giving a turn up is no attempt")
            for entry in entries { #expect(try await store.outboxEntry(id: entry.id)?.state == .sent) }
            try await store.close()
        }
    }

    /// A holder that has not learnt it lost its lease (its renewal is slow to come back) sends
    /// only until the window after its last confirmation ends, then gives each turn up as if it
    /// knew: its successor, whose quiet outlasts that window, never sends beside it.
    @Test func aHolderStopsSendingOnceItsLeaseIsNoLongerConfirmed() async throws {
        try await TemporaryDatabase.with { db in
            let store = try await db.open()
            let clock = ManualClock()
            let policy = DeliveryPolicy(lease: .seconds(30), pollInterval: .milliseconds(50))
            let (old, new) = (RecordingSender(clock: clock, pacesByPermit: true), RecordingSender(clock: clock, pacesByPermit: true))
            let oldWorker = worker(Outbox(store: store, clock: clock), old, policy: policy)
            let newWorker = worker(Outbox(store: store, clock: clock), new, policy: policy)
            for worker in [oldWorker, newWorker] { worker.deliverOnlyUnderLease("test") }
            let outbox = Outbox(store: store, clock: clock)
            let entries = (1...3).map { outbox.reply("reply \($0)", conversation: "t:\($0)") }
            for entry in entries { old.gate.hold(entry.replyBody!) }
            // Confirmed once, now; never again.
            let sendsUntil = clock.now + .seconds(1)
            try await whileRunning([newWorker, oldWorker]) {
                await clock.waitForSleepers(2)
                for entry in entries { try await outbox.enqueue(entry) }
                let held = Task { await oldWorker.deliverWhileHeld("test", quiet: .zero) { sendsUntil } }
                defer { held.cancel() }
                _ = try await old.first(3)
                old.gate.release("reply 1")
                try await eventually("reply 1 sent within the window") { try await store.outboxEntry(id: entries[0].id)?.state == .sent }
                clock.advance(by: .seconds(1))
                for entry in entries.dropFirst() { old.gate.release(entry.replyBody!) }
                try await eventually("the two turns after the window given up") { old.gaveUp.count == 2 }
                let holding = Task { await newWorker.deliverWhileHeld("test", quiet: .zero) }
                defer { holding.cancel() }
                try await advance(clock, by: .milliseconds(10), until: "the new holder to send the two") { new.deliveries.count >= 2 }
                try await waitUntilNothingPending(store)
            }
            #expect(old.gaveUp.sorted() == ["reply 2", "reply 3"], "nothing sent past the window, though the holder never learnt it lost the lease")
            #expect(!new.deliveries.contains { $0.entry.replyBody == "reply 1" }, "reply 1 was sent once, by the holder")
            #expect(new.deliveries.compactMap(\.entry.replyBody).sorted() == ["reply 2", "reply 3"])
            for entry in entries { #expect(try await store.outboxEntry(id: entry.id)?.state == .sent) }
            try await store.close()
        }
    }
}
