import Crypto
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// A real PostgreSQL server for the tests, on a loopback port, in a folder of its own.
///
/// Tests share one cluster per test process (`shared()`) and isolate themselves with a database
/// each (`createDatabase()`, `withDatabase(_:)`): starting a cluster takes about a second, a
/// database a fraction of that. Tests that stop or restart the server take one of their own
/// (`startPrivate()`), so they never pull it from under tests running in parallel. Every cluster
/// is stopped and its folder removed when the test process exits.
public struct PostgresTestServer: Sendable {
    /// The superuser every connection logs in as.
    public let user: String
    /// The superuser's password (random per cluster).
    public let password: String
    /// The TCP port on 127.0.0.1.
    public let port: Int
    let cluster: PostgresCluster

    /// The host the server listens on: loopback only.
    public var host: String { "127.0.0.1" }

    private static let sharedStart = SharedStart<PostgresTestServer>()

    /// The test process's shared cluster, started on the first call (`SharedStart`).
    public static func shared() async throws -> PostgresTestServer {
        try await sharedStart.value { try await startPrivate() }
    }

    /// Starts a cluster of its own, for a test that stops or restarts the server; `durable`
    /// keeps fsync and full page writes on, as in production (benchmarks).
    public static func startPrivate(durable: Bool = false) async throws -> PostgresTestServer {
        let user = "relay"
        let password = randomHex(bytes: 16)
        var cluster = try await PostgresCluster.create(user: user, password: password)
        cluster.durable = durable
        let port = try await cluster.startOnFreePort()
        let server = PostgresTestServer(user: user, password: password, port: port, cluster: cluster)
        // The password kept as an MD5 hash, so each connection authenticates with one hash:
        // SCRAM's 4096 rounds, on both sides of every connection the tests open (hundreds),
        // took the two cores from the tests that run beside them. A wrong password still fails.
        let hash = Insecure.MD5.hash(data: Data((password + user).utf8)).map { String(format: "%02x", $0) }.joined()
        try await server.execute("ALTER ROLE \(user) PASSWORD 'md5\(hash)'", database: "postgres", step: "keep the password as MD5")
        return server
    }

    /// The postmaster's process id while the server runs (its backends are its children).
    public var postmasterPID: Int32? { cluster.postmasterPID }

    /// The URL of `database`, as the relay's `STORE_URL` takes it.
    public func url(database: String) -> String {
        // RFC 3986's unreserved characters; anything else in the password is percent-encoded.
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        let encoded = password.addingPercentEncoding(withAllowedCharacters: unreserved) ?? password
        return "postgres://\(user):\(encoded)@\(host):\(port)/\(database)?sslmode=disable"
    }

    /// Stops the server (fast shutdown: open connections are cut). `start()` brings it back.
    public func stop() async throws {
        try await cluster.stop()
    }

    /// Starts a stopped server again on the same port.
    public func start() async throws {
        try await cluster.start(port: port)
    }

    /// Restarts the server on the same port (fast shutdown: open connections are cut).
    public func restart() async throws {
        try await cluster.restart(port: port)
    }

    /// Creates an empty database with a fresh name.
    public func createDatabase() async throws -> PostgresTestDatabase {
        let name = "t_" + Self.randomHex(bytes: 6)
        // FILE_COPY: PostgreSQL 15's default copies the template through the WAL, several times
        // the work with fsync off, and the tests make a database each.
        try await execute(#"CREATE DATABASE "\#(name)" STRATEGY = FILE_COPY"#, database: "postgres", step: "create database \(name)")
        return PostgresTestDatabase(name: name, url: url(database: name), server: self)
    }

    /// Runs `body` with a fresh database, then drops it, also when `body` throws.
    public func withDatabase<T>(
        isolation: isolated (any Actor)? = #isolation, _ body: (PostgresTestDatabase) async throws -> T
    ) async throws -> T {
        let database = try await createDatabase()
        let result: T
        do {
            result = try await body(database)
        } catch {
            try? await database.drop()
            throw error
        }
        try await database.drop()
        return result
    }

    /// Runs one SQL statement in `database`, on a connection of its own.
    public func execute(_ sql: String, database: String) async throws {
        try await execute(sql, database: database, step: "execute in \(database)")
    }

    /// Runs one query in `database` and returns every row, each column decoded as text. Columns
    /// that are not text must be cast in the SQL (`count(*)::text`); NULL comes back as nil.
    public func queryStrings(_ sql: String, database: String) async throws -> [[String?]] {
        try await withConnection(database: database, step: "query in \(database)") { connection, logger in
            var rows: [[String?]] = []
            for try await row in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger) {
                let cells = row.makeRandomAccess()
                rows.append(try (0..<cells.count).map { try cells[$0].decode(String?.self) })
            }
            return rows
        }
    }

    func execute(_ sql: String, database: String, step: String) async throws {
        try await withConnection(database: database, step: step) { connection, logger in
            // Read to the end: an error raised while the statement runs arrives with its rows.
            for try await _ in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger) {}
        }
    }

    private static let connectionIDs = Atomic(0)

    /// Connects to `database`, runs `body` and closes the connection; failures become a
    /// `PostgresTestServerError` naming `step`, with the server log's tail.
    private func withConnection<T>(
        database: String, step: String, _ body: (PostgresConnection, Logger) async throws -> T
    ) async throws -> T {
        let logger = Logger(label: "rhea.postgres-test-server", factory: { _ in SwiftLogNoOpLogHandler() })
        let configuration = PostgresConnection.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: .disable)
        do {
            let id = Self.connectionIDs.add(1, ordering: .relaxed).newValue
            let connection = try await PostgresConnection.connect(configuration: configuration, id: id, logger: logger)
            do {
                let result = try await body(connection, logger)
                try await connection.close()
                return result
            } catch {
                try? await connection.close()
                throw error
            }
        } catch {
            // PSQLError's `description` hides the server's message; its reflection shows it.
            throw PostgresTestServerError(step: step, reason: String(reflecting: error), output: cluster.logTail())
        }
    }

    private static func randomHex(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in String(format: "%02x", generator.next() as UInt8) }.joined()
    }
}

/// A database of its own on a `PostgresTestServer`.
public struct PostgresTestDatabase: Sendable {
    /// The database's name (`t_` and 12 hex digits).
    public let name: String
    /// Its URL, as the relay's `STORE_URL` takes it.
    public let url: String
    let server: PostgresTestServer

    /// Drops the database, cutting any connection still open to it.
    public func drop() async throws {
        try await server.execute(#"DROP DATABASE IF EXISTS "\#(name)" WITH (FORCE)"#, database: "postgres", step: "drop database \(name)")
    }
}

/// A step of starting, driving or using a test server failed.
public struct PostgresTestServerError: Error, CustomStringConvertible, Sendable {
    /// What was being done: "initdb", "pg_ctl start", "create database t_…".
    public let step: String
    /// Why it failed.
    public let reason: String
    /// The end of what the command printed, or of the server log.
    public let output: String

    init(step: String, reason: String, output: String = "") {
        self.step = step
        self.reason = reason
        self.output = output
    }

    public var description: String {
        let head = "PostgreSQL test server: \(step) failed: \(reason)"
        return output.isEmpty ? head : head + "\n" + output
    }
}
