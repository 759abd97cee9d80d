import Foundation
import RelayCore
import RelayPipeline
import RelayStore
import Testing

@Suite("Group commit and the inbox, in SQLite")
struct GroupCommitTests {
    let route = ReplyRoute(platform: "test", conversation: "t:c", address: "addr")

    func event(_ index: Int, team: String = "T1") -> Event {
        Event(platform: "test", team: team, channel: "C1", user: "U\(index)", text: "/fix number \(index)", eventKey: "Ev\(index)")
    }

    @Test("Events admitted together share commits, and every one is stored once")
    func concurrentAdmissionsShareCommits() async throws {
        try await withTemporaryStore { store in
            let before = store.commitStatistics
            let now = Date()
            let ids = try await withThrowingTaskGroup(of: Int64?.self) { group in
                for index in 0..<200 {
                    group.addTask { try await store.admit(event(index), route: route, dedupeKey: "test:Ev\(index)", expiresAt: now + 60, now: now) }
                }
                return try await group.reduce(into: [Int64?]()) { $0.append($1) }
            }
            let stats = store.commitStatistics
            #expect(ids.compactMap { $0 }.count == 200)
            #expect(try await store.inboxQueue().count == 200)
            #expect(stats.operations - before.operations == 200)
            #expect(stats.transactions - before.transactions < 200, "some admissions shared a commit")
            #expect(stats.largestBatch > 1)
        }
    }

    @Test("An operation that fails in a shared batch is rolled back alone")
    func aFailedOperationDoesNotSinkItsBatch() async throws {
        try await withTemporaryStore { store in
            let first = OutboxFixtures.entry("one")
            try await store.enqueue(first)
            // The same id again fails; the others, running beside it, are committed.
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await #expect(throws: StoreError.self) { try await store.enqueue(first) } }
                for index in 0..<20 { group.addTask { try await store.enqueue(OutboxFixtures.entry("reply \(index)")) } }
                try await group.waitForAll()
            }
            #expect(try await store.pendingOutboxCount() == 21)
        }
    }

    @Test("An operation that fails half-way in a shared batch leaves nothing of itself, and the others commit")
    func aHalfDoneOperationIsUndoneInItsBatch() async throws {
        try await withTemporaryStore { store in
            let now = Date()
            let taken = OutboxFixtures.entry("taken")
            try await store.enqueue(taken)
            let ids = try await withThrowingTaskGroup(of: Int64?.self) { group in
                for index in 0..<20 {
                    group.addTask { try await store.admit(event(index), route: route, dedupeKey: nil, expiresAt: now, now: now) }
                }
                return try await group.reduce(into: [Int64]()) { $0 += $1.map { [$0] } ?? [] }
            }
            let before = store.commitStatistics
            // Its first reply is written before its second is refused (the id is taken).
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    await #expect(throws: StoreError.self) {
                        try await store.finishRun(id: ids[0], replies: [OutboxFixtures.entry("half"), taken])
                    }
                }
                for (index, id) in ids.dropFirst().enumerated() {
                    group.addTask { try await store.finishRun(id: id, replies: [OutboxFixtures.entry("answer \(index)")]) }
                }
                try await group.waitForAll()
            }
            #expect(store.commitStatistics.largestBatch > 1, "the runs shared commits")
            #expect(store.commitStatistics.transactions > before.transactions)
            #expect(try await store.outboxEntry(id: "half") == nil)
            #expect(try await store.inboxQueue().map(\.id) == [ids[0]])
            #expect(try await store.pendingOutboxCount() == 20)
        }
    }

    @Test("A run's reply and the removal of its inbox item are one change")
    func finishingARunIsAtomic() async throws {
        try await withTemporaryStore { store in
            let now = Date()
            let id = try #require(try await store.admit(event(1), route: route, dedupeKey: nil, expiresAt: now, now: now))
            let taken = OutboxFixtures.entry("taken")
            try await store.enqueue(taken)
            // A reply whose id is taken is refused: the item stays, and no reply of this run is in.
            await #expect(throws: StoreError.self) { try await store.finishRun(id: id, replies: [OutboxFixtures.entry("new"), taken]) }
            #expect(try await store.inboxQueue().map(\.id) == [id])
            #expect(try await store.pendingOutboxCount() == 1)
            try await store.finishRun(id: id, replies: [OutboxFixtures.entry("answer")])
            #expect(try await store.inboxQueue().isEmpty)
            #expect(try await store.pendingOutboxCount() == 2)
        }
    }

    @Test("A retried event is admitted once, and its text is kept without its key")
    func dedupeAtAdmission() async throws {
        try await withTemporaryStore { store in
            let now = Date()
            let first = try await store.admit(event(7), route: route, dedupeKey: "test:Ev7", expiresAt: now + 60, now: now)
            let again = try await store.admit(event(7), route: route, dedupeKey: "test:Ev7", expiresAt: now + 60, now: now + 1)
            let expired = try await store.admit(event(7), route: route, dedupeKey: "test:Ev7", expiresAt: now + 200, now: now + 61)
            #expect(first != nil)
            #expect(again == nil)
            #expect(expired != nil, "a claim that expired can be made again")
            let firstID = try #require(first)
            let item = try #require(try await store.claimInbox(now: now + 61, leaseUntil: now + 70, limit: 10).first { $0.id == firstID })
            #expect(item.event.text == "/fix number 7")
            #expect(item.event.eventKey == nil)
            #expect(item.route == route)
        }
    }
}
