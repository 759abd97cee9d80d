import Foundation
import RelayCore
import RelayPipeline
import RelayTestSupport
import Testing

@testable import RelayStore

/// The stores that behaviour tests run against. SQLite is the reference; the memory store and
/// the shared PostgreSQL store must behave exactly as it does, so every test of the `Store`
/// protocol runs on all three (PostgreSQL: a real server the tests start, a database per test).
enum StoreKind: CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case memory
    case postgres

    var testDescription: String {
        switch self {
        case .sqlite: "SQLiteStore"
        case .memory: "MemoryStore"
        case .postgres: "PostgresStore"
        }
    }
}

/// Runs `body` with a fresh, empty store of `kind` (SQLite: on its own file), then closes it.
func withStore(_ kind: StoreKind, _ body: (any Store) async throws -> Void) async throws {
    switch kind {
    case .sqlite:
        try await withTemporaryStore(body)
    case .memory:
        let store = MemoryStore()
        defer { store.close() }
        try await body(store)
    case .postgres:
        try await withPostgresStore(body)
    }
}

/// Runs `body` with a store on a fresh database of the tests' PostgreSQL server, then closes the
/// store and drops the database.
func withPostgresStore(_ body: (PostgresStore) async throws -> Void) async throws {
    try await PostgresTestServer.shared().withDatabase { database in
        try await withClosing(try await openTestStore(database.url), body)
    }
}

/// A store as `serve` opens it, but with 30 s for the statements a platform's request waits on
/// instead of 2, and for the others instead of 5: these tests check what is stored and who wins a
/// claim, and on a loaded CI machine a fresh database's first admit has taken more than 2 s. The
/// 2 s themselves are checked through `serve` (`PostgresRestartTests`), the 5 s by
/// `PostgresOpeningTests`.
func openTestStore(_ url: String) async throws -> PostgresStore {
    try await openTestStore(url, before: Int.max)
}

/// The same, migrated only to the versions before `version`: the database an older relay left.
func openTestStore(_ url: String, before version: Int) async throws -> PostgresStore {
    try await PostgresStore.open(
        url: try PostgresURL(url), migrations: PostgresSchema.migrations.filter { $0.version < version }, requestTimeout: .seconds(30),
        operationTimeout: .seconds(30))
}

/// Runs `body` with `store`, then closes it, also when `body` throws.
func withClosing<S: Store>(_ store: S, _ body: (S) async throws -> Void) async throws {
    do {
        try await body(store)
    } catch {
        try? await store.close()
        throw error
    }
    try await store.close()
}

/// A folder of its own under the temporary directory, so tests running in parallel never share a file.
struct TemporaryFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("rhea-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ relative: String) -> String {
        url.appendingPathComponent(relative).path
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// Runs `body` with a freshly opened store on its own file, then closes the store and removes the file.
func withTemporaryStore(_ body: (SQLiteStore) async throws -> Void) async throws {
    try await withTemporaryFolder { folder in
        try await withClosing(try await SQLiteStore.open(path: folder.path("relay.sqlite")), body)
    }
}

/// Runs `body` with a temporary folder that is removed afterwards, whether `body` throws or not.
func withTemporaryFolder(_ body: (TemporaryFolder) async throws -> Void) async throws {
    let folder = try TemporaryFolder()
    defer { folder.remove() }
    try await body(folder)
}

/// A fixed instant in whole seconds, so stored dates compare exactly.
func instant(_ offset: TimeInterval = 0) -> Date {
    Date(timeIntervalSince1970: 1_750_000_000 + offset)
}
