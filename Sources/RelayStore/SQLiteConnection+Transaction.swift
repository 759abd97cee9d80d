import SQLiteNIO

extension SQLiteConnection {
    /// Runs `body` in one write transaction: committed when it returns, rolled back when it throws.
    ///
    /// `BEGIN IMMEDIATE` takes the write lock up front, so another process writing the same file makes
    /// this wait (busy timeout) at the start instead of failing at commit. The caller must hold the
    /// connection exclusively: SQLite transactions belong to a connection, not to a task.
    func inTransaction<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        _ = try await query("BEGIN IMMEDIATE")
        let result: T
        do {
            result = try await body()
        } catch {
            // The original error matters more than a failed rollback (SQLite may already have rolled back).
            _ = try? await query("ROLLBACK")
            throw error
        }
        _ = try await query("COMMIT")
        return result
    }
}
