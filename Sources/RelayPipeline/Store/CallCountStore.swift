public import struct Foundation.Date

/// Calls counted per caller where every replica counts them (PostgreSQL): the served Rhea API's
/// per-key limits hold for the deployment, not for each replica (docs/replicas.md). A store of one
/// process is not one; the API counts in memory there.
public protocol CallCountStore: Sendable {
    /// Counts a call by `caller` at `now` if it keeps both limits: at most `perMinute` in the
    /// last minute (counted to the second) and `perDay` in the last 24 hours (to the minute).
    /// Replicas counting the same caller at once take turns, so neither limit is overshot.
    func admitCall(caller: String, now: Date, perMinute: Int, perDay: Int) async throws -> CallAdmission
}

/// Whether a call was counted.
public enum CallAdmission: Sendable, Hashable {
    case allowed
    /// Refused: the minute's limit or the day's was reached; a call is next allowed in
    /// `retryAfter` seconds (at least 1).
    case refused(perDay: Bool, retryAfter: Int)
}
