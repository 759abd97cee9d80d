import PostgresNIO
import RelayPipeline

public import struct Foundation.Date

extension PostgresStore {
    /// Takes or renews the lease in one statement, as SQLiteStore does. Replicas racing for it
    /// cannot both win: the upsert locks the row (or waits on the other's insert of it) and
    /// checks its WHERE against the row as the winner left it, which is no longer free.
    public func acquireLease(_ name: String, holder: String, until: Date, now: Date) async throws -> Int64? {
        let (name, holder) = (PostgresJSON.withoutNUL(name), PostgresJSON.withoutNUL(holder))
        return try await query(
            "take lease \(name) for \(holder)",
            """
            INSERT INTO leases (name, holder, token, expires_at) VALUES (\(name), \(holder), 1, \(until.timeIntervalSince1970))
            ON CONFLICT (name) DO UPDATE SET
                token = CASE WHEN leases.holder = excluded.holder THEN leases.token ELSE leases.token + 1 END,
                holder = excluded.holder, expires_at = excluded.expires_at
            WHERE leases.holder IS NULL OR leases.holder = excluded.holder OR leases.expires_at < \(now.timeIntervalSince1970)
            RETURNING token
            """
        ).first?.int64("token")
    }

    public func releaseLease(_ name: String, holder: String) async throws {
        let (name, holder) = (PostgresJSON.withoutNUL(name), PostgresJSON.withoutNUL(holder))
        try await query(
            "release lease \(name) of \(holder)", "UPDATE leases SET holder = NULL, expires_at = NULL WHERE name = \(name) AND holder = \(holder)")
    }

    public func leaseState(_ name: String) async throws -> String? {
        let name = PostgresJSON.withoutNUL(name)
        return try await query("read the state of lease \(name)", "SELECT state FROM leases WHERE name = \(name)").first?.optionalText("state")
    }

    public func saveLeaseState(_ name: String, value: String, token: Int64) async throws -> Bool {
        let (name, value) = (PostgresJSON.withoutNUL(name), PostgresJSON.withoutNUL(value))
        return try await !query(
            "save the state of lease \(name)", "UPDATE leases SET state = \(value) WHERE name = \(name) AND token = \(token) RETURNING name"
        ).isEmpty
    }
}
