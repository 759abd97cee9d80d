import SQLiteNIO

public import struct Foundation.Date

extension SQLiteStore {
    /// Claims an inbound event key: true the first time, false while an unexpired claim exists, true
    /// again once it has expired (a claim expires when `now` reaches its `expiresAt`).
    ///
    /// One statement: the key is inserted, or an expired claim of it taken over; RETURNING yields
    /// a row only then. The writer runs operations one after another, so concurrent claims of one
    /// key yield exactly one true. Expired keys of other events are deleted by
    /// ``purgeExpiredClaims(now:)``, not here, so a claim stays one indexed write.
    public func claimEvent(key: String, expiresAt: Date, now: Date) async throws -> Bool {
        try await perform("claim event key \(key)") { db in
            try Self.claim(key: key, expiresAt: expiresAt, now: now, db)
        }
    }

    /// The claim as a step of a larger operation (admitting an event to the inbox).
    static func claim(key: String, expiresAt: Date, now: Date, _ db: Database) throws -> Bool {
        try !db.query(
            """
            INSERT INTO dedupe (key, expires_at) VALUES (?, ?)
            ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at WHERE dedupe.expires_at <= ?
            RETURNING key
            """,
            [.text(key), .date(expiresAt), .date(now)]
        ).isEmpty
    }

    /// Deletes the claims that have expired.
    public func purgeExpiredClaims(now: Date) async throws {
        try await perform("purge expired event keys") { db in
            _ = try db.query("DELETE FROM dedupe WHERE expires_at <= ?", [.date(now)])
        }
    }
}
