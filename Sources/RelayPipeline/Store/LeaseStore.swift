public import struct Foundation.Date

/// Leases on connections a platform allows only once per bot (the Discord gateway, Telegram's
/// long polling, Slack Socket Mode), so that among several replicas exactly one holds each
/// (docs/replicas.md). Every `Store` is one.
///
/// A lease is a row with an expiry and a fencing token, not an advisory lock held on a
/// connection of its own: such a lock lives as long as its connection, so a replica cut off by a
/// network partition keeps it until TCP gives up (minutes), and a PostgreSQL restart drops every
/// lock at once. A row lapses when its holder stops renewing it, whatever the network does, and
/// the same statements work in SQLite and in memory, where one process is the only holder.
///
/// The token tells holders apart over time: a holder that stalled past its expiry and was
/// replaced can no longer save state (``saveLeaseState(_:value:token:)``), because the token it
/// holds is no longer the lease's.
public protocol LeaseStore: Sendable {
    /// Takes or renews lease `name` for `holder` until `until`. Granted when no one holds it, when
    /// its holder's lease ended before `now`, or when `holder` already holds it. Returns the
    /// fencing token — it grows by one every time the lease changes hands, never on a renewal —
    /// or nil when another holder's lease is live.
    func acquireLease(_ name: String, holder: String, until: Date, now: Date) async throws -> Int64?
    /// Gives the lease up (graceful shutdown), so a successor need not wait for it to lapse. Only
    /// `holder`'s lease is released.
    func releaseLease(_ name: String, holder: String) async throws
    /// What the lease's holders keep for their successors (Telegram's offset, the gateway's
    /// resume state); nil when nothing was saved.
    func leaseState(_ name: String) async throws -> String?
    /// Saves `value` only while `token` is still the lease's current token: a holder that lost
    /// the lease writes nothing and gets false.
    func saveLeaseState(_ name: String, value: String, token: Int64) async throws -> Bool
}
