import Foundation
import RelayCore
import RelayPipeline
import Testing

@testable import RelayStore

@Suite("Opening the SQLite store")
struct OpeningTests {
    @Test("A first run creates the file, its missing folders and every table, in WAL mode")
    func firstRunOnMissingPath() async throws {
        try await withTemporaryFolder { folder in
            let path = folder.path("data/nested/relay.sqlite")
            let store = try await SQLiteStore.open(path: path)
            #expect(FileManager.default.fileExists(atPath: path))
            try await expectUsable(store)
            try await store.close()
        }
    }

    @Test("An existing empty file is initialised like a missing one")
    func firstRunOnEmptyFile() async throws {
        try await withTemporaryFolder { folder in
            let path = folder.path("relay.sqlite")
            #expect(FileManager.default.createFile(atPath: path, contents: Data()))
            let store = try await SQLiteStore.open(path: path)
            try await expectUsable(store)
            try await store.close()
        }
    }

    @Test("Reopening keeps the data and applies no migration twice")
    func reopening() async throws {
        try await withTemporaryFolder { folder in
            let path = folder.path("relay.sqlite")
            let chain = SavedChain(
                team: "T1", name: "polish", source: "input > grammar > output", creator: "U1",
                createdAt: instant(), updatedAt: instant())
            let first = try await SQLiteStore.open(path: path)
            try await first.saveChain(chain)
            let migrations = try await first.appliedMigrations()
            try await first.close()

            let second = try await SQLiteStore.open(path: path)
            #expect(try await second.chain(team: "T1", name: "polish") == chain)
            #expect(try await second.appliedMigrations() == migrations)
            try await second.close()
        }
    }

    @Test("Only migrations the file lacks are applied, each once")
    func appliesOnlyMissingMigrations() async throws {
        try await withTemporaryFolder { folder in
            let path = folder.path("relay.sqlite")
            let old = try await SQLiteStore.open(path: path, migrations: Migration.all)
            let before = try await old.appliedMigrations()
            try await old.close()

            let newer = try await SQLiteStore.open(path: path, migrations: Migration.all + [Self.nextMigration])
            let after = try await newer.appliedMigrations()
            try await newer.close()
            #expect(after.map(\.version) == before.map(\.version) + [Self.nextMigration.version])
            #expect(Array(after.prefix(before.count)) == before)
        }
    }

    @Test("A file from a newer rhea-relay is refused with a clear error and left untouched")
    func schemaTooNew() async throws {
        try await withTemporaryFolder { folder in
            let path = folder.path("relay.sqlite")
            let newer = try await SQLiteStore.open(path: path, migrations: Migration.all + [Self.nextMigration])
            try await newer.close()
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))

