import Foundation
import RelayCore
import RelayPipeline
import RelayTestSupport
import RelayTestTags
import Testing

@testable import RelayStore

/// The days' totals the console's charts and a budget's month read (docs/console.md, "Speed"):
/// whatever writes or deletes runs and calls, they answer what counting the rows would.
@Suite("Day totals of runs and model calls, in every store", .tags(.peers))
struct DayTotalsTests {
    static let day = 86_400.0
    /// A UTC midnight: the tests' runs fall on the days around it.
    static let midnight = RunCount.day(of: instant(0)).addingTimeInterval(day)

    static func run(_ command: String, at offset: Double, user: String = "alice", team: String = "T1", failure: String? = nil) -> HistoryEntry {
        HistoryEntry(
            team: team, user: user, channel: "general", command: command, commandLine: "/\(command) a", resultText: "done",
            succeeded: failure == nil, elapsed: 1, createdAt: midnight.addingTimeInterval(offset), failure: failure)
    }

    /// A run's model calls at `offset` seconds from midnight, one per model, each costing `cost` (nil: unpriced).
    static func calls(_ models: [String], at offset: Double, cost: Double?, team: String = "T1", estimated: Bool = false) -> RunRecord {
        RunRecord(
            usage: RunUsage(
                platform: "slack", team: team, user: "alice", command: "tribunal", run: "run-\(offset)-\(models.joined())",
                at: midnight.addingTimeInterval(offset),
                calls: models.map { ModelUsage(model: $0, tokensIn: 10, tokensOut: 5, estimated: estimated, cost: cost, elapsed: .milliseconds(3)) }))
    }

    static func counts(_ store: any Store, team: String = "T1") async throws -> Set<RunCount> {
        Set(try await store.runCounts(team: team, from: midnight.addingTimeInterval(-10 * day), to: midnight.addingTimeInterval(10 * day)))
    }

