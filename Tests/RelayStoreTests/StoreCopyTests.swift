import Foundation
import RelayCore
import RelayPipeline
import RelayTestSupport
import RelayTestTags
import Testing

@testable import RelayStore

/// `rhea-relay store copy` underneath: an SQLite store filled through the `Store` API, copied,
/// reads back through PostgresStore's `Store` API as it read from SQLite — and the shared store
/// then goes on from it (new ids after the copied ones, leases gone).
@Suite("Copying an SQLite store into PostgreSQL", .tags(.peers))
struct StoreCopyTests {
    /// An instant as `Date()` makes them, which seconds since 1970 keep only after rounding: the
    /// copy must carry what SQLite kept, to the last bit.
    static let when = Date(timeIntervalSinceReferenceDate: 770_000_000.123_456_7)

    static let alice = SettingsScope.user(team: "T1", user: "alice")
    static let general = SettingsScope.channel(team: "T1", channel: "general")
    static let route = ReplyRoute(platform: "slack", conversation: "slack:T1:C1", address: "{\"channel\":\"C1\"}")

    @Test("Every table comes across, and the shared store goes on from the copy")
    func copiesEverything() async throws {
        try await withTemporaryStore { sqlite in
            let inbox = try await Self.fill(sqlite)
            let original = try await Self.read(sqlite, inbox: inbox)
            try await withPostgresStore { postgres in
                let report = try await StoreCopy.copy(from: sqlite, to: postgres)
                #expect(
                    report.tables.map(\.name) == [
                        "chains", "custom_commands", "settings", "history", "ledger", "admin_grants", "model_calls", "dedupe", "outbox", "inbox",
                    ])
                #expect(report.tables.map(\.rows) == [3, 2, 2, 3, 2, 2, 2, 2, 5, 2])

                // PostgreSQL text cannot hold U+0000: the one way the copy may differ, by design.
                var expected = original
                expected.history = expected.history.map { runs in
                    runs.map { run in
                        var run = run
                        run.resultText = run.resultText?.replacingOccurrences(of: "\u{0}", with: "\u{FFFD}")
                        return run
                    }
                }
                #expect(expected != original, "the fixture holds a NUL, so the rule is exercised")
                #expect(try await Self.read(postgres, inbox: inbox) == expected)

                // Leases stay behind: the entry SQLite had leased until much later is due now; the
                // key claimed in SQLite is still claimed.
                #expect(try await postgres.claimDueOutbox(now: instant(10), leaseUntil: instant(1_000), limit: 10).map(\.id) == ["e1", "e5"])
                #expect(try await postgres.claimEvent(key: "slack:Ev1", expiresAt: instant(200), now: instant(50)) == false)
                // Enqueue order is kept, and goes on: of entries created at one instant, the
                // copied ones go first, in their order, then one enqueued after the copy.
                try await postgres.enqueue(OutboxFixtures.entry("e6", conversation: "slack:T1:A", created: 0))
                try await postgres.markSent(id: "e1", platformRef: nil, at: instant(11))
                #expect(try await postgres.claimDueOutbox(now: instant(12), leaseUntil: instant(1_000), limit: 10).map(\.id) == ["e2"])
                try await postgres.markSent(id: "e2", platformRef: nil, at: instant(13))
                #expect(try await postgres.claimDueOutbox(now: instant(14), leaseUntil: instant(1_000), limit: 10).map(\.id) == ["e6"])

                // New ids follow every id SQLite handed out, those of deleted rows included (3).
                let ledgerID = try await postgres.recordConsensus(LedgerStoreTests.entry("After the copy", at: 60))
                #expect(ledgerID > 3)
                let inboxID = try #require(
                    try await postgres.admit(OutboxFixtures.parkedEvent, route: Self.route, dedupeKey: nil, expiresAt: instant(100), now: instant(60)))
                #expect(inboxID > 3)
                // A new run at the instant of two copied ones comes first: its id is larger.
                try await postgres.recordRun(Self.run("alice", "after", at: Self.when))
                #expect(try await postgres.history(team: "T1", user: "alice", limit: 1).map(\.command) == ["after"])
            }
        }
    }

    @Test("A table larger than a page comes across whole and in order")
    func manyPages() async throws {
        try await withTemporaryStore { sqlite in
            for index in 0..<1_234 {
                try await sqlite.recordRun(Self.run("many", "run \(index)", at: instant(Double(index / 7))))
            }
            let original = try await sqlite.history(team: "T1", user: "many", limit: 2_000)
            try await withPostgresStore { postgres in
                let report = try await StoreCopy.copy(from: sqlite, to: postgres)
                #expect(report.rows(in: "history") == 1_234)
                #expect(report.totalRows == 1_234)
                #expect(try await postgres.history(team: "T1", user: "many", limit: 2_000) == original)
            }
        }
    }

    @Test("A replica already running reads the copied commands and settings, not what it cached before")
    func replicasForgetWhatTheyCached() async throws {
        try await withTemporaryStore { sqlite in
            _ = try await Self.fill(sqlite)
            try await PostgresTestServer.shared().withDatabase { database in
                let replica = try await openTestStore(database.url)
                let target = try await openTestStore(database.url)
                do {
                    try await eventually("the replica hears team-data changes") { replica.teamCacheIsLive }
                    // Read, and so cached, while the shared store is still empty.
                    #expect(try await replica.customCommands(team: "T1").isEmpty)
                    #expect(try await replica.settings(Self.alice).isEmpty)
                    _ = try await StoreCopy.copy(from: sqlite, to: target)
                    try await eventually("the replica reads the copied commands") { try await replica.customCommands(team: "T1").count == 2 }
                    #expect(try await replica.settings(Self.alice) == Settings(lang: "fr", tier: .frontier, receipts: true))
                    #expect(try await target.customCommands(team: "T1").count == 2)
                } catch {
                    try? await replica.close()
                    try? await target.close()
                    throw error
                }
                try await replica.close()
                try await target.close()
            }
        }
    }

    @Test("A target that holds data is refused, and nothing is copied")
    func refusesDataInTheTarget() async throws {
        try await withTemporaryStore { sqlite in
            _ = try await Self.fill(sqlite)
            try await withPostgresStore { postgres in
                let kept = SavedChain(team: "T9", name: "mine", source: "input > output", creator: "U9", createdAt: instant(), updatedAt: instant())
                try await postgres.saveChain(kept)
                try await postgres.saveSettings(Settings(lang: "de"), for: .user(team: "T9", user: "zoe"))
                let error = try await #require(throws: StoreCopyError.self) {
                    try await StoreCopy.copy(from: sqlite, to: postgres)
                }
                #expect(error == .targetNotEmpty(store: postgres.url.description, tables: ["chains", "settings"]))
                #expect(error.description.contains("already holds data (in chains, settings)"))
                #expect(error.description.contains("nothing was copied"))
                #expect(try await postgres.chains(team: "T9") == [kept])
                #expect(try await postgres.chains(team: "T1").isEmpty)
                #expect(try await postgres.history(team: "T1", user: "alice", limit: 10).isEmpty)
                #expect(try await postgres.pendingOutboxCount() == 0)
                #expect(try await postgres.inboxQueue().isEmpty)
            }
        }
    }

    @Test("A source file that does not exist is refused, and not created")
    func refusesAMissingSource() async throws {
        try await withTemporaryFolder { folder in
            let path = folder.path("missing.sqlite")
            try await PostgresTestServer.shared().withDatabase { database in
                let error = try await #require(throws: StoreCopyError.self) {
                    try await StoreCopy.copy(sqlitePath: path, to: try PostgresURL(database.url))
                }
                #expect(error == .sourceMissing(path: path))
                #expect(error.description.contains(path))
            }
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }

    // MARK: The fixture

    /// Fills `store` with some of everything; returns the inbox ids still there.
    static func fill(_ store: any Store) async throws -> [Int64] {
        for (team, name) in [("T1", "polish"), ("T1", "check"), ("T2", "polish")] {
            try await store.saveChain(
                SavedChain(team: team, name: name, source: "input > grammar > output", creator: "U1", createdAt: when, updatedAt: when + 1))
        }
        for name in ["shout", "calm"] {
            try await store.saveCustomCommand(CustomCommand(team: "T1", name: name, template: "Say {input} \(name)", creator: "U2", createdAt: when))
        }
        try await store.saveSettings(Settings(lang: "fr", tier: .frontier, receipts: true), for: alice)
        try await store.saveSettings(Settings(retention: .metadata), for: general)

        // Two runs at one instant: their order is their ids'.
        try await store.recordRun(run("alice", "fix", at: when))
        try await store.recordRun(
            HistoryEntry(
                team: "T1", user: "alice", channel: "general", command: "tribunal", commandLine: "/tribunal x", resultText: "True\u{0}ish",
                succeeded: false, agreement: 0.625, modelsAnswered: 2, modelsAsked: 3, elapsed: 1.5, createdAt: when, verdict: .true,
                scoreMeaning: .probabilityRight, agreeing: 2))
        try await store.recordRun(run("bob", "translate", at: when - 10))

        let first = try await store.recordConsensus(LedgerStoreTests.entry("The sky is blue", at: 1))
        try await store.recordConsensus(LedgerStoreTests.entry(nil, at: 2, user: "bob", verdict: nil))
        #expect(try await store.markLedger(team: "T1", id: first, mark: LedgerMark(verdict: .false, user: "carol", markedAt: when)))
        // The third entry's id is handed out, then its row deleted: the copy must not reuse it.
        try await store.recordConsensus(LedgerStoreTests.entry("Forget me", at: 3, user: "dave"))
        #expect(try await store.clearLedger(team: "T1", user: "dave") == 1)

        _ = try await store.record(
            RunRecord(
                changes: ["U3", "U4"].map {
                    .grantAdmin(AdminGrant(platform: "slack", team: "T1", user: $0, userName: "@\($0)", grantedBy: "U1", grantedAt: when))
                }))

        _ = try await store.record(RunRecord(usage: RunRecordStoreTests.usage(at: 5)))

        #expect(try await store.claimEvent(key: "slack:Ev1", expiresAt: instant(100), now: instant(0)))

        // Pending (one rescheduled, one leased long past the copy), sent and failed entries.
        try await store.enqueue(OutboxFixtures.entry("e1", conversation: "slack:T1:A", created: 0))
        try await store.enqueue(OutboxFixtures.entry("e2", conversation: "slack:T1:A", created: 0))
        try await store.enqueue(OutboxFixtures.entry("e3", conversation: "slack:T1:B", created: 0))
        try await store.enqueue(OutboxFixtures.entry("e4", conversation: "slack:T1:C", created: 0, content: .progress(OutboxFixtures.progress)))
        try await store.enqueue(OutboxFixtures.entry("e5", conversation: "slack:T1:D", created: 1))
        let claimed = try await store.claimDueOutbox(now: instant(2), leaseUntil: instant(1_000), limit: 10)
        #expect(claimed.map(\.id) == ["e1", "e3", "e4", "e5"])
        try await store.reschedule(id: "e1", attempts: 1, nextAttemptAt: instant(5), lastError: "HTTP 503")
        try await store.markSent(id: "e3", platformRef: "1750000000.000200", at: instant(3))
        try await store.markFailed(id: "e4", attempts: 5, lastError: "HTTP 404")

        var ids: [Int64] = []
        for (index, key) in ["slack:Ev2", nil, nil].enumerated() {
            let id = try await store.admit(OutboxFixtures.parkedEvent, route: route, dedupeKey: key, expiresAt: instant(100), now: instant(Double(index)))
            ids.append(try #require(id))
        }
        // The newest item's id is handed out, then the item gone: the copy must not reuse it.
        #expect(try await store.dropInboxItem(id: ids[2]))
        return Array(ids.prefix(2))
    }

    static func run(_ user: String, _ command: String, at date: Date) -> HistoryEntry {
        HistoryEntry(
            team: "T1", user: user, channel: "general", command: command, commandLine: "/\(command) text", resultText: "done",
            succeeded: true, elapsed: 0.25, createdAt: date)
    }

    /// What the fixture wrote, read through the `Store` API.
    struct Contents: Equatable {
        var chains: [[SavedChain]]
        var commands: [CustomCommand]
        var settings: [Settings]
        var history: [[HistoryEntry]]
        var ledger: [LedgerEntry]
        /// A search: PostgreSQL finds copied claims by words it made for them as it copied.
        var found: [LedgerEntry]
        var outbox: [OutboxEntry?]
        var pending: Int
        var inbox: [InboxItem]
        var queue: [InboxTicket]
        var admins: [AdminGrant]
        var modelCalls: [ModelCallRecord]
    }

    static func read(_ store: any Store, inbox: [Int64]) async throws -> Contents {
        Contents(
            chains: [try await store.chains(team: "T1"), try await store.chains(team: "T2")],
            commands: try await store.customCommands(team: "T1"),
            settings: [try await store.settings(alice), try await store.settings(general)],
            history: [try await store.history(team: "T1", user: "alice", limit: 10), try await store.history(team: "T1", user: "bob", limit: 10)],
            ledger: try await store.ledgerEntries(team: "T1"),
            found: try await store.searchLedger(team: "T1", words: ["SKY", "blu"], limit: 10),
            outbox: try await ["e1", "e2", "e3", "e4", "e5"].asyncMap { try await store.outboxEntry(id: $0) },
            pending: try await store.pendingOutboxCount(),
            // Claimed to be read (what a replica would run), in id order.
            inbox: try await store.claimInbox(now: Date(), leaseUntil: Date() + 60, limit: 100).filter { inbox.contains($0.id) }.sorted { $0.id < $1.id },
            queue: try await store.inboxQueue(),
            admins: try await store.adminGrants(platform: "slack", team: "T1"),
            modelCalls: try await store.modelCalls(UsageQuery(platform: nil, team: "T1", from: .distantPast, to: .distantFuture)))
    }
}

extension Array {
    /// `map` with an asynchronous transform, one element after another.
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
