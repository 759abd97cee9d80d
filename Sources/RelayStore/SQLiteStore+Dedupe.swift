import SQLiteNIO

public import struct Foundation.Date

extension SQLiteStore {
    /// Claims an inbound event key: true the first time, false while an unexpired claim exists, true
    /// again once it has expired (a claim expires when `now` reaches its `expiresAt`).
    ///
    /// Purging expired keys and inserting the claim share one transaction, and the actor's gate
    /// keeps other operations off the connection meanwhile, so concurrent claims of one key yield
    /// exactly one true.
    public func claimEvent(key: String, expiresAt: Date, now: Date) async throws -> Bool {
        try await perform("claim event key \(key)") { db in
            try await db.inTransaction {
                _ = try await db.query("DELETE FROM dedupe WHERE expires_at <= ?", [.date(now)])
                // After the purge any row left for this key is an unexpired claim, so a conflict means
                // "already claimed"; RETURNING yields a row only when the claim was inserted.
                let inserted = try await db.query(
                    "INSERT INTO dedupe (key, expires_at) VALUES (?, ?) ON CONFLICT (key) DO NOTHING RETURNING key",
                    [.text(key), .date(expiresAt)])
                return !inserted.isEmpty
            }
        }
    }
}
