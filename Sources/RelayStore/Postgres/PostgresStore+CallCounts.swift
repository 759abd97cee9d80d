import PostgresNIO
public import RelayPipeline

public import struct Foundation.Date

extension PostgresStore: CallCountStore {
    /// One round trip: `relay_admit_call` counts or refuses under a lock on the caller.
    public func admitCall(caller: String, now: Date, perMinute: Int, perDay: Int) async throws -> CallAdmission {
        let caller = PostgresJSON.withoutNUL(caller)
        let row = try await query(
            "count an API call by \(caller)",
            "SELECT refused, retry_after FROM relay_admit_call(\(caller), \(now.timeIntervalSince1970), \(max(1, perMinute)), \(max(1, perDay)))"
        ).first
        guard let row, let refused = try row.optionalText("refused") else { return .allowed }
        return .refused(perDay: refused == "day", retryAfter: max(1, Int(try row.int64("retry_after"))))
    }
}
