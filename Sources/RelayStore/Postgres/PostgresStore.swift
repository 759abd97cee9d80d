import CoreMetrics
public import Logging
import NIOCore
import NIOSSL
import PostgresNIO
import RelayCore
public import RelayPipeline
import Synchronization

import class Foundation.ProcessInfo
import struct Foundation.UUID

/// The relay's ``Store`` in PostgreSQL, shared by every replica (`STORE_URL`).
///
/// Every operation that a command makes — admission, a run's end, a delivery's mark — is one
/// statement, so one round trip; a run's end is a function of the schema
/// (``PostgresFunctions/finishRun``) that takes its turn per conversation. Concurrent operations
/// use the pool's connections at once, and concurrent commits share the server's WAL flush: that
/// is PostgreSQL's group commit, so the store batches nothing itself.
///
/// The reads every command makes (a team's custom commands, a user's and a channel's settings)
/// are cached as SQLiteStore caches them; a replica that changes them notifies the others
/// (`NOTIFY relay_team_data`), which drop what they cached (``PostgresListener``).
///
/// The client's run loop is a task the store owns from ``open(url:logger:)`` to ``close()``:
/// migrations run before the service group starts, so the store cannot wait for it.
public final class PostgresStore: Store {
    /// Where the store is, password masked.
    public let url: PostgresURL
    /// This process among the replicas: leases it takes carry it, so another replica can tell
    /// them from its own.
    public let owner: String
    /// The newest schema version this code knows; a database with a newer one is refused.
    public static var supportedSchemaVersion: Int { PostgresSchema.latestVersion }

    let client: PostgresClient
    let logger: Logger
    let cache = ReadCache()
    let marks = MarkSentBatcher()
    private let runTask: Task<Void, Never>
    private let listener = PostgresListener()
    private let listenTask: Task<Void, Never>
    private let closed = Mutex(false)
    private let trips = RoundTrips()
    /// How long a statement that a platform's request waits on may take (see ``defaultRequestTimeout``).
    let requestTimeout: Duration
    /// How long any other operation may wait for the server (see ``defaultOperationTimeout``).
    let operationTimeout: Duration

    private init(url: PostgresURL, client: PostgresClient, requestTimeout: Duration, operationTimeout: Duration, logger: Logger) {
        self.url = url
        self.client = client
        self.requestTimeout = requestTimeout
        self.operationTimeout = operationTimeout
        self.logger = logger
        let process = ProcessInfo.processInfo
        owner = "\(process.hostName)/\(process.processIdentifier)/\(UUID().uuidString.prefix(8).lowercased())"
        runTask = Task { await client.run() }
        let (listener, cache) = (listener, cache)
        listenTask = Task { await listener.run(client: client, cache: cache, logger: logger) }
    }

    /// Connects, applies the migrations the database lacks (one replica at a time) and starts the
    /// connection pool.
    ///
    /// Throws ``StoreError/cannotConnect(store:reason:)`` when the server cannot be reached or
    /// refuses the credentials, and ``StoreError/databaseSchemaTooNew(store:found:supported:)``
    /// when a newer rhea-relay migrated it.
    public static func open(
        url: PostgresURL, maxConnections: Int = 16, logger: Logger = Logger(label: "rhea-relay.store")
    ) async throws -> PostgresStore {
        try await open(url: url, migrations: PostgresSchema.migrations, maxConnections: maxConnections, logger: logger)
    }

