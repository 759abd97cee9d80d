import Foundation
import Logging
import RelayCore
import RelayServer
import RelayStore
import Testing

@Suite("Outbox worker")
struct OutboxWorkerTests {
    let logger = Logger(label: "test.outbox")

    func worker(_ outbox: Outbox, _ sender: RecordingSender, policy: DeliveryPolicy = fastPolicy, parked: @escaping OutboxWorker.ParkedRunHandler = { _, _ in }) -> OutboxWorker {
        OutboxWorker(outbox: outbox, senders: [sender], policy: policy, parkedRuns: parked, logger: logger)
    }

    @Test func repliesOfOneConversationGoOutInOrderAndAreMarkedSent() async throws {
        try await TemporaryDatabase.with { db in
            let store = try await db.open()
            let outbox = Outbox(store: store)
            let entries = [outbox.reply("one"), outbox.reply("two"), outbox.reply("elsewhere", conversation: "t:other"), outbox.reply("three")]
            for entry in entries { try await outbox.enqueue(entry) }
            let sender = RecordingSender()
            let deliveries = try await whileRunning(worker(outbox, sender)) {
                let deliveries = try await sender.wait(for: 4)
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
            #expect(try await store.pendingOutboxCount() == 0)
            try await store.close()
        }
    }

    @Test func aRateLimitedReplyIsRetriedNoSoonerThanRetryAfter() async throws {
        try await TemporaryDatabase.with { db in
            let store = try await db.open()
            let outbox = Outbox(store: store)
            let entry = outbox.reply("hello")
            try await outbox.enqueue(entry)
            let sender = RecordingSender(script: [.rateLimited(retryAfter: 1, reason: "HTTP 429")])
            let deliveries = try await whileRunning(worker(outbox, sender)) {
                let deliveries = try await sender.wait(for: 2)
                try await waitUntilNothingPending(store)
                return deliveries
            }
            #expect(deliveries[0].at.duration(to: deliveries[1].at) >= .seconds(1))
            let stored = try await store.outboxEntry(id: entry.id)
            #expect(stored?.state == .sent)
            #expect(stored?.attempts == 1)
            try await store.close()
        }
    }

    @Test func passingFailuresAreRetriedThenGivenUpWithTheReason() async throws {
        try await TemporaryDatabase.with { db in
            let store = try await db.open()
            let outbox = Outbox(store: store)
            let doomed = outbox.reply("never", conversation: "t:a")
            let refused = outbox.reply("refused", conversation: "t:b")
            try await outbox.enqueue(doomed)
            try await outbox.enqueue(refused)
            let sender = RecordingSender(scripts: [
                "t:a": [.retryable(reason: "HTTP 503"), .retryable(reason: "HTTP 503"), .retryable(reason: "timed out")],
                "t:b": [.rejected(reason: "channel_not_found")],
            ])
            try await whileRunning(worker(outbox, sender)) {
                _ = try await sender.wait(for: 4)
                try await waitUntilNothingPending(store)
                try await Task.sleep(for: .milliseconds(100))
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
            var outbox = Outbox(store: store)
            let entry = outbox.reply("survives")
            try await outbox.enqueue(entry)
            // The crashed process had claimed it (a long lease) and died before sending.
            _ = try await store.claimDueOutbox(now: Date(), leaseUntil: Date().addingTimeInterval(3600), limit: 10)
            try await store.close()

            store = try await db.open()
            outbox = Outbox(store: store)
            let sender = RecordingSender()
            try await whileRunning(worker(outbox, sender)) {
                _ = try await sender.wait(for: 1)
                try await waitUntilNothingPending(store)
                try await Task.sleep(for: .milliseconds(300))
            }
            #expect(sender.deliveries.map(\.entry.id) == [entry.id])
            #expect(try await store.outboxEntry(id: entry.id)?.state == .sent)
            try await store.close()
        }
    }

    @Test func aReplyForAPlatformThatIsNotRunningFailsWithTheReason() async throws {
        try await TemporaryDatabase.with { db in
            let store = try await db.open()
            let outbox = Outbox(store: store)
            let entry = outbox.entry(platform: "discord", conversation: "x", address: "", content: .reply(.info("hi")))
            try await outbox.enqueue(entry)
            try await whileRunning(worker(outbox, RecordingSender())) {
                for _ in 0..<100 where try await store.outboxEntry(id: entry.id)?.state == .pending {
                    try await Task.sleep(for: .milliseconds(10))
                }
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
            let outbox = Outbox(store: store)
            for text in ["a", "b", "c"] { try await outbox.enqueue(outbox.reply(text)) }
            let sender = RecordingSender(minimumInterval: 0.2)
            let deliveries = try await whileRunning(worker(outbox, sender)) { try await sender.wait(for: 3) }
            #expect(deliveries[0].at.duration(to: deliveries[2].at) >= .milliseconds(400))
            try await store.close()
        }
    }
}