    @Test("Runs counted by day follow clears, purges and retention", arguments: StoreKind.allCases)
    func runsFollowDeletes(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            for entry in [
                Self.run("fix", at: -100), Self.run("fix", at: 10), Self.run("fix", at: 20, user: "bob"),
                Self.run("fix", at: 30, failure: "timed_out"), Self.run("translate", at: Self.day + 5, user: "bob"),
                Self.run("fix", at: 40, team: "T2"),
            ] { try await store.recordRun(entry) }
            let yesterday = Self.midnight.addingTimeInterval(-Self.day)
            let today = Self.midnight
            let tomorrow = Self.midnight.addingTimeInterval(Self.day)
            #expect(
                try await Self.counts(store) == [
                    RunCount(day: yesterday, command: "fix", succeeded: true, count: 1),
                    RunCount(day: today, command: "fix", succeeded: true, count: 2),
                    RunCount(day: today, command: "fix", succeeded: false, failure: "timed_out", count: 1),
                    RunCount(day: tomorrow, command: "translate", succeeded: true, count: 1),
                ])
            // A window that starts and ends inside days counts those days whole.
            #expect(
                Set(try await store.runCounts(team: "T1", from: today.addingTimeInterval(15), to: today.addingTimeInterval(16)))
                    == [
                        RunCount(day: today, command: "fix", succeeded: true, count: 2),
                        RunCount(day: today, command: "fix", succeeded: false, failure: "timed_out", count: 1),
                    ])

            #expect(try await store.clearHistory(team: "T1", user: "bob") == 2)
            #expect(
                try await Self.counts(store) == [
                    RunCount(day: yesterday, command: "fix", succeeded: true, count: 1),
                    RunCount(day: today, command: "fix", succeeded: true, count: 1),
                    RunCount(day: today, command: "fix", succeeded: false, failure: "timed_out", count: 1),
                ])
            // Purged by age (yesterday's run), then by a retention of `off` for alice.
            #expect(try await store.purgeHistory(before: today, defaultRetention: .full) == 1)
            try await store.saveSettings(Settings(retention: .off), for: .user(team: "T1", user: "alice"))
            #expect(try await store.purgeHistory(before: today, defaultRetention: .full) == 2)
            #expect(try await Self.counts(store).isEmpty)
            #expect(try await Self.counts(store, team: "T2") == [RunCount(day: today, command: "fix", succeeded: true, count: 1)])

            // Counting starts again from nothing on a day whose total went to zero.
            try await store.recordRun(Self.run("fix", at: 50, user: "carol"))
            #expect(try await Self.counts(store) == [RunCount(day: today, command: "fix", succeeded: true, count: 1)])
        }
    }

    @Test("Cost per day by model, and a month's spend with part-days at either end", arguments: StoreKind.allCases)
    func costsByDay(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            _ = try await store.record(Self.calls(["alpha", "beta"], at: -50, cost: 0.25))
            _ = try await store.record(Self.calls(["beta", "alpha"], at: 10, cost: 0.5))
            _ = try await store.record(Self.calls(["alpha"], at: 20, cost: nil, estimated: true))
            _ = try await store.record(Self.calls(["alpha"], at: Self.day + 30, cost: 2))
            _ = try await store.record(Self.calls(["alpha"], at: 40, cost: 8, team: "T2"))
            let yesterday = Self.midnight.addingTimeInterval(-Self.day)
            let today = Self.midnight
            let tomorrow = Self.midnight.addingTimeInterval(Self.day)
            let days = try await store.modelCostDays(
                platform: "slack", team: "T1", from: yesterday.addingTimeInterval(3_600), to: tomorrow.addingTimeInterval(Self.day))
            #expect(
                Set(days) == [
                    ModelCostDay(day: yesterday, model: "alpha", calls: 1, cost: 0.25, unpriced: 0, estimated: 0),
                    ModelCostDay(day: yesterday, model: "beta", calls: 1, cost: 0.25, unpriced: 0, estimated: 0),
                    ModelCostDay(day: today, model: "alpha", calls: 2, cost: 0.5, unpriced: 1, estimated: 1),
                    ModelCostDay(day: today, model: "beta", calls: 1, cost: 0.5, unpriced: 0, estimated: 0),
                    ModelCostDay(day: tomorrow, model: "alpha", calls: 1, cost: 2, unpriced: 0, estimated: 0),
                ])
            #expect(try await store.modelCostDays(platform: "discord", team: "T1", from: yesterday, to: tomorrow).isEmpty)

            // The spend counts exactly the calls inside the window, part-days included.
            func spent(_ from: Double, _ to: Double) async throws -> Double {
                try await store.budgetStanding(
                    platform: "slack", team: "T1", from: Self.midnight.addingTimeInterval(from), to: Self.midnight.addingTimeInterval(to)
                ).spent
            }
            #expect(try await spent(-Self.day, 2 * Self.day) == 3.5)
            #expect(try await spent(-49, 2 * Self.day) == 3)
            #expect(try await spent(-60, 11) == 1.5)
            #expect(try await spent(0, Self.day) == 1)
            #expect(try await spent(15, 25) == 0)
            #expect(try await spent(15, Self.day + 31) == 2)
        }
    }

    @Test("The newest marked fact-checks of a team, newest first", arguments: StoreKind.allCases)
    func markedFactChecks(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            var ids: [Int64] = []
            for index in 0..<6 {
                ids.append(
                    try await store.recordConsensus(
                        LedgerEntry(
                            team: index == 5 ? "T2" : "T1", user: "alice", channel: "general", origin: .tribunal, claim: "claim \(index)", answer: "yes",
                            verdict: .true, score: 0.9, answered: 3, asked: 3, judges: Self.judges, backend: "council", createdAt: instant(Double(index)))))
            }
            for id in [ids[0], ids[2], ids[3], ids[5]] {
                _ = try await store.markLedger(team: id == ids[5] ? "T2" : "T1", id: id, mark: LedgerMark(verdict: .false, user: "bob", markedAt: instant(100)))
            }
            #expect(try await store.markedLedger(team: "T1", limit: 10).map(\.claim) == ["claim 3", "claim 2", "claim 0"])
            #expect(try await store.markedLedger(team: "T1", limit: 2).map(\.claim) == ["claim 3", "claim 2"])
            #expect(try await store.markedLedger(team: "T1", limit: 0).isEmpty)
            #expect(try await store.markedLedger(team: "T2", limit: 10).map(\.claim) == ["claim 5"])
            // Each judge's model, verdict, confidence and failure, in order (what the council page reads).
            let judges = try #require(try await store.markedLedger(team: "T1", limit: 1).first?.judges)
            #expect(judges.map(\.model) == Self.judges.map(\.model))
            #expect(judges.map(\.verdict) == [.true, nil, .partly])
            #expect(judges.map(\.confidence) == [0.8, nil, nil])
            #expect(judges.map(\.error) == [nil, "timed out", nil])
            // What the council learns from reads the same of them.
            let learned = try #require(try await store.recentLedger(limit: 1).first?.judges)
            #expect(learned.map(\.model) == Self.judges.map(\.model) && learned.map(\.confidence) == [0.8, nil, nil])
        }
    }

    static let judges = [
        LedgerJudge(model: "alpha", verdict: .true, confidence: 0.8, answer: "It is, \"quoted\".", latency: 1),
        LedgerJudge(model: "beta", error: "timed out"), LedgerJudge(model: "gamma/é", verdict: .partly),
    ]

    @Test("Replicas finishing runs of one team at once keep exact totals, the calls in any order")
    func replicasAtOnce() async throws {
        try await PostgresTestServer.shared().withDatabase { database in
            var replicas: [PostgresStore] = []
            for _ in 0..<3 { replicas.append(try await openTestStore(database.url)) }
            do {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<60 {
                        let replica = replicas[index % 3]
                        // Each run calls the same models in another order: their totals' rows are
                        // taken in key order whatever the run's, so no two runs wait on each other.
                        let models = index % 2 == 0 ? ["alpha", "beta", "gamma"] : ["gamma", "beta", "alpha"]
                        var record = Self.calls(models, at: Double(index), cost: 0.125)
                        record.history = Self.run("tribunal", at: Double(index), user: "U\(index)")
                        group.addTask { _ = try await replica.record(record) }
                    }
                    try await group.waitForAll()
                }
                #expect(try await Self.counts(replicas[0]) == [RunCount(day: Self.midnight, command: "tribunal", succeeded: true, count: 60)])
                let days = try await replicas[1].modelCostDays(platform: "slack", team: "T1", from: Self.midnight, to: Self.midnight.addingTimeInterval(1))
                #expect(Set(days.map(\.model)) == ["alpha", "beta", "gamma"])
                #expect(days.allSatisfy { $0.calls == 60 && $0.cost == 7.5 })
                let spent = try await replicas[2].budgetStanding(
                    platform: "slack", team: "T1", from: Self.midnight, to: Self.midnight.addingTimeInterval(Self.day)
                ).spent
                #expect(spent == 22.5)
            } catch {
                for replica in replicas { try? await replica.close() }
                throw error
            }
            for replica in replicas { try await replica.close() }
        }
    }

    @Test("A SQLite store of version 13 gets its days' totals from the rows it holds")
    func sqliteTotalsFromEarlierRows() async throws {
        try await withTemporaryFolder { folder in
            let path = folder.path("relay.sqlite")
            let old = try await SQLiteStore.open(path: path, migrations: Migration.all.filter { $0.version < 14 })
            try await Self.writeEarlierRows(old)
            try await old.close()
            let store = try await SQLiteStore.open(path: path)
            try await Self.expectEarlierRows(store)
            try await store.close()
        }
    }

    @Test("A PostgreSQL store of version 11 gets its days' totals from the rows it holds")
    func postgresTotalsFromEarlierRows() async throws {
        try await PostgresTestServer.shared().withDatabase { database in
            let old = try await openTestStore(database.url, before: 12)
            try await Self.writeEarlierRows(old)
            try await old.close()
            let store = try await openTestStore(database.url)
            try await Self.expectEarlierRows(store)
            // And they are kept from there on.
            try await store.recordRun(Self.run("fix", at: 60))
            #expect(try await Self.counts(store).contains(RunCount(day: Self.midnight, command: "fix", succeeded: true, count: 3)))
            try await store.close()
        }
    }

    static func writeEarlierRows(_ store: any Store) async throws {
        try await store.recordRun(run("fix", at: 10))
        try await store.recordRun(run("fix", at: 20))
        try await store.recordRun(run("fix", at: 30, failure: "unreachable"))
        _ = try await store.record(calls(["alpha", "beta"], at: 10, cost: 0.75))
        _ = try await store.record(calls(["alpha"], at: -10, cost: nil))
        // A fact-check, whose votes the upgrade makes from its judges (SQLite 15, PostgreSQL 13).
        let id = try await store.recordConsensus(
            LedgerEntry(
                team: "T1", user: "alice", channel: "general", origin: .tribunal, claim: "claim", answer: "yes", verdict: .true, score: 0.9,
                answered: 3, asked: 3, judges: judges, backend: "council", createdAt: instant(10)))
        _ = try await store.markLedger(team: "T1", id: id, mark: LedgerMark(verdict: .false, user: "bob", markedAt: instant(20)))
    }

    static func expectEarlierRows(_ store: any Store) async throws {
        for read in [try await store.markedLedger(team: "T1", limit: 1), try await store.recentLedger(limit: 1)] {
            let votes = try #require(read.first?.judges)
            #expect(votes.map(\.model) == judges.map(\.model) && votes.map(\.verdict) == [.true, nil, .partly])
            #expect(votes.map(\.confidence) == [0.8, nil, nil] && votes.map(\.error) == [nil, "timed out", nil])
        }
        #expect(
            try await counts(store) == [
                RunCount(day: midnight, command: "fix", succeeded: true, count: 2),
                RunCount(day: midnight, command: "fix", succeeded: false, failure: "unreachable", count: 1),
            ])
        #expect(
            Set(try await store.modelCostDays(platform: "slack", team: "T1", from: midnight.addingTimeInterval(-day), to: midnight.addingTimeInterval(day)))
                == [
                    ModelCostDay(day: midnight.addingTimeInterval(-day), model: "alpha", calls: 1, cost: 0, unpriced: 1, estimated: 0),
                    ModelCostDay(day: midnight, model: "alpha", calls: 1, cost: 0.75, unpriced: 0, estimated: 0),
                    ModelCostDay(day: midnight, model: "beta", calls: 1, cost: 0.75, unpriced: 0, estimated: 0),
                ])
        #expect(try await store.budgetStanding(platform: "slack", team: "T1", from: midnight, to: midnight.addingTimeInterval(day)).spent == 1.5)
    }
}