    /// Opens with an explicit migration list and deadlines. Tests use the list to simulate older
    /// and newer code, and longer deadlines where they check what is stored, not how fast.
    static func open(
        url: PostgresURL, migrations: [Migration], maxConnections: Int = 16, requestTimeout: Duration = defaultRequestTimeout,
        operationTimeout: Duration = defaultOperationTimeout, logger: Logger = Logger(label: "rhea-relay.store")
    ) async throws -> PostgresStore {
        var logger = logger
        logger[metadataKey: "store.url"] = .string(url.description)
        // One connection of its own first: a wrong password or an unreachable server is told at
        // once (the pool would retry quietly), and the migrations run on it before anyone else uses
        // the database.
        let connection = try await firstConnection(url, timeout: operationTimeout, logger: logger)
        do {
            try await PostgresMigrator(connection: connection, store: url.description, logger: logger).run(migrations)
            try? await connection.close()
        } catch {
            try? await connection.close()
            throw error
        }
        var configuration = clientConfiguration(url, connectTimeout: operationTimeout)
        configuration.options.maximumConnections = max(2, maxConnections)
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let store = PostgresStore(
            url: url, client: client, requestTimeout: requestTimeout, operationTimeout: operationTimeout, logger: logger)
        // The pool's first connection is made now rather than by the first command: its start-up
        // (SCRAM costs both sides real CPU, more on a busy machine) would otherwise count against
        // the 2 s a platform's request may wait. A failure here is the first command's to report.
        _ = try? await store.query("open the pool's first connection", "SELECT 1")
        return store
    }

    /// How many times `open` asks a server that does not answer in time before it gives up.
    static let startupAttempts = 3

