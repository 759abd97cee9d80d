public import Foundation
import SQLiteNIO

extension SQLiteStore {
    /// Takes or renews the lease in one statement: the row is inserted (token 1), or taken over
    /// when it is free, lapsed or already `holder`'s; RETURNING yields the token only then. The
    /// token moves on only when the holder changes, so a holder that renews, or takes back a
    /// lease no one took meanwhile, keeps the token it had.
    ///
    /// The writer runs operations one after another, so of holders racing for a free lease
    /// exactly one gets a token.
    public func acquireLease(_ name: String, holder: String, until: Date, now: Date) async throws -> Int64? {
        try await perform("take lease \(name) for \(holder)") { db in
            try db.query(
                """
                INSERT INTO leases (name, holder, token, expires_at) VALUES (?, ?, 1, ?)
                ON CONFLICT (name) DO UPDATE SET
                    token = CASE WHEN leases.holder = excluded.holder THEN leases.token ELSE leases.token + 1 END,
                    holder = excluded.holder, expires_at = excluded.expires_at
                WHERE leases.holder IS NULL OR leases.holder = excluded.holder OR leases.expires_at < ?
                RETURNING token
                """,
                [.text(name), .text(holder), .date(until), .date(now)]
            ).first.map { Int64(try $0.int("token")) }
        }
    }

    /// Frees the lease when `holder` has it; the row stays, with its token and state, for the
    /// next holder.
    public func releaseLease(_ name: String, holder: String) async throws {
        try await perform("release lease \(name) of \(holder)") { db in
            _ = try db.query("UPDATE leases SET holder = NULL, expires_at = NULL WHERE name = ? AND holder = ?", [.text(name), .text(holder)])
        }
    }

    public func leaseState(_ name: String) async throws -> String? {
        try await perform("read the state of lease \(name)") { db in
            try db.query("SELECT state FROM leases WHERE name = ?", [.text(name)]).first?.optionalText("state")
        }
    }

    public func saveLeaseState(_ name: String, value: String, token: Int64) async throws -> Bool {
        try await perform("save the state of lease \(name)") { db in
            try !db.query("UPDATE leases SET state = ? WHERE name = ? AND token = ? RETURNING name", [.text(value), .text(name), .integer(Int(token))])
                .isEmpty
        }
    }
}
