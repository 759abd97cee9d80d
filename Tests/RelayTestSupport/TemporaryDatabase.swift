public import Foundation
public import RelayStore

/// A temporary SQLite file that can be opened, closed and opened again (a restart); removed with
/// its WAL files when `with`'s body returns.
public struct TemporaryDatabase: Sendable {
    public let path = FileManager.default.temporaryDirectory.appendingPathComponent("server-\(UUID().uuidString).sqlite").path

    public func open() async throws -> SQLiteStore { try await SQLiteStore.open(path: path) }

    public func remove() {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    public static func with<T>(_ body: (TemporaryDatabase) async throws -> T) async throws -> T {
        let database = TemporaryDatabase()
        defer { database.remove() }
        return try await body(database)
    }
}
