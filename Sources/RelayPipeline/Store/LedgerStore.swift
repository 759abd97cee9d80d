public import RelayCore

public import struct Foundation.Date

/// The fact-check ledger: every consensus the relay asked for, per team (issue 14).
///
/// What an entry holds is what is kept: the caller applies retention when recording, and
/// ``purgeLedger(before:defaultRetention:)`` applies it to what is already stored.
public protocol LedgerStore: Sendable {
    /// Records a consensus; returns its id (ids grow and are never reused).
    @discardableResult
    func recordConsensus(_ entry: LedgerEntry) async throws -> Int64
    /// One entry of a team, or nil (another team's entry is nil too).
    func ledgerEntry(team: String, id: Int64) async throws -> LedgerEntry?
    /// A team's entries whose claim holds every one of `words` (full-text, case-insensitive,
    /// a word matches as a prefix), newest first; with no words, the newest. At most `limit`.
    func searchLedger(team: String, words: [String], limit: Int) async throws -> [LedgerEntry]
    /// A team's newest marked entries, newest first, at most `limit` (the console's council
    /// page); each judge's answer may be left out, as in `recentLedger`.
    func markedLedger(team: String, limit: Int) async throws -> [LedgerEntry]
    /// Every entry of a team, oldest first (`/ledger export`).
    func ledgerEntries(team: String) async throws -> [LedgerEntry]
    /// Sets the entry's mark (a later mark replaces an earlier one); false when the team has no
    /// entry with that id.
    func markLedger(team: String, id: Int64, mark: LedgerMark) async throws -> Bool
    /// The newest entries of every team, newest first: what the council learns its judges from.
    /// Each judge's answer may be left out (its model, verdict, confidence and failure are there).
    func recentLedger(limit: Int) async throws -> [LedgerEntry]
    /// The newest entries of every team in `recentLedger`'s order, only their id, backend and
    /// mark: what the council reads on every consensus to decide whether to learn again (2 000
    /// of these cost a fraction of reading the entries).
    func ledgerStamps(limit: Int) async throws -> [LedgerStamp]
    /// Deletes what one user asked in a team (`/history clear`); returns how many.
    func clearLedger(team: String, user: String) async throws -> Int
    /// Deletes entries recorded before `before` and those whose effective retention is `off`;
    /// drops the texts of those under `metadata` (as `purgeHistory` does for runs). Returns how
    /// many were deleted.
    func purgeLedger(before: Date, defaultRetention: Retention) async throws -> Int
}