    /// Connects once and reads the schema's version, changing nothing (`rhea-relay doctor`): nil
    /// for a database no relay has used yet. Throws what connecting met (address, password, TLS).
    public static func schemaVersion(url: PostgresURL, logger: Logger = Logger(label: "rhea-relay.store")) async throws -> Int? {
        let connection = try await firstConnection(url, timeout: defaultOperationTimeout, logger: logger)
        do {
            // Two statements: a query that names a missing table fails as it is parsed.
            var exists = false
            for try await value in try await connection.query("SELECT to_regclass('schema_migrations') IS NOT NULL", logger: logger).decode(Bool.self) {
                exists = value
            }
            var version: Int?
            if exists {
                for try await value in try await connection.query("SELECT max(version) FROM schema_migrations", logger: logger).decode(Int?.self) {
                    version = value
                }
            }
            try? await connection.close()
            return version
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// The connection `open` migrates on. A server that does not answer within `timeout` — its
    /// connection not taken, or its login not finished: still starting, or slow under load
    /// (measured: a loaded 2-core machine's PostgreSQL has taken more than 5 s to finish a SCRAM
    /// login) — is asked again, up to `startupAttempts` times; anything else (a refused port, a
    /// wrong password) is told at once.
    private static func firstConnection(_ url: PostgresURL, timeout: Duration, logger: Logger) async throws -> PostgresConnection {
        let configuration: PostgresConnection.Configuration
        do {
            configuration = try connectionConfiguration(url, connectTimeout: timeout)
        } catch {
            throw StoreError.cannotConnect(store: url.description, reason: PostgresFailure.reason(for: error))
        }
        var attempt = 1
        while true {
            do {
                return try await withinDeadline(timeout, discardingLate: { try? await $0.close() }) {
                    try await PostgresConnection.connect(on: PostgresClient.defaultEventLoopGroup.next(), configuration: configuration, id: 0, logger: logger)
                }
            } catch  where PostgresFailure.isTimeout(error) && attempt < startupAttempts {
                logger.warning(
                    "the store did not answer in time; asking again", metadata: ["attempt": "\(attempt)", "reason": "\(PostgresFailure.reason(for: error))"])
                attempt += 1
            } catch {
                throw StoreError.cannotConnect(store: url.description, reason: PostgresFailure.reason(for: error))
            }
        }
    }

    /// Stops the pool after the operations in flight; later calls throw ``StoreError/closed``.
    public func close() async throws {
        guard
            closed.withLock({ closed in
                defer { closed = true }
                return !closed
            })
        else { return }
        listenTask.cancel()
        await listenTask.value
        runTask.cancel()
        await runTask.value
    }

    /// Wakes `wake` when another replica wrote work for a claim (`relay_inbox`, `relay_outbox`).
    public func watchForWork(_ wake: @escaping @Sendable (StoreWork) -> Void) {
        listener.watch(wake)
    }

    /// Every replica shares it.
    public var isShared: Bool { true }

    /// Whether cached team data can be trusted: the other replicas' writes are being heard.
    var teamCacheIsLive: Bool { listener.isLive }

    /// Statements sent to the server since the store opened: the round trips the benchmark counts.
    public var roundTrips: Int { trips.count }

    // MARK: Access to the server

    /// Runs one statement and returns its rows, turning a failure into a
    /// ``StoreError/operationFailed(operation:reason:)`` that names `operation`; failing after
    /// `timeout` (``operationTimeout`` unless given) when the server does not answer.
    @discardableResult
    func query(
        _ operation: @autoclosure () -> String, _ query: PostgresQuery, within timeout: Duration? = nil
    ) async throws -> [PostgresRandomAccessRow] {
        let timeout = timeout ?? operationTimeout
        guard !closed.withLock({ $0 }) else { throw StoreError.closed }
        trips.add(1)
        let (client, logger) = (client, logger)
        do {
            return try await Self.withinDeadline(timeout) {
                try await client.query(query, logger: logger).collect().map { $0.makeRandomAccess() }
            }
        } catch {
            throw PostgresFailure.storeError(error, operation: operation())
        }
    }

    /// Runs a prepared statement (`PostgresHotStatements`: parsed and planned once per
    /// connection) and returns its rows decoded, as `query` does otherwise.
    func execute<Statement: PostgresPreparedStatement>(
        _ operation: @autoclosure () -> String, _ statement: Statement, within timeout: Duration? = nil
    ) async throws -> [Statement.Row] where Statement.Row: Sendable {
        let timeout = timeout ?? operationTimeout
        guard !closed.withLock({ $0 }) else { throw StoreError.closed }
        trips.add(1)
        let (client, logger) = (client, logger)
        do {
            return try await Self.withinDeadline(timeout) {
                var rows: [Statement.Row] = []
                for try await row in try await client.execute(statement, logger: logger) { rows.append(row) }
                return rows
            }
        } catch {
            throw PostgresFailure.storeError(error, operation: operation())
        }
    }

    /// How long an operation may wait for the server. While PostgreSQL restarts, the pool keeps
    /// asking for a connection (for up to a minute before it gives up on its own): a caller
    /// gets a failure after this long instead — an adapter then answers its platform with a
    /// retryable status rather than acknowledging what it could not store.
    static let defaultOperationTimeout: Duration = .seconds(5)
    /// How long a statement that a platform's request waits on may take: admitting an event
    /// (with its dedupe key) and the readiness probe's count. Slack wants its answer within 3 s
    /// and the probes in `deploy/` give up after 3, so while PostgreSQL is away a command is
    /// refused in time for the person to read "send it again" (an event gets its 500 before
    /// Slack stops waiting, and is retried), and `/readyz` answers 503 rather than nothing.
    static let defaultRequestTimeout: Duration = .seconds(2)

    /// Every store's statements in flight, with their deadlines.
    static let deadlines = QueryDeadlines(tick: .milliseconds(100))

    /// `body`'s result, or ``PostgresFailure/TimedOut`` once `timeout` passed. The caller is
    /// answered at the deadline whatever `body` does: a wait for a pooled connection ends when
    /// `body` is cancelled, but a connection that a server which is not PostgreSQL never answers
    /// does not, so `body` runs in a task of its own and is left to end by itself.
    ///
    /// A value `body` returns after the caller was answered (the deadline passed, or the caller
    /// was cancelled) reaches no one: `discardingLate` disposes of it. A connection made just
    /// after its deadline must be closed there: dropped open, it leaks its socket, and
    /// PostgresNIO traps on it in a debug build (a clean clone's CI, the peers group, 2026-12-06).
    static func withinDeadline<T: Sendable>(
        _ timeout: Duration, discardingLate discard: (@Sendable (T) async -> Void)? = nil, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let answer = Once<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                answer.wait(continuation)
                let work = Task {
                    let result: Result<T, any Error>
                    do {
                        result = .success(try await body())
                    } catch {
                        result = .failure(error)
                    }
                    if !answer.resume(result), case .success(let late) = result { await discard?(late) }
                }
                let deadline = deadlines.add(after: timeout) {
                    if answer.resume(.failure(PostgresFailure.TimedOut(after: timeout))) { work.cancel() }
                }
                answer.onResume { deadlines.remove(deadline) }
            }
        } onCancel: {
            answer.resume(.failure(CancellationError()))
        }
    }