            let error = try await #require(throws: StoreError.self) {
                try await SQLiteStore.open(path: path)
            }
            #expect(
                error
                    == .schemaTooNew(
                        path: path, found: Self.nextMigration.version, supported: SQLiteStore.supportedSchemaVersion))
            #expect(error.description.contains(path))
            #expect(error.description.contains("upgrade rhea-relay"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)

            // The newer code still opens it.
            let again = try await SQLiteStore.open(path: path, migrations: Migration.all + [Self.nextMigration])
            #expect(try await again.appliedMigrations().last?.version == Self.nextMigration.version)
            try await again.close()
        }
    }

    @Test("A failing migration is rolled back and reported with its version")
    func failingMigrationRollsBack() async throws {
        try await withTemporaryFolder { folder in
            let path = folder.path("relay.sqlite")
            let broken = Migration(
                version: SQLiteStore.supportedSchemaVersion + 1,
                statements: ["CREATE TABLE half_done (id INTEGER)", "CREATE TABLE chains (id INTEGER)"])
            let error = try await #require(throws: StoreError.self) {
                try await SQLiteStore.open(path: path, migrations: Migration.all + [broken])
            }
            guard case .migrationFailed(let failedPath, let version, _) = error else {
                Issue.record("Expected migrationFailed, got \(error)")
                return
            }
            #expect(failedPath == path)
            #expect(version == broken.version)

            let store = try await SQLiteStore.open(path: path)
            #expect(try await store.appliedMigrations().map(\.version) == Migration.all.map(\.version))
            try await store.close()
            // Had `half_done` survived the rollback, applying the fixed migration would fail.
            let fixed = Migration(version: broken.version, statements: ["CREATE TABLE half_done (id INTEGER)"])
            let upgraded = try await SQLiteStore.open(path: path, migrations: Migration.all + [fixed])
            try await upgraded.close()
        }
    }

    @Test("Version 8 rewrites a Matrix message reference kept as `<room> <event>` as JSON, and nothing else")
    func matrixMessageReferencesBecomeJSON() async throws {
        try await withTemporaryFolder { folder in
            let path = folder.path("relay.sqlite")
            let old = try await SQLiteStore.open(path: path, migrations: Migration.all.filter { $0.version < 8 })
            var matrix = OutboxFixtures.entry("m1", conversation: "matrix:!room:example.org")
            matrix.platform = "matrix"
            for entry in [matrix, OutboxFixtures.entry("s1")] { try await old.enqueue(entry) }
            try await old.markSent(id: "m1", platformRef: "!room:example.org $ev/ent+1", at: instant(1))
            try await old.markSent(id: "s1", platformRef: "1750000000.000100", at: instant(1))
            try await old.close()

            let store = try await SQLiteStore.open(path: path)
            let ref = try #require(try await store.outboxEntry(id: "m1")?.platformRef)
            #expect(try JSONDecoder().decode([String: String].self, from: Data(ref.utf8)) == ["room": "!room:example.org", "event": "$ev/ent+1"])
            #expect(try await store.outboxEntry(id: "s1")?.platformRef == "1750000000.000100", "Slack's reference is left as it was")
            try await store.close()
        }
    }

    @Test("Migration versions are unique and ascending")
    func migrationOrder() {
        let versions = Migration.all.map(\.version)
        #expect(versions == versions.sorted())
        #expect(Set(versions).count == versions.count)
        #expect(versions.first == 1)
        #expect(SQLiteStore.supportedSchemaVersion == versions.last)
    }

    /// A server whose service group is cancelled (a service failed, or a second SIGTERM) still
    /// closes its store on the way out; an unclosed connection traps in debug builds.
    @Test("Closing from a cancelled task still closes the file")
    func closingWhenCancelled() async throws {
        try await withTemporaryFolder { folder in
            let path = folder.path("relay.sqlite")
            let store = try await SQLiteStore.open(path: path)
            let closing = Task {
                while !Task.isCancelled { await Task.yield() }
                try await store.close()
            }
            closing.cancel()
            try await closing.value
            await #expect(throws: StoreError.closed) { try await store.journalMode() }
            // The file is free again.
            let again = try await SQLiteStore.open(path: path)
            try await again.close()
        }
    }

    /// A harmless migration that only a "newer" build knows.
    static let nextMigration = Migration(
        version: SQLiteStore.supportedSchemaVersion + 1,
        statements: ["CREATE TABLE from_the_future (id INTEGER PRIMARY KEY)"])

    private func expectUsable(_ store: SQLiteStore) async throws {
        #expect(try await store.journalMode() == "wal")
        #expect(try await store.appliedMigrations().map(\.version) == Migration.all.map(\.version))
        // Every table answers.
        #expect(try await store.chains(team: "T").isEmpty)
        #expect(try await store.customCommands(team: "T").isEmpty)
        #expect(try await store.settings(.user(team: "T", user: "U")).isEmpty)
        #expect(try await store.history(team: "T", user: "U", limit: 10).isEmpty)
        #expect(try await store.claimEvent(key: "k", expiresAt: instant(60), now: instant()))
        #expect(try await store.pendingOutboxCount() == 0)
    }
}
