import Foundation
import RelayTestSupport
import RelayTestTags
import Testing

/// The harness the PostgreSQL store's tests stand on: if it leaked data between databases or
/// could not survive a restart, their failures would point at the store instead.
@Suite("PostgresTestServer", .tags(.peers))
struct PostgresTestServerTests {
    @Test("Databases of the shared server are separate, and dropping one removes it")
    func separateDatabases() async throws {
        let server = try await PostgresTestServer.shared()
        let first = try await server.createDatabase()
        try await server.withDatabase { second in
            #expect(first.name != second.name)
            try await server.execute("CREATE TABLE t (id int PRIMARY KEY, body text)", database: first.name)
            try await server.execute("INSERT INTO t VALUES (1, 'hello')", database: first.name)
            let rows = try await server.queryStrings("SELECT id::text, body FROM t", database: first.name)
            #expect(rows == [["1", "hello"]])
            let elsewhere = try await server.queryStrings("SELECT to_regclass('public.t')::text", database: second.name)
            #expect(elsewhere == [[nil]])
        }
        try await first.drop()
        let left = try await server.queryStrings(
            "SELECT count(*)::text FROM pg_database WHERE datname = '\(first.name)'", database: "postgres")
        #expect(left == [["0"]])
    }

    @Test("The URL names the relay user, the password and the loopback port")
    func url() async throws {
        let server = try await PostgresTestServer.shared()
        let url = server.url(database: "t_example")
        #expect(url.hasPrefix("postgres://relay:"))
        #expect(url.contains("@127.0.0.1:\(server.port)/t_example?sslmode=disable"))
        let components = try #require(URLComponents(string: url))
        #expect(components.user == server.user)
        #expect(components.password == server.password)
        #expect(components.port == server.port)
    }

    @Test("A failure names its step and what the server said")
    func failureNamesStep() async throws {
        let server = try await PostgresTestServer.shared()
        let error = await #expect(throws: PostgresTestServerError.self) {
            _ = try await server.queryStrings("SELECT 1::text", database: "t_missing")
        }
        #expect(error?.step == "query in t_missing")
        #expect(error?.description.contains("t_missing") == true)
    }

    @Test("A private server keeps its data across a restart, and stops and starts on its port")
    func restart() async throws {
        // Its own cluster: restarting the shared one would cut the connections of other tests.
        let server = try await PostgresTestServer.startPrivate()
        do {
            let database = try await server.createDatabase()
            try await server.execute("CREATE TABLE t (body text)", database: database.name)
            try await server.execute("INSERT INTO t VALUES ('kept')", database: database.name)
            try await server.restart()
            #expect(try await server.queryStrings("SELECT body FROM t", database: database.name) == [["kept"]])

            try await server.stop()
            await #expect(throws: PostgresTestServerError.self) {
                _ = try await server.queryStrings("SELECT 1::text", database: database.name)
            }
            try await server.start()
            #expect(try await server.queryStrings("SELECT body FROM t", database: database.name) == [["kept"]])
            try await database.drop()
        } catch {
            try? await server.stop()
            throw error
        }
        try await server.stop()
    }
}
