import RelayPipeline

public import struct Foundation.Date

extension MemoryStore {
    /// Takes or renews the lease as SQLiteStore's statement does: free, lapsed or already
    /// `holder`'s leases are granted, and the token moves on only when the holder changes.
    public func acquireLease(_ name: String, holder: String, until: Date, now: Date) throws -> Int64? {
        let (until, now) = (until.asKeptBySQLite, now.asKeptBySQLite)
        return try withOpenContents { contents throws(StoreError) in
            let key = ExactText(name)
            guard var lease = contents.leases[key] else {
                contents.leases[key] = LeaseRecord(holder: holder, token: 1, expiresAt: until)
                return 1
            }
            let renewing = lease.holder.map { ExactText($0) == ExactText(holder) } ?? false
            let lapsed = lease.expiresAt.map { $0 < now } ?? false
            guard lease.holder == nil || renewing || lapsed else { return nil }
            if !renewing { lease.token += 1 }
            lease.holder = holder
            lease.expiresAt = until
            contents.leases[key] = lease
            return lease.token
        }
    }

    public func releaseLease(_ name: String, holder: String) throws {
        try withOpenContents { contents throws(StoreError) in
            let key = ExactText(name)
            guard let current = contents.leases[key]?.holder, ExactText(current) == ExactText(holder) else { return }
            contents.leases[key]?.holder = nil
            contents.leases[key]?.expiresAt = nil
        }
    }

    public func leaseState(_ name: String) throws -> String? {
        try withOpenContents { $0.leases[ExactText(name)]?.state }
    }

    public func saveLeaseState(_ name: String, value: String, token: Int64) throws -> Bool {
        try withOpenContents { contents throws(StoreError) in
            let key = ExactText(name)
            guard contents.leases[key]?.token == token else { return false }
            contents.leases[key]?.state = value
            return true
        }
    }
}

/// A lease as SQLiteStore's `leases` row keeps it: a released lease keeps its token and state.
struct LeaseRecord: Sendable {
    var holder: String?
    var token: Int64
    /// Nil once released.
    var expiresAt: Date?
    var state: String?
}
