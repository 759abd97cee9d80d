import Foundation
import RelayCore
import RelayPipeline
import RelayStore
import RelayTestSupport
import RelayTestTags
import Testing

/// The inbox under leases: what waits, who takes it, and the fence on a run's end.
@Suite("Inbox claims and leases, in every store", .tags(.peers))
struct InboxClaimTests {
    let route = ReplyRoute(platform: "test", conversation: "test:C1", address: "C1")

    func event(_ text: String, team: String = "T1") -> Event {
        Event(platform: "test", team: team, channel: "C1", user: "U1", text: text)
    }

    func reply(_ id: String) -> OutboxEntry {
        OutboxFixtures.entry(id)
    }

    @Test("An item admitted leased waits for its lease to lapse; an unleased one is claimed at once", arguments: StoreKind.allCases)
    func leasedItemsWait(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let leased = try #require(
                try await store.admit(event("/fix a"), route: route, dedupeKey: nil, expiresAt: instant(600), now: instant(0), leaseUntil: instant(10)))
            let waiting = try #require(try await store.admit(event("/fix b"), route: route, dedupeKey: nil, expiresAt: instant(600), now: instant(0)))
            #expect(try await store.waitingInboxCount(now: instant(1)) == 1)
            #expect(try await store.claimInbox(now: instant(1), leaseUntil: instant(11), limit: 10).map(\.id) == [waiting])
            #expect(try await store.claimInbox(now: instant(2), leaseUntil: instant(12), limit: 10).isEmpty, "both are leased now")
            // The first lease lapses (its process died): the item is claimed again.
            let retaken = try await store.claimInbox(now: instant(10.5), leaseUntil: instant(20), limit: 10)
            #expect(retaken.map(\.id) == [leased])
            #expect(retaken.first?.event.text == "/fix a")
            #expect(try await store.waitingInboxCount(now: instant(10.5)) == 0)
        }
    }

    @Test("Renewing a lease keeps the item from claims; releasing gives it back", arguments: StoreKind.allCases)
    func renewAndRelease(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let id = try #require(
                try await store.admit(event("/fix a"), route: route, dedupeKey: nil, expiresAt: instant(600), now: instant(0), leaseUntil: instant(10)))
            try await store.renewLeases(inbox: [id], outbox: [], until: instant(30))
            #expect(try await store.claimInbox(now: instant(20), leaseUntil: instant(40), limit: 10).isEmpty)
            try await store.releaseInboxLeases()
            #expect(try await store.claimInbox(now: instant(20), leaseUntil: instant(40), limit: 10).map(\.id) == [id])
        }
    }

    @Test("Teams take turns: one team's flood waits behind another team's single command", arguments: StoreKind.allCases)
    func teamsTakeTurns(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            for index in 0..<5 {
                _ = try await store.admit(event("/fix flood \(index)", team: "A"), route: route, dedupeKey: nil, expiresAt: instant(600), now: instant(0))
            }
            _ = try await store.admit(event("/fix mine", team: "B"), route: route, dedupeKey: nil, expiresAt: instant(600), now: instant(0))
            var order: [String] = []
            // One at a time, as a dispatcher with one free slot claims.
            while let item = try await store.claimInbox(now: instant(1), leaseUntil: instant(100), limit: 1).first {
                order.append(item.event.text)
                try await store.finishRun(id: item.id, replies: [])
            }
            #expect(order.count == 6)
            #expect(try #require(order.firstIndex(of: "/fix mine")) <= 1, "B waited for at most one of A's: \(order)")
        }
    }

    @Test("A run's end for an item that is gone writes nothing and says the lease was lost", arguments: StoreKind.allCases)
    func fencedEnd(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let id = try #require(
                try await store.admit(event("/fix a"), route: route, dedupeKey: nil, expiresAt: instant(600), now: instant(0), leaseUntil: instant(10)))
            try await store.finishRun(id: id, replies: [reply("first")])
            await #expect(throws: StoreError.leaseLost(id: id)) {
                try await store.finishRun(id: id, replies: [reply("second")])
            }
            #expect(try await store.outboxEntry(id: "second") == nil)
            #expect(try await store.pendingOutboxCount() == 1)
        }
    }

    @Test("Two replicas: a run taken over after its lease lapsed is answered once, by the replica that took it")
    func takenOverRunAnswersOnce() async throws {
        try await withTwoReplicas { first, second in
            let id = try #require(
                try await first.admit(event("/fix a"), route: route, dedupeKey: nil, expiresAt: instant(600), now: instant(0), leaseUntil: instant(10)))
            // The first replica stalls past its lease; the second takes the item over.
            #expect(try await second.claimInbox(now: instant(11), leaseUntil: instant(21), limit: 10).map(\.id) == [id])
            // The first replica's renewal no longer reaches an item that is not its own.
            try await first.renewLeases(inbox: [id], outbox: [], until: instant(40))
            await #expect(throws: StoreError.leaseLost(id: id)) {
                try await first.finishRun(id: id, replies: [reply("from-first")])
            }
            try await second.finishRun(id: id, replies: [reply("from-second")])
            #expect(try await second.outboxEntry(id: "from-first") == nil)
            #expect(try await second.outboxEntry(id: "from-second") != nil)
            #expect(try await first.inboxQueue().isEmpty)
        }
    }

    @Test("Two replicas claiming at once never take the same item, and take them all")
    func concurrentClaimsAcrossReplicas() async throws {
        try await withTwoReplicas { first, second in
            var admitted: Set<Int64> = []
            for index in 0..<60 {
                admitted.insert(
                    try #require(
                        try await first.admit(
                            event("/fix \(index)", team: "T\(index % 4)"), route: route, dedupeKey: nil, expiresAt: instant(600), now: instant(0))))
            }
            let claims = try await withThrowingTaskGroup(of: [Int64].self) { group in
                for store in [first, second, first, second, first, second] {
                    group.addTask {
                        var ids: [Int64] = []
                        while case let batch = try await store.claimInbox(now: instant(1), leaseUntil: instant(100), limit: 3), !batch.isEmpty {
                            ids += batch.map(\.id)
                        }
                        return ids
                    }
                }
                var all: [Int64] = []
                for try await ids in group { all += ids }
                return all
            }
            #expect(claims.count == 60)
            #expect(Set(claims) == admitted)
        }
    }

    @Test("A retried event reaching another replica is admitted once")
    func dedupeAcrossReplicas() async throws {
        try await withTwoReplicas { first, second in
            async let one = first.admit(event("/fix a"), route: route, dedupeKey: "slack:Ev1", expiresAt: instant(600), now: instant(0))
            async let two = second.admit(event("/fix a"), route: route, dedupeKey: "slack:Ev1", expiresAt: instant(600), now: instant(0))
            let ids = [try await one, try await two].compactMap { $0 }
            #expect(ids.count == 1)
            #expect(try await first.inboxQueue().count == 1)
        }
    }

    /// Two stores on one PostgreSQL database: two replicas.
    func withTwoReplicas(_ body: (PostgresStore, PostgresStore) async throws -> Void) async throws {
        try await PostgresTestServer.shared().withDatabase { database in
            let first = try await openTestStore(database.url)
            let second = try await openTestStore(database.url)
            do {
                try await body(first, second)
            } catch {
                try? await first.close()
                try? await second.close()
                throw error
            }
            try await first.close()
            try await second.close()
        }
    }
}
