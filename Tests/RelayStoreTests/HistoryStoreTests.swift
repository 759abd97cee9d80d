import Foundation
import RelayCore
import RelayPipeline
import RelayStore
import RelayTestTags
import Testing

@Suite("Run history, in every store", .tags(.peers))
struct HistoryStoreTests {
    static func entry(
        _ command: String, at offset: Double, team: String = "T1", user: String = "alice", channel: String = "general"
    ) -> HistoryEntry {
        HistoryEntry(
            team: team, user: user, channel: channel, command: command, commandLine: "/\(command) hello",
            resultText: "result of \(command)", succeeded: true, elapsed: 1.5, createdAt: instant(offset))
    }

    @Test("Newest first, limited, only the user's runs in that team", arguments: StoreKind.allCases)
    func orderingAndLimit(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            // Recorded out of order on purpose.
            for (command, offset) in [("fix", 20.0), ("translate", 10), ("explain", 30), ("ai", 5)] {
                try await store.recordRun(Self.entry(command, at: offset))
            }
            try await store.recordRun(Self.entry("tribunal", at: 40, user: "bob"))
            try await store.recordRun(Self.entry("summarize", at: 50, team: "T2"))

            #expect(
                try await store.history(team: "T1", user: "alice", limit: 10).map(\.command)
                    == ["explain", "fix", "translate", "ai"])
            #expect(try await store.history(team: "T1", user: "alice", limit: 2).map(\.command) == ["explain", "fix"])
            #expect(try await store.history(team: "T1", user: "alice", limit: 0).isEmpty)
            #expect(try await store.history(team: "T1", user: "bob", limit: 10).map(\.command) == ["tribunal"])
            #expect(try await store.history(team: "T2", user: "bob", limit: 10).isEmpty)
        }
    }

    @Test("Runs are counted by UTC day, command and success, in one team and window", arguments: StoreKind.allCases)
    func countedByDay(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let day = 86_400.0
            let start = instant(0)
            let midnight = RunCount.day(of: start).addingTimeInterval(day)
            func run(_ command: String, at date: Date, succeeded: Bool = true, team: String = "T1") -> HistoryEntry {
                var entry = Self.entry(command, at: 0, team: team)
                entry.createdAt = date
                entry.succeeded = succeeded
                return entry
            }
            try await store.recordRun(run("fix", at: midnight.addingTimeInterval(-1)))
            try await store.recordRun(run("fix", at: midnight))
            var failed = run("fix", at: midnight.addingTimeInterval(10), succeeded: false)
            failed.failure = "timed_out"
            try await store.recordRun(failed)
            try await store.recordRun(run("fix", at: midnight.addingTimeInterval(20)))
            try await store.recordRun(run("translate", at: midnight.addingTimeInterval(30)))
            try await store.recordRun(run("fix", at: midnight.addingTimeInterval(40), team: "T2"))
            try await store.recordRun(run("fix", at: midnight.addingTimeInterval(day)))
            let counts = try await store.runCounts(team: "T1", from: midnight.addingTimeInterval(-1), to: midnight.addingTimeInterval(day))
            #expect(
                Set(counts) == [
                    RunCount(day: midnight.addingTimeInterval(-day), command: "fix", succeeded: true, count: 1),
                    RunCount(day: midnight, command: "fix", succeeded: true, count: 2),
                    RunCount(day: midnight, command: "fix", succeeded: false, failure: "timed_out", count: 1),
                    RunCount(day: midnight, command: "translate", succeeded: true, count: 1),
                ])
        }
    }

    @Test("The connections report: each platform's newest reply and error, what waits, the leases", arguments: StoreKind.allCases)
    func connectionsReport(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            var discord = OutboxFixtures.entry("d1", created: 5)
            discord.platform = "discord"
            try await store.enqueue(OutboxFixtures.entry("s1", created: 1))
            try await store.enqueue(OutboxFixtures.entry("s2", created: 2))
            try await store.enqueue(OutboxFixtures.entry("s3", created: 3))
            try await store.enqueue(discord)
            try await store.reschedule(id: "s1", attempts: 1, nextAttemptAt: instant(9), lastError: "HTTP 503")
            try await store.markFailed(id: "s2", attempts: 3, lastError: "channel_not_found")
            try await store.markSent(id: "s3", platformRef: "m3", at: instant(4))
            _ = try await store.acquireLease("slack.delivery", holder: "host/1/a", until: instant(60), now: instant())
            let report = try await store.connectionsReport()
            #expect(
                report.activity == [
                    ConnectionsReport.Activity(platform: "discord", lastQueued: instant(5), lastError: nil, lastErrorQueued: nil, pending: 1),
                    ConnectionsReport.Activity(
                        platform: "slack", lastQueued: instant(3), lastError: "channel_not_found", lastErrorQueued: instant(2), pending: 1),
                ])
            #expect(report.leases == [ConnectionsReport.Lease(name: "slack.delivery", holder: "host/1/a", expiresAt: instant(60))])
        }
    }

    @Test("Clearing deletes one user's runs in one team, and says how many", arguments: StoreKind.allCases)
    func clear(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            for offset in [1.0, 2, 3] { try await store.recordRun(Self.entry("fix", at: offset)) }
            try await store.recordRun(Self.entry("fix", at: 4, user: "bob"))
            try await store.recordRun(Self.entry("fix", at: 5, team: "T2"))
            #expect(try await store.clearHistory(team: "T1", user: "alice") == 3)
            #expect(try await store.history(team: "T1", user: "alice", limit: 10).isEmpty)
            #expect(try await store.history(team: "T1", user: "bob", limit: 10).count == 1)
            #expect(try await store.history(team: "T2", user: "alice", limit: 10).count == 1)
            #expect(try await store.clearHistory(team: "T1", user: "alice") == 0)
        }
    }

    @Test("Purging deletes old runs and applies retention set since they were recorded", arguments: StoreKind.allCases)
    func purge(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await store.recordRun(Self.entry("old", at: 1))
            try await store.recordRun(Self.entry("kept", at: 100))
            try await store.recordRun(Self.entry("quiet-user", at: 100, user: "carol"))
            try await store.recordRun(Self.entry("quiet-channel", at: 100, user: "dave", channel: "secret"))
            try await store.recordRun(Self.entry("terse", at: 100, user: "erin"))
            try await store.recordRun(Self.entry("other-team", at: 100, team: "T2", user: "carol"))
            try await store.saveSettings(Settings(retention: .off), for: .user(team: "T1", user: "carol"))
            try await store.saveSettings(Settings(retention: .off), for: .channel(team: "T1", channel: "secret"))
            try await store.saveSettings(Settings(retention: .metadata), for: .user(team: "T1", user: "erin"))

            #expect(try await store.purgeHistory(before: instant(50), defaultRetention: .full) == 3)
            #expect(try await store.history(team: "T1", user: "alice", limit: 10).map(\.command) == ["kept"])
            #expect(try await store.history(team: "T1", user: "carol", limit: 10).isEmpty)
            #expect(try await store.history(team: "T1", user: "dave", limit: 10).isEmpty)
            let terse = try await store.history(team: "T1", user: "erin", limit: 10)
            #expect(terse.map(\.command) == ["terse"])
            #expect(terse.first?.commandLine == nil && terse.first?.resultText == nil)
            // Settings are per team: carol's `off` in T1 does not reach T2.
            #expect(try await store.history(team: "T2", user: "carol", limit: 10).first?.resultText == "result of other-team")
            #expect(try await store.history(team: "T1", user: "alice", limit: 10).first?.resultText == "result of kept")

            // A default of `off` keeps nothing.
            #expect(try await store.purgeHistory(before: instant(0), defaultRetention: .off) == 3)
            #expect(try await store.history(team: "T2", user: "carol", limit: 10).isEmpty)
        }
    }

    @Test("Runs recorded at the same time come back latest-recorded first", arguments: StoreKind.allCases)
    func sameTime(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await store.recordRun(Self.entry("first", at: 0))
            try await store.recordRun(Self.entry("second", at: 0))
            #expect(try await store.history(team: "T1", user: "alice", limit: 5).map(\.command) == ["second", "first"])
        }
    }

    @Test("Every field round-trips; nil texts and scores stay nil", arguments: StoreKind.allCases)
    func roundTrip(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let consensus = HistoryEntry(
                team: "T1", user: "alice", channel: "C1", command: "tribunal",
                commandLine: "/tribunal The Eiffel Tower is in Berlin", resultText: "False: it is in Paris.",
                succeeded: true, agreement: 0.875, modelsAnswered: 3, modelsAsked: 4, elapsed: 12.25,
                createdAt: instant(2), verdict: .false, scoreMeaning: .probabilityRight, agreeing: 2)
            let metadataOnly = HistoryEntry(
                team: "T1", user: "alice", channel: "C1", command: "run polish", commandLine: nil, resultText: nil,
                succeeded: false, elapsed: 0.5, createdAt: instant(1))
            try await store.recordRun(consensus)
            try await store.recordRun(metadataOnly)

            let stored = try await store.history(team: "T1", user: "alice", limit: 10)
            #expect(stored == [consensus, metadataOnly])
            #expect(stored.last?.commandLine == nil)
            #expect(stored.last?.resultText == nil)
            #expect(stored.last?.agreement == nil)
            #expect(stored.last?.modelsAsked == nil)
            #expect(stored.first?.scoreMeaning == .probabilityRight)
            #expect(stored.last?.verdict == nil && stored.last?.scoreMeaning == nil && stored.last?.agreeing == nil)
        }
    }

    @Test("A NaN agreement reads back as none; a NaN elapsed time is refused", arguments: StoreKind.allCases)
    func notANumber(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            var noScore = Self.entry("tribunal", at: 1)
            noScore.agreement = .nan
            try await store.recordRun(noScore)
            var noTime = Self.entry("fix", at: 2)
            noTime.elapsed = .nan
            let error = try await #require(throws: StoreError.self) {
                try await store.recordRun(noTime)
            }
            #expect(error.description.contains("elapsed"))

            let stored = try await store.history(team: "T1", user: "alice", limit: 10)
            #expect(stored.map(\.command) == ["tribunal"])
            #expect(stored.first?.agreement == nil)
        }
    }
}