    /// Runs `body` in one transaction on one connection: committed when it returns, rolled back
    /// when it throws.
    func transaction<T: Sendable>(
        _ operation: @autoclosure () -> String, _ body: (PostgresTransaction) async throws -> T
    ) async throws -> T {
        guard !closed.withLock({ $0 }) else { throw StoreError.closed }
        let trips = trips
        do {
            return try await client.withTransaction(logger: logger) { connection in
                trips.add(2)  // BEGIN and COMMIT
                return try await body(PostgresTransaction(connection: connection, logger: logger, trips: trips))
            }
        } catch {
            throw PostgresFailure.storeError(error, operation: operation())
        }
    }

    // MARK: Connection settings

    /// A connection is made within `connectTimeout`: the operation deadline (5 s in `serve`),
    /// which tests that check what is stored, not how fast, lengthen.
    static func connectionConfiguration(_ url: PostgresURL, connectTimeout: Duration) throws -> PostgresConnection.Configuration {
        var configuration = PostgresConnection.Configuration(
            host: url.host, port: url.port, username: url.user, password: url.password, database: url.database, tls: try connectionTLS(url.tls))
        configuration.options.connectTimeout = TimeAmount(connectTimeout)
        return configuration
    }

    static func clientConfiguration(_ url: PostgresURL, connectTimeout: Duration) -> PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS =
            switch url.tls {
            case .disable: .disable
            case .prefer: .prefer(.makeClientConfiguration())
            case .require: .require(.makeClientConfiguration())
            }
        var configuration = PostgresClient.Configuration(
            host: url.host, port: url.port, username: url.user, password: url.password, database: url.database, tls: tls)
        configuration.options.connectTimeout = connectTimeout
        return configuration
    }

    private static func connectionTLS(_ mode: PostgresURL.TLSMode) throws -> PostgresConnection.Configuration.TLS {
        switch mode {
        case .disable: return .disable
        case .prefer: return .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
        case .require: return .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        }
    }
}

/// A connection inside ``PostgresStore/transaction(_:_:)``, counting its statements.
struct PostgresTransaction {
    let connection: PostgresConnection
    let logger: Logger
    let trips: RoundTrips

    @discardableResult
    func query(_ query: PostgresQuery) async throws -> [PostgresRandomAccessRow] {
        trips.add(1)
        return try await connection.query(query, logger: logger).collect().map { $0.makeRandomAccess() }
    }

    func execute<Statement: PostgresPreparedStatement>(_ statement: Statement) async throws -> [Statement.Row] {
        trips.add(1)
        var rows: [Statement.Row] = []
        for try await row in try await connection.execute(statement, logger: logger) { rows.append(row) }
        return rows
    }
}

/// A continuation resumed by whichever comes first (the answer, the deadline, cancellation),
/// and only by that one.
final class Once<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var early: Result<T, any Error>?
        var done = false
        var onResume: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

    func wait(_ continuation: CheckedContinuation<T, any Error>) {
        let early = state.withLock { state -> Result<T, any Error>? in
            if let early = state.early { return early }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    func onResume(_ action: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.done { return true }
            state.onResume = action
            return false
        }
        if now { action() }
    }

    /// Whether this call was the first.
    @discardableResult
    func resume(_ result: Result<T, any Error>) -> Bool {
        let (first, continuation, action) = state.withLock { state -> (Bool, CheckedContinuation<T, any Error>?, (@Sendable () -> Void)?) in
            guard !state.done else { return (false, nil, nil) }
            state.done = true
            if state.continuation == nil { state.early = result }
            defer { state.continuation = nil }
            return (true, state.continuation, state.onResume)
        }
        continuation?.resume(with: result)
        action?()
        return first
    }
}

/// Statements sent, counted across tasks.
final class RoundTrips: Sendable {
    private let value = Atomic<Int>(0)
    /// The same count in `/metrics` (`relay_store_round_trips_total`): what `slack-bench --store
    /// postgres` divides by the commands answered.
    private let metric = Counter(label: "relay_store_round_trips_total")

    func add(_ count: Int) {
        value.add(count, ordering: .relaxed)
        metric.increment(by: count)
    }

    var count: Int { value.load(ordering: .relaxed) }
}
