import Foundation
import RelayCore
import RelayPipeline
import RelayStore
import RelayTestTags
import Testing

@Suite("The outbox, in every store", .tags(.peers))
struct OutboxStoreTests {
    typealias Fixtures = OutboxFixtures

    // MARK: Round trip

    @Test(
        "Every kind of content comes back from the store as it was enqueued",
        arguments: StoreKind.allCases, Fixtures.everyContent)
    func roundTrip(kind: StoreKind, entry: OutboxEntry) async throws {
        try await withStore(kind) { store in
            try await store.enqueue(entry)
            #expect(try await store.outboxEntry(id: entry.id) == entry)
            #expect(try await store.outboxEntry(id: "no-such-entry") == nil)
        }
    }

    @Test("A claimed entry is returned whole", arguments: StoreKind.allCases)
    func claimReturnsWholeEntries(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            for entry in Fixtures.everyContent {
                try await store.enqueue(entry)
            }
            let claimed = try await store.claimDueOutbox(now: instant(60), leaseUntil: instant(120), limit: 10)
            // One per conversation: reply-1 holds back parked-1 in slack:T1:C1.
            #expect(claimed == [Fixtures.everyContent[0], Fixtures.everyContent[1]])
        }
    }

    @Test("A claim that leaves some platforms out takes only the others' entries", arguments: StoreKind.allCases)
    func claimLeavesPlatformsOut(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            var telegram = Fixtures.entry("t1", conversation: "telegram:42", created: 1)
            telegram.platform = "telegram"
            try await store.enqueue(Fixtures.entry("s1", created: 2))
            try await store.enqueue(telegram)
            #expect(try await store.claimDueOutbox(now: instant(60), leaseUntil: instant(120), limit: 10, excluding: ["slack", "telegram"]).isEmpty)
            #expect(try await store.claimDueOutbox(now: instant(60), leaseUntil: instant(120), limit: 10, excluding: ["telegram"]).map(\.id) == ["s1"])
            // The Slack entry is leased now; the Telegram one was left for the replica that delivers Telegram.
            #expect(try await store.claimDueOutbox(now: instant(60), leaseUntil: instant(120), limit: 10, excluding: []).map(\.id) == ["t1"])
        }
    }

    @Test("Marks sent at once are each kept, and one for an unknown id fails alone", arguments: StoreKind.allCases)
    func concurrentMarks(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let entries = (0..<40).map { Fixtures.entry("m\($0)", conversation: "slack:T1:C\($0)", created: Double($0)) }
            for entry in entries { try await store.enqueue(entry) }
            let failures = try await withThrowingTaskGroup(of: Bool.self) { group in
                for (index, entry) in entries.enumerated() {
                    group.addTask {
                        try await store.markSent(id: entry.id, platformRef: "ts.\(index)", at: instant(100))
                        return false
                    }
                }
                group.addTask {
                    do {
                        try await store.markSent(id: "no-such-entry", platformRef: nil, at: instant(100))
                        return false
                    } catch {
                        return true
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(failures == 1)
            #expect(try await store.pendingOutboxCount() == 0)
            for (index, entry) in entries.enumerated() {
                let stored = try await store.outboxEntry(id: entry.id)
                #expect(stored?.state == .sent && stored?.platformRef == "ts.\(index)")
            }
        }
    }

    @Test(
        "Enqueuing an id that is already in the outbox fails and keeps the first entry",
        arguments: StoreKind.allCases)
    func duplicateId(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let first = Fixtures.entry("e1")
            try await store.enqueue(first)
            let error = try await #require(throws: StoreError.self) {
                try await store.enqueue(Fixtures.entry("e1", conversation: "other", created: 9))
            }
            #expect(error.description.contains("e1"))
            #expect(error.description.contains("already exists"))
            #expect(try await store.outboxEntry(id: "e1") == first)
            #expect(try await store.pendingOutboxCount() == 1)
        }
    }

    // MARK: Order

    @Test(
        "A conversation's entries come out one at a time, in order, each after the previous is done",
        arguments: StoreKind.allCases)
    func oneConversationInOrder(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            // The first two share a creation instant, so enqueue order decides between them. The ids
            // sort the other way on purpose, so a result in id order would fail.
            try await store.enqueue(Fixtures.entry("c-first", created: 0))
            try await store.enqueue(Fixtures.entry("b-second", created: 0))
            try await store.enqueue(Fixtures.entry("a-third", created: 1))

            #expect(try await claim(store, at: 10) == ["c-first"])
            // Leased and unfinished, it holds back the rest, even once its lease has ended.
            #expect(try await claim(store, at: 11).isEmpty)
            #expect(try await claim(store, at: 100) == ["c-first"])

            try await store.markSent(id: "c-first", platformRef: "ts-1", at: instant(101))
            #expect(try await claim(store, at: 102) == ["b-second"])
            #expect(try await claim(store, at: 103).isEmpty)

            try await store.markFailed(id: "b-second", attempts: 5, lastError: "channel_not_found")
            #expect(try await claim(store, at: 104) == ["a-third"])

            try await store.markSent(id: "a-third", platformRef: "ts-3", at: instant(105))
            #expect(try await claim(store, at: 106).isEmpty)
        }
    }

    @Test("Creation time orders a conversation before enqueue order does", arguments: StoreKind.allCases)
    func creationTimeFirst(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await store.enqueue(Fixtures.entry("later", created: 5))
            try await store.enqueue(Fixtures.entry("earlier", created: 1))
            #expect(try await claim(store, at: 10) == ["earlier"])
            try await store.markSent(id: "earlier", platformRef: nil, at: instant(11))
            #expect(try await claim(store, at: 12) == ["later"])
        }
    }

    @Test("Different conversations come out together, oldest first", arguments: StoreKind.allCases)
    func conversationsTogether(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await store.enqueue(Fixtures.entry("c1-a", conversation: "C1", created: 0))
            try await store.enqueue(Fixtures.entry("c1-b", conversation: "C1", created: 1))
            try await store.enqueue(Fixtures.entry("c2-a", conversation: "C2", created: -1))
            try await store.enqueue(Fixtures.entry("c3-a", conversation: "C3", created: 2))
            #expect(try await claim(store, at: 10) == ["c2-a", "c1-a", "c3-a"])
        }
    }

    // MARK: Retry and leases

    @Test("Rescheduling into the future hides the entry and its conversation until then", arguments: StoreKind.allCases)
    func rescheduleHides(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await store.enqueue(Fixtures.entry("c1-a", conversation: "C1", created: 0))
            try await store.enqueue(Fixtures.entry("c1-b", conversation: "C1", created: 1))
            try await store.enqueue(Fixtures.entry("c2-a", conversation: "C2", created: 2))
            #expect(try await claim(store, at: 10) == ["c1-a", "c2-a"])

            try await store.reschedule(id: "c1-a", attempts: 1, nextAttemptAt: instant(100), lastError: "HTTP 429")
            try await store.markSent(id: "c2-a", platformRef: nil, at: instant(11))
            // The lease is dropped, but c1-a is not due, and c1-b waits behind it.
            #expect(try await claim(store, at: 20).isEmpty)
            #expect(try await claim(store, at: 99).isEmpty)
            // Due at exactly its next attempt.
            #expect(try await claim(store, at: 100) == ["c1-a"])

            let rescheduled = try #require(try await store.outboxEntry(id: "c1-a"))
            #expect(rescheduled.state == .pending)
            #expect(rescheduled.attempts == 1)
            #expect(rescheduled.nextAttemptAt == instant(100))
            #expect(rescheduled.lastError == "HTTP 429")
        }
    }

    @Test("A live lease hides an entry; an ended one does not", arguments: StoreKind.allCases)
    func leases(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await store.enqueue(Fixtures.entry("e1"))
            let claimed = try await store.claimDueOutbox(now: instant(0), leaseUntil: instant(60), limit: 10)
            #expect(claimed.map(\.id) == ["e1"])
            #expect(try await claim(store, at: 30).isEmpty)
            // A lease lasts up to and including its end.
            #expect(try await claim(store, at: 60).isEmpty)
            #expect(try await claim(store, at: 61) == ["e1"])
        }
    }

    @Test("Rescheduling drops the lease: a due retry is claimable at once", arguments: StoreKind.allCases)
    func rescheduleDropsLease(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await store.enqueue(Fixtures.entry("e1"))
            #expect(try await claim(store, at: 0) == ["e1"])
            try await store.reschedule(id: "e1", attempts: 1, nextAttemptAt: instant(5), lastError: "timeout")
            #expect(try await claim(store, at: 5) == ["e1"])
        }
    }

    @Test("Releasing leases makes leased entries claimable again", arguments: StoreKind.allCases)
    func releaseLeases(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await store.enqueue(Fixtures.entry("c1", conversation: "C1"))
            try await store.enqueue(Fixtures.entry("c2", conversation: "C2"))
            let claimed = try await store.claimDueOutbox(now: instant(0), leaseUntil: instant(3600), limit: 10)
            #expect(claimed.map(\.id) == ["c1", "c2"])
            #expect(try await claim(store, at: 10).isEmpty)

            try await store.releaseOutboxLeases()
            #expect(try await claim(store, at: 10) == ["c1", "c2"])
            #expect(try await store.pendingOutboxCount() == 2)
        }
    }

    @Test("Concurrent claims never hand out the same entry twice", arguments: StoreKind.allCases)
    func concurrentClaims(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            for index in 0..<40 {
                try await store.enqueue(Fixtures.entry("e\(index)", conversation: "C\(index)", created: Double(index)))
            }
            let claimed = try await withThrowingTaskGroup(of: [String].self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await store.claimDueOutbox(now: instant(100), leaseUntil: instant(160), limit: 7)
                            .map(\.id)
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(claimed.count == 40)
            #expect(Set(claimed) == Set((0..<40).map { "e\($0)" }))
        }
    }

    // MARK: Handed over at a run's end

    @Test(
        "A run's reply is leased to the caller only when its conversation has nothing pending, and no claim takes it again",
        arguments: StoreKind.allCases)
    func aRunsReplyIsHandedOverOnlyWhenItIsItsConversationsHead(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let route = ReplyRoute(platform: "slack", conversation: "slack:T1:C1", address: "a")
            func item(_ text: String) async throws -> Int64 {
                let event = Event(platform: "slack", team: "T1", channel: "C1", user: "U1", text: text)
                return try #require(try await store.admit(event, route: route, dedupeKey: nil, expiresAt: instant(60), now: instant()))
            }
            // Idle conversation: handed over, leased until 100.
            let first = Fixtures.entry("first")
            #expect(try await store.finishRun(id: try await item("/fix a"), replies: [first], leaseUntil: instant(100)) == [first])
            #expect(try await claim(store, at: 10).isEmpty, "the handed reply is leased")
            // Behind a pending entry, and beside it in another conversation.
            let behind = Fixtures.entry("behind")
            let elsewhere = Fixtures.entry("elsewhere", conversation: "slack:T1:C2")
            let handed = try await store.finishRun(id: try await item("/fix b"), replies: [behind, elsewhere], leaseUntil: instant(100))
            #expect(handed == [elsewhere])
            #expect(try await store.inboxQueue().isEmpty)
            // Nothing is claimable until the head is done; then its follower is.
            #expect(try await claim(store, at: 20).isEmpty)
            try await store.markSent(id: "first", platformRef: nil, at: instant(20))
            #expect(try await claim(store, at: 21) == ["behind"])
            try await store.markSent(id: "behind", platformRef: nil, at: instant(21))
            // Without a lease time nothing is handed over.
            let later = Fixtures.entry("later", conversation: "slack:T1:C3")
            #expect(try await store.finishRun(id: try await item("/fix c"), replies: [later], leaseUntil: nil).isEmpty)
            #expect(try await claim(store, at: 22) == ["later"])
            try await store.markSent(id: "later", platformRef: nil, at: instant(22))
            // A lease that ended (the process is gone) lets a claim take the reply again.
            #expect(try await claim(store, at: 101) == ["elsewhere"])
        }
    }

    // MARK: Outcomes

    @Test("A sent entry keeps the platform's message id, and is not claimed again", arguments: StoreKind.allCases)
    func markSentKeepsPlatformRef(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await store.enqueue(Fixtures.entry("with-ref", conversation: "C1"))
            try await store.enqueue(Fixtures.entry("without-ref", conversation: "C2"))
            #expect(try await claim(store, at: 0) == ["with-ref", "without-ref"])
            try await store.markSent(id: "with-ref", platformRef: "1750000000.000200", at: instant(1))
            try await store.markSent(id: "without-ref", platformRef: nil, at: instant(1))

            let withRef = try #require(try await store.outboxEntry(id: "with-ref"))
            #expect(withRef.state == .sent)
            #expect(withRef.platformRef == "1750000000.000200")
            let withoutRef = try #require(try await store.outboxEntry(id: "without-ref"))
            #expect(withoutRef.state == .sent)
            #expect(withoutRef.platformRef == nil)
            #expect(try await claim(store, at: 1000).isEmpty)
        }
    }

    @Test(
        "A delivered part is counted, keeps the first part's message id, starts the attempts over and leaves the entry due",
        arguments: StoreKind.allCases)
    func markPartDelivered(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await store.enqueue(Fixtures.entry("parts"))
            #expect(try await claim(store, at: 0) == ["parts"])
            try await store.reschedule(id: "parts", attempts: 2, nextAttemptAt: instant(0), lastError: "HTTP 500")
            #expect(try await claim(store, at: 1) == ["parts"])
            try await store.markPartDelivered(id: "parts", parts: 1, platformRef: "1750000000.000100", nextAttemptAt: instant(2))
            var stored = try #require(try await store.outboxEntry(id: "parts"))
            #expect(stored.state == .pending)
            #expect(stored.partsDelivered == 1)
            #expect(stored.attempts == 0)
            #expect(stored.platformRef == "1750000000.000100")
            // Not before it is due, then claimable again for the next part.
            #expect(try await claim(store, at: 1).isEmpty)
            #expect(try await claim(store, at: 2) == ["parts"])
            try await store.markPartDelivered(id: "parts", parts: 2, platformRef: "1750000000.000200", nextAttemptAt: instant(2))
            #expect(try await claim(store, at: 3) == ["parts"])
            try await store.markSent(id: "parts", platformRef: nil, at: instant(3))
            stored = try #require(try await store.outboxEntry(id: "parts"))
            #expect(stored.state == .sent)
            #expect(stored.partsDelivered == 2)
            #expect(stored.platformRef == "1750000000.000100")
        }
    }

    @Test("A failed entry keeps its attempts and reason, and is not claimed again", arguments: StoreKind.allCases)
    func markFailedKeepsReason(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await store.enqueue(Fixtures.entry("e1"))
            #expect(try await claim(store, at: 0) == ["e1"])
            try await store.markFailed(id: "e1", attempts: 6, lastError: "gave up after 6 attempts: HTTP 503")
            let failed = try #require(try await store.outboxEntry(id: "e1"))
            #expect(failed.state == .failed)
            #expect(failed.attempts == 6)
            #expect(failed.lastError == "gave up after 6 attempts: HTTP 503")
            #expect(try await claim(store, at: 1000).isEmpty)
        }
    }

    @Test("Updating an id that is not in the outbox fails, naming the id", arguments: StoreKind.allCases)
    func unknownId(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let sent = try await #require(throws: StoreError.self) {
                try await store.markSent(id: "ghost", platformRef: nil, at: instant())
            }
            #expect(sent.description.contains("ghost"))
            await #expect(throws: StoreError.self) {
                try await store.reschedule(id: "ghost", attempts: 1, nextAttemptAt: instant(), lastError: "x")
            }
            await #expect(throws: StoreError.self) {
                try await store.markFailed(id: "ghost", attempts: 1, lastError: "x")
            }
        }
    }

    @Test("A negative attempt count is refused, and the entry is left as it was", arguments: StoreKind.allCases)
    func negativeAttempts(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            var negative = Fixtures.entry("e0", conversation: "C0")
            negative.attempts = -1
            let refused = try await #require(throws: StoreError.self) { try await store.enqueue(negative) }
            #expect(refused.description.contains("e0"))
            #expect(try await store.outboxEntry(id: "e0") == nil)

            let entry = Fixtures.entry("e1")
            try await store.enqueue(entry)
            await #expect(throws: StoreError.self) {
                try await store.reschedule(id: "e1", attempts: -1, nextAttemptAt: instant(5), lastError: "x")
            }
            await #expect(throws: StoreError.self) {
                try await store.markFailed(id: "e1", attempts: -1, lastError: "x")
            }
            #expect(try await store.outboxEntry(id: "e1") == entry)
        }
    }

    @Test("The pending count includes leased entries and drops as entries finish", arguments: StoreKind.allCases)
    func pendingCount(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            #expect(try await store.pendingOutboxCount() == 0)
            for (index, conversation) in ["C1", "C2", "C3"].enumerated() {
                try await store.enqueue(Fixtures.entry("e\(index)", conversation: conversation))
            }
            #expect(try await store.pendingOutboxCount() == 3)
            #expect(try await claim(store, at: 0, limit: 2) == ["e0", "e1"])
            #expect(try await store.pendingOutboxCount() == 3)
            try await store.markSent(id: "e0", platformRef: nil, at: instant(1))
            #expect(try await store.pendingOutboxCount() == 2)
            try await store.reschedule(id: "e1", attempts: 1, nextAttemptAt: instant(60), lastError: "HTTP 429")
            #expect(try await store.pendingOutboxCount() == 2)
            try await store.markFailed(id: "e1", attempts: 2, lastError: "HTTP 404")
            #expect(try await store.pendingOutboxCount() == 1)
        }
    }

    @Test(
        "Purging deletes old sent and failed entries and keeps pending ones, however old",
        arguments: StoreKind.allCases)
    func purgeKeepsPending(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let created: [(id: String, at: TimeInterval)] = [
                ("old-sent", 0), ("old-failed", 0), ("old-pending", 0), ("old-leased", 0), ("new-sent", 100),
                ("edge-sent", 50),
            ]
            for (id, at) in created {
                try await store.enqueue(Fixtures.entry(id, conversation: id, created: at))
            }
            #expect(try await claim(store, at: 200).count == created.count)
            try await store.markSent(id: "old-sent", platformRef: nil, at: instant(201))
            try await store.markFailed(id: "old-failed", attempts: 3, lastError: "HTTP 404")
            try await store.reschedule(id: "old-pending", attempts: 1, nextAttemptAt: instant(300), lastError: "x")
            try await store.markSent(id: "new-sent", platformRef: nil, at: instant(201))
            try await store.markSent(id: "edge-sent", platformRef: nil, at: instant(201))

            try await store.purgeOutbox(before: instant(50))
            #expect(try await store.outboxEntry(id: "old-sent") == nil)
            #expect(try await store.outboxEntry(id: "old-failed") == nil)
            #expect(try await store.outboxEntry(id: "old-pending")?.state == .pending)
            #expect(try await store.outboxEntry(id: "old-leased")?.state == .pending)
            // "Before" is strict: one created at the cut-off stays.
            #expect(try await store.outboxEntry(id: "edge-sent")?.state == .sent)
            #expect(try await store.outboxEntry(id: "new-sent")?.state == .sent)
            #expect(try await store.pendingOutboxCount() == 2)
        }
    }

    @Test("The limit is honoured, and entries left out are not leased", arguments: StoreKind.allCases)
    func limit(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            for index in 0..<5 {
                try await store.enqueue(Fixtures.entry("e\(index)", conversation: "C\(index)", created: Double(index)))
            }
            #expect(try await claim(store, at: 10, limit: 0).isEmpty)
            #expect(try await claim(store, at: 10, limit: -1).isEmpty)
            #expect(try await claim(store, at: 10, limit: 2) == ["e0", "e1"])
            #expect(try await claim(store, at: 11, limit: 1) == ["e2"])
            #expect(try await claim(store, at: 12, limit: 10) == ["e3", "e4"])
        }
    }
}
