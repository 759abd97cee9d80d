public import RelayCore

public import struct Foundation.Date

/// Everything the relay keeps: chains, custom commands, settings, run history, dedupe keys, the
/// inbox of accepted events (``InboxStore``), the outbox of replies waiting to be delivered
/// (``OutboxStore``), and the fact-check ledger (``LedgerStore``).
///
/// One protocol for every caller; SQLite implements it today, PostgreSQL can later without
/// touching callers. Names are stored as given (callers lower-case them).
public protocol Store: OutboxStore, InboxStore, LedgerStore, LeaseStore {
    // MARK: Chains (per team)
    /// Inserts or replaces the chain with this team and name.
    func saveChain(_ chain: SavedChain) async throws
    func chain(team: String, name: String) async throws -> SavedChain?
    /// All chains of a team, ordered by name.
    func chains(team: String) async throws -> [SavedChain]
    /// Returns whether a chain was deleted.
    func deleteChain(team: String, name: String) async throws -> Bool

    // MARK: Custom commands (per team)
    /// Inserts or replaces the command with this team and name.
    func saveCustomCommand(_ command: CustomCommand) async throws
    func customCommand(team: String, name: String) async throws -> CustomCommand?
    /// All custom commands of a team, ordered by name.
    func customCommands(team: String) async throws -> [CustomCommand]
    /// Returns whether a command was deleted.
    func deleteCustomCommand(team: String, name: String) async throws -> Bool

    // MARK: Admins granted here (per platform and team; `/admin grant`)
    /// The grants of one team, ordered by when they were made.
    func adminGrants(platform: String, team: String) async throws -> [AdminGrant]
    /// One user's grant in a team, or nil.
    func adminGrant(platform: String, team: String, user: String) async throws -> AdminGrant?

    // MARK: Usage (model calls, written with each run's end)
    /// The model calls `query` selects, oldest first.
    func modelCalls(_ query: UsageQuery) async throws -> [ModelCallRecord]

    // MARK: Settings (per user, per channel)
    /// The settings stored for one scope; empty settings when none are stored.
    func settings(_ scope: SettingsScope) async throws -> Settings
    func saveSettings(_ settings: Settings, for scope: SettingsScope) async throws

    // MARK: History
    func recordRun(_ entry: HistoryEntry) async throws
    /// Writes what a run keeps (its history row, its fact-checks) in one transaction, for a run
    /// that no inbox item stands for (the terminal, `rhea-relay run`); returns the ids its
    /// fact-checks got, in order. A run from the inbox keeps it with its end (`finishRun`).
    func record(_ run: RunRecord) async throws -> [Int64]
    /// A user's newest runs in a team, newest first.
    func history(team: String, user: String, limit: Int) async throws -> [HistoryEntry]
    /// A team's runs on the UTC days `from..<to` touches, each day counted whole, by day,
    /// command and success (the console's overview), in no particular order. Read from each
    /// day's totals, not from every run.
    func runCounts(team: String, from: Date, to: Date) async throws -> [RunCount]
    /// A team's model calls on the UTC days `from..<to` touches, each day counted whole, by day
    /// and model (the console's cost per day), in no particular order. Read from each day's totals.
    func modelCostDays(platform: String, team: String, from: Date, to: Date) async throws -> [ModelCostDay]
    /// Every platform's reply activity and every lease (the console's connections page),
    /// ordered by platform and by lease name.
    func connectionsReport() async throws -> ConnectionsReport
    /// How many runs a user has in a team's history and how many fact-checks they asked: what
    /// `/history clear` (`TeamChange.forget`) deletes.
    func keptCount(team: String, user: String) async throws -> (history: Int, factChecks: Int)
    /// Deletes all of a user's runs in a team (`/history clear`); returns how many there were.
    func clearHistory(team: String, user: String) async throws -> Int
    /// Ages history out and applies retention to what is already stored: deletes runs recorded
    /// before `before`; deletes the runs whose effective retention is `off` and drops the texts of
    /// those under `metadata`. The effective retention of a run is the strictest of
    /// `defaultRetention`, its user's setting and its channel's setting — as when it is recorded.
    /// Returns how many runs were deleted.
    func purgeHistory(before: Date, defaultRetention: Retention) async throws -> Int

    // MARK: Dedupe
    /// Claims an inbound event key. True the first time (process the event); false while an
    /// unexpired claim exists (a platform retry: drop it); true again once the claim has expired.
    func claimEvent(key: String, expiresAt: Date, now: Date) async throws -> Bool
    /// Whether an unexpired claim of `key` exists; claims nothing. (A withdrawn command's mark,
    /// `RunDispatcher.withdraw`, is such a claim.)
    func isClaimed(key: String, now: Date) async throws -> Bool
    /// Deletes expired claims (the data-retention service calls it).
    func purgeExpiredClaims(now: Date) async throws

    // MARK: Leases this process holds
    /// Extends the leases of these inbox items (runs in flight) and outbox entries (deliveries
    /// in flight) to `until`, where this process still holds them: work that takes longer than
    /// one lease keeps it, while work whose process died, or that was dropped without its
    /// outcome written, is free again within a lease.
    func renewLeases(inbox: [Int64], outbox: [String], until: Date) async throws
    /// Calls `wake` when another process sharing the store wrote work this one could take
    /// (an inbox item or an outbox entry that waits for a claim). A store no other process
    /// writes never calls it.
    func watchForWork(_ wake: @escaping @Sendable (StoreWork) -> Void)

    /// Whether other processes share this store (PostgreSQL): work that one replica should do for
    /// all of them (the retention purges) then takes a lease first.
    var isShared: Bool { get }

    /// Closes the store; later calls fail.
    func close() async throws
}

/// What another process wrote for a claim to find.
public enum StoreWork: Sendable, Hashable {
    case inbox
    case outbox
}

extension Store {
    /// A store of one process (SQLite, memory) unless it says otherwise.
    public var isShared: Bool { false }
}
