import Foundation
import RelayCore
import RelayPipeline
import RelayTestSupport
import RelayTestTags
import Testing

@testable import RelayStore

/// What an operator meets when the shared store cannot be used as configured: each failure says
/// what is wrong, names STORE_URL, never shows the password, and changes nothing.
@Suite("Opening the PostgreSQL store", .tags(.peers))
struct PostgresOpeningTests {
    /// Opens with 30 s deadlines, not serve's 5 s: these check what a failure says, and a loaded
    /// machine has taken longer than 5 s to refuse a wrong password.
    static func open(_ url: PostgresURL) async throws -> PostgresStore {
        try await PostgresStore.open(url: url, migrations: PostgresSchema.migrations, requestTimeout: .seconds(30), operationTimeout: .seconds(30))
    }

    @Test("A database migrated by a newer rhea-relay is refused with a clear error and left untouched")
    func schemaTooNew() async throws {
        let server = try await PostgresTestServer.shared()
        try await server.withDatabase { database in
            let url = try PostgresURL(database.url)
            let first = try await Self.open(url)
            try await first.saveChain(
                SavedChain(team: "T1", name: "kept", source: "input > output", creator: "U1", createdAt: instant(), updatedAt: instant()))
            try await first.close()
            let newer = PostgresStore.supportedSchemaVersion + 1
            try await server.execute("INSERT INTO schema_migrations (version, applied_at) VALUES (\(newer), 0)", database: database.name)
            let before = try await Self.snapshot(server, database)

            let error = try await #require(throws: StoreError.self) {
                try await Self.open(url)
            }
            #expect(error == .databaseSchemaTooNew(store: url.description, found: newer, supported: PostgresStore.supportedSchemaVersion))
            #expect(error.description.contains("STORE_URL"))
            #expect(error.description.contains("schema version \(newer)"))
            #expect(try await Self.snapshot(server, database) == before)
        }
    }

    /// `rhea-relay doctor`'s look at the store: the schema's version, read without changing it.
    @Test("The schema version is read without migrating: none on a fresh database, the latest once opened")
    func schemaVersionIsReadOnly() async throws {
        let server = try await PostgresTestServer.shared()
        try await server.withDatabase { database in
            let url = try PostgresURL(database.url)
            #expect(try await PostgresStore.schemaVersion(url: url) == nil)
            #expect(try await PostgresStore.schemaVersion(url: url) == nil, "reading it made no table")
            try await Self.open(url).close()
            #expect(try await PostgresStore.schemaVersion(url: url) == PostgresStore.supportedSchemaVersion)
        }
    }

    @Test("Replicas opening a fresh database together all succeed, and each migration is applied once")
    func concurrentFirstOpen() async throws {
        let server = try await PostgresTestServer.shared()
        try await server.withDatabase { database in
            let url = try PostgresURL(database.url)
            // Every migration creates tables, so applying one twice fails: a replica that did not
            // wait for the advisory lock would fail to open. One more than the schema's, so there
            // is more than one version to record.
            let migrations =
                PostgresSchema.migrations + [Migration(version: PostgresSchema.latestVersion + 1, statements: ["CREATE TABLE only_once (x integer)"])]
            let stores = try await withThrowingTaskGroup(of: PostgresStore.self) { group in
                for _ in 0..<5 {
                    group.addTask {
                        try await PostgresStore.open(
                            url: url, migrations: migrations, maxConnections: 2, requestTimeout: .seconds(30), operationTimeout: .seconds(30))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(stores.count == 5)
            for store in stores { try await store.close() }
            let recorded = try await server.queryStrings(
                "SELECT version::text, count(*)::text FROM schema_migrations GROUP BY version ORDER BY schema_migrations.version", database: database.name)
            #expect(recorded == migrations.map { ["\($0.version)", "1"] })
        }
    }

    @Test("Version 6 rewrites a Matrix message reference kept as `<room> <event>` as JSON, and nothing else")
    func matrixMessageReferencesBecomeJSON() async throws {
        let server = try await PostgresTestServer.shared()
        try await server.withDatabase { database in
            let url = try PostgresURL(database.url)
            let old = try await openTestStore(database.url, before: 6)
            var matrix = OutboxFixtures.entry("m1", conversation: "matrix:!room:example.org")
            matrix.platform = "matrix"
            for entry in [matrix, OutboxFixtures.entry("s1")] { try await old.enqueue(entry) }
            try await old.markSent(id: "m1", platformRef: "!room:example.org $ev/ent+1", at: instant(1))
            try await old.markSent(id: "s1", platformRef: "1750000000.000100", at: instant(1))
            try await old.close()

            let store = try await Self.open(url)
            let ref = try #require(try await store.outboxEntry(id: "m1")?.platformRef)
            #expect(try JSONDecoder().decode([String: String].self, from: Data(ref.utf8)) == ["room": "!room:example.org", "event": "$ev/ent+1"])
            #expect(try await store.outboxEntry(id: "s1")?.platformRef == "1750000000.000100", "Slack's reference is left as it was")
            try await store.close()
        }
    }

    @Test("A wrong password is refused as cannotConnect, naming STORE_URL and showing no password")
    func wrongPassword() async throws {
        let server = try await PostgresTestServer.shared()
        try await server.withDatabase { database in
            var url = try PostgresURL(database.url)
            let wrong = "wrong-" + UUID().uuidString
            url.password = wrong
            let error = try await #require(throws: StoreError.self) {
                try await Self.open(url)
            }
            guard case .cannotConnect(let store, _) = error else {
                Issue.record("Expected cannotConnect, got \(error)")
                return
            }
            #expect(store == url.description)
            #expect(error.description.contains("STORE_URL"))
            #expect(error.description.contains("password authentication failed"))
            #expect(!error.description.contains(wrong))
            #expect(!error.description.contains(server.password))
        }
    }

    @Test("A port nothing listens on is refused as cannotConnect within seconds")
    func unreachable() async throws {
        let clock = ContinuousClock()
        let started = clock.now
        let (url, error) = try await withRefusingLoopbackPort { port in
            let url = try PostgresURL("postgres://relay:s3cret-pw@127.0.0.1:\(port)/relay?sslmode=disable")
            return (url, try await #require(throws: StoreError.self) { try await PostgresStore.open(url: url) })
        }
        // Refused at once (the port is held, not listening), well before the store's 5 s deadline.
        #expect(clock.now - started < .seconds(10))
        guard case .cannotConnect(let store, _) = error else {
            Issue.record("Expected cannotConnect, got \(error)")
            return
        }
        #expect(store == url.description)
        #expect(error.description.contains("STORE_URL"))
        #expect(!error.description.contains("s3cret-pw"))
    }

    /// A server that takes the connection and says nothing (one starting, or slow under load) is
    /// asked again, three times in all, before the open is refused, saying it did not answer.
    @Test("A server that does not answer is asked three times, then refused as cannotConnect")
    func silent() async throws {
        let logs = LogCapture()
        let error = try await withSilentLoopbackPort { port in
            let url = try PostgresURL("postgres://relay:s3cret-pw@127.0.0.1:\(port)/relay?sslmode=disable")
            return try await #require(throws: StoreError.self) {
                try await PostgresStore.open(url: url, migrations: PostgresSchema.migrations, operationTimeout: .milliseconds(300), logger: logs.logger)
            }
        }
        guard case .cannotConnect(_, let reason) = error else {
            Issue.record("Expected cannotConnect, got \(error)")
            return
        }
        #expect(reason.contains("did not answer within"))
        #expect(logs.text.components(separatedBy: "the store did not answer in time; asking again").count - 1 == PostgresStore.startupAttempts - 1)
        #expect(!logs.text.contains("s3cret-pw"))
    }

    /// The schema's tables and their row counts, and the recorded migrations: what a refused
    /// open must leave as it was.
    private static func snapshot(_ server: PostgresTestServer, _ database: PostgresTestDatabase) async throws -> [[String?]] {
        let tables = try await server.queryStrings(
            "SELECT tablename::text FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename", database: database.name)
        var rows = tables
        for row in tables {
            guard let name = row.first ?? nil else { continue }
            rows += try await server.queryStrings("SELECT '\(name)', count(*)::text FROM \(name)", database: database.name)
        }
        rows += try await server.queryStrings(
            "SELECT version::text, applied_at::text FROM schema_migrations ORDER BY version", database: database.name)
        return rows
    }
}

/// `STORE_URL` as the operator writes it, and what its parse says when it is wrong.
@Suite("Parsing STORE_URL")
struct PostgresURLTests {
    @Test("postgres:// and postgresql:// give every part; the port defaults to 5432 and TLS to prefer")
    func parts() throws {
        let full = try PostgresURL("postgres://relay:s3cret@db.example:6543/relay_prod")
        #expect(full.user == "relay")
        #expect(full.password == "s3cret")
        #expect(full.host == "db.example")
        #expect(full.port == 6543)
        #expect(full.database == "relay_prod")
        #expect(full.tls == .prefer)
        let long = try PostgresURL("postgresql://relay:s3cret@db.example/relay_prod")
        #expect(long.port == 5432)
        #expect(long.database == "relay_prod")
        let ipv6 = try PostgresURL("postgres://relay:s3cret@[::1]:5433/relay")
        #expect(ipv6.host == "::1")
        #expect(ipv6.description == "postgres://relay:•••@[::1]:5433/relay?sslmode=prefer")
        let noPassword = try PostgresURL("postgres://relay@db/relay")
        #expect(noPassword.password == nil)
        #expect(noPassword.description == "postgres://relay@db:5432/relay?sslmode=prefer")
    }

    @Test("A percent-encoded password is decoded, and the description masks it")
    func percentEncodedPassword() throws {
        let url = try PostgresURL("postgres://relay:p%40ss%3Aw%2Frd%23%3F@db:5432/relay")
        #expect(url.password == "p@ss:w/rd#?")
        #expect(url.description == "postgres://relay:•••@db:5432/relay?sslmode=prefer")
        #expect(!url.description.contains("p%40ss"))
        #expect(!"\(url)".contains("p@ss"))
    }

    @Test("sslmode is disable, prefer or require", arguments: PostgresURL.TLSMode.allCases)
    func sslmode(_ mode: PostgresURL.TLSMode) throws {
        let url = try PostgresURL("postgres://relay:s3cret@db/relay?sslmode=\(mode.rawValue)")
        #expect(url.tls == mode)
        #expect(url.description.hasSuffix("?sslmode=\(mode.rawValue)"))
    }

    /// Each wrong URL, with words its error must hold. The password is always `s3cret`.
    static let wrong: [(url: String, says: String)] = [
        ("postgres://db.example:5432/relay", "names no user"),
        ("postgres://:s3cret@db.example:5432/relay", "names no user"),
        ("postgres://relay:s3cret@:5432/relay", "names no host"),
        ("postgres://relay:s3cret@/relay", "names no host"),
        ("postgres://relay:s3cret@db.example:5432", "names no database"),
        ("postgres://relay:s3cret@db.example:5432/", "names no database"),
        ("postgres://relay:s3cret@db.example:99999/relay", "port 99999 is not between 1 and 65535"),
        ("postgres://relay:s3cret@db.example:0/relay", "port 0 is not between 1 and 65535"),
        ("postgres://relay:s3cret@db.example:54x2/relay", "port is not a number"),
        ("postgres://relay:s3cret@db.example/relay?connect_timeout=5", "option \"connect_timeout\" is not supported"),
        ("postgres://relay:s3cret@db.example/relay?sslmode=verify-full", "sslmode=verify-full is not one of disable, prefer, require"),
        ("mysql://relay:s3cret@db.example/relay", "scheme is \"mysql\""),
        ("relay:s3cret@db.example:5432/relay", "does not start with postgres://"),
        ("relay:s3cret@db.example://relay", "does not start with postgres://"),
        ("postgres://relay:s3cret@db example/relay", "not a valid URL"),
    ]

    @Test("A wrong URL is refused saying what is wrong, never quoting the password", arguments: wrong.indices)
    func refused(_ index: Int) throws {
        let (text, says) = Self.wrong[index]
        let error = try #require(throws: PostgresURLError.self) { try PostgresURL(text) }
        #expect(error.description.contains(says), "\(text): \(error)")
        #expect(!error.description.contains("s3cret"), "\(text): \(error)")
    }
}
