import Foundation
import RelayCore
import RelayPipeline
import RelayTestTags
import Testing

/// Issue 23: what a run keeps (history, fact-checks) is written with its reply and the end of its
/// inbox item, in one transaction, and the reply gets the number of the fact-check it names.
@Suite("Store: a run's record, written with its end", .tags(.peers))
struct RunRecordStoreTests {
    typealias Fixtures = OutboxFixtures

    static let route = ReplyRoute(platform: "slack", conversation: "slack:T1:C1", address: "a")

    static func admitted(_ store: any Store) async throws -> Int64 {
        let event = Event(platform: "slack", team: "T1", channel: "C1", user: "alice", text: "/tribunal the Moon is cheese")
        return try #require(try await store.admit(event, route: route, dedupeKey: nil, expiresAt: instant(60), now: instant()))
    }

    static func history(_ elapsed: Double = 1.5) -> HistoryEntry {
        HistoryEntry(
            team: "T1", user: "alice", channel: "C1", command: "tribunal", commandLine: "/tribunal the Moon is cheese",
            resultText: "No.", succeeded: true, elapsed: elapsed, createdAt: instant())
    }

    /// A tribunal's reply, whose footer names its fact-check once it has a number.
    static let tribunalReply = Fixtures.entry("reply", content: .reply(Fixtures.fullReply))

    @Test("The history row, the fact-checks and the numbered reply are written together", arguments: StoreKind.allCases)
    func everythingTogether(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            // An earlier fact-check, so the run's are not numbered 1 by chance.
            let earlier = try await store.recordConsensus(LedgerStoreTests.entry("earlier", at: 0))
            let id = try await Self.admitted(store)
            let record = RunRecord(
                history: Self.history(),
                ledger: [LedgerStoreTests.entry("verified first", at: 1), LedgerStoreTests.entry("the Moon is cheese", at: 2)],
                numberedByReply: 1)
            try await store.finishRun(id: id, record: record, replies: [Self.tribunalReply], leaseUntil: nil)

            #expect(try await store.inboxQueue().isEmpty)
            #expect(try await store.history(team: "T1", user: "alice", limit: 10).map(\.command) == ["tribunal"])
            let named = try #require(try await store.ledgerEntry(team: "T1", id: earlier + 2))
            #expect(named.claim == "the Moon is cheese")
            let stored = try #require(try await store.outboxEntry(id: "reply"))
            guard case .reply(let reply) = stored.content else {
                Issue.record("the reply was stored as \(stored.content)")
                return
            }
            #expect(reply.footer?.ledgerID == earlier + 2)
        }
    }

    @Test("A record that cannot be written keeps the item and writes no reply", arguments: StoreKind.allCases)
    func nothingWithoutTheRecord(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let id = try await Self.admitted(store)
            // A NaN elapsed time is refused (NOT NULL), like any row the store cannot take.
            let record = RunRecord(history: Self.history(.nan), ledger: [LedgerStoreTests.entry("the Moon is cheese", at: 2)], numberedByReply: 0)
            await #expect(throws: (any Error).self) {
                try await store.finishRun(id: id, record: record, replies: [Self.tribunalReply], leaseUntil: nil)
            }
            #expect(try await store.inboxQueue().map(\.id) == [id], "the run runs again")
            #expect(try await store.outboxEntry(id: "reply") == nil)
            #expect(try await store.searchLedger(team: "T1", words: [], limit: 10).isEmpty)
        }
    }

    @Test("A run outside the inbox keeps its record in one write, and learns its fact-checks' numbers", arguments: StoreKind.allCases)
    func recordAlone(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let ids = try await store.record(RunRecord(history: Self.history(), ledger: [LedgerStoreTests.entry("the Moon is cheese", at: 2)]))
            #expect(ids.count == 1)
            #expect(try await store.ledgerEntry(team: "T1", id: ids[0])?.claim == "the Moon is cheese")
            #expect(try await store.history(team: "T1", user: "alice", limit: 10).count == 1)
        }
    }

    /// Issue 44, point 3: the run's model calls, in its finishing write (no extra write).
    static func usage(at seconds: Double = 0) -> RunUsage {
        RunUsage(
            platform: "slack", team: "T1", user: "alice", command: "tribunal", run: "run-1", at: instant(seconds),
            calls: [
                ModelUsage(model: "mini", tokensIn: 412, tokensOut: 90, estimated: false, cost: 0.000116, elapsed: .milliseconds(820)),
                ModelUsage(model: "local", tokensIn: 400, tokensOut: 85, estimated: true, elapsed: .milliseconds(1_500)),
            ])
    }

    @Test("A run's model calls are written with its end, and read back by team, user and month", arguments: StoreKind.allCases)
    func modelCallsWithTheEnd(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let id = try await Self.admitted(store)
            try await store.finishRun(id: id, record: RunRecord(usage: Self.usage(at: 10)), replies: [Self.tribunalReply], leaseUntil: nil)
            let bobs = RunUsage(
                platform: "discord", team: "T1", user: "bob", command: "fix", run: "run-2", at: instant(20),
                calls: [ModelUsage(model: "mini", tokensIn: 30, tokensOut: 8, estimated: false, cost: 0.00001, elapsed: .milliseconds(200))])
            _ = try await store.record(RunRecord(usage: bobs))
            let all = try await store.modelCalls(UsageQuery(platform: nil, team: "T1", from: instant(0), to: instant(60)))
            #expect(all == Self.usage(at: 10).records + bobs.records)
            #expect(all.first?.elapsedMilliseconds == 820 && all[1].cost == nil && all[1].estimated)
            #expect(try await store.modelCalls(UsageQuery(platform: "slack", team: "T1", from: instant(0), to: instant(60))).count == 2)
            #expect(try await store.modelCalls(UsageQuery(platform: "slack", team: "T1", user: "bob", from: instant(0), to: instant(60))).isEmpty)
            #expect(try await store.modelCalls(UsageQuery(platform: nil, team: "T1", from: instant(11), to: instant(60))).map(\.user) == ["bob"])
            #expect(try await store.modelCalls(UsageQuery(platform: nil, team: "T2", from: instant(0), to: instant(60))).isEmpty)
        }
    }

    @Test("A run fenced off by another replica writes none of its model calls", arguments: StoreKind.allCases)
    func noCallsWhenFenced(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let id = try await Self.admitted(store)
            #expect(try await store.dropInboxItem(id: id))
            await #expect(throws: StoreError.leaseLost(id: id)) {
                try await store.finishRun(id: id, record: RunRecord(usage: Self.usage()), replies: [], leaseUntil: nil)
            }
            #expect(try await store.modelCalls(UsageQuery(platform: nil, team: "T1", from: .distantPast, to: .distantFuture)).isEmpty)
        }
    }
}
