public import RelayCore
public import RelayPipeline
import Synchronization

public import struct Foundation.Date

/// A ``Store`` kept in memory that behaves exactly as ``SQLiteStore`` does: for unit tests of the
/// core (no files, no SQLite), and for throwaway sessions such as the terminal adapter's.
///
/// Not durable: everything is lost when the process ends, so a restart resends nothing. SQLiteStore
/// is the reference; the store tests run against both, so a difference is a bug here.
///
/// Every operation is one short critical section under a mutex, and synchronous, so a call through
/// ``Store`` does not hop to another executor.
public final class MemoryStore: Store, Sendable {
    private let state = Mutex(Contents())

    /// An empty store.
    public init() {}

    /// Everything the store holds, keyed as SQLite keys it.
    struct Contents {
        var isClosed = false
        var chains = TeamShelf<SavedChain>()
        var customCommands = TeamShelf<CustomCommand>()
        var settings: [[ExactText]: Settings] = [:]
        /// Per team and user, in the order recorded.
        var history: [[ExactText]: [HistoryEntry]] = [:]
        /// Event keys and when their claims expire.
        var dedupe: [ExactText: Date] = [:]
        var outbox: [ExactText: OutboxRecord] = [:]
        /// The enqueue order of the next outbox entry.
        var nextSequence = 1
        /// Accepted events by id (ids grow and are never reused, as SQLite's AUTOINCREMENT).
        var inbox: [Int64: InboxRecord] = [:]
        var nextInboxID: Int64 = 1
        /// The fact-check ledger by id (ids grow and are never reused).
        var ledger: [Int64: LedgerEntry] = [:]
        var nextLedgerID: Int64 = 1
        /// Connection leases by name.
        var leases: [ExactText: LeaseRecord] = [:]
        /// The admin role granted here, per platform and team, in the order granted.
        var adminGrants: [[ExactText]: [AdminGrant]] = [:]
        /// Every model call runs made, in the order written.
        var modelCalls: [ModelCallRecord] = []
    }

    /// Runs `body` on the contents, or throws ``StoreError/closed`` once the store is closed.
    func withOpenContents<T: Sendable>(_ body: (inout Contents) throws(StoreError) -> T) throws(StoreError) -> T {
        try state.withLock { contents throws(StoreError) in
            guard !contents.isClosed else { throw .closed }
            return try body(&contents)
        }
    }

    /// Drops everything; later calls throw ``StoreError/closed``, as SQLiteStore's do. Closing again
    /// does nothing.
    public func close() {
        state.withLock { $0 = Contents(isClosed: true) }
    }

    // MARK: Chains

    /// Inserts the chain, or replaces the source and `updatedAt` of the team's chain by that name,
    /// keeping its `creator` and `createdAt` (editing does not transfer ownership).
    public func saveChain(_ chain: SavedChain) throws {
        try withOpenContents { contents throws(StoreError) in Self.save(chain, into: &contents) }
    }

    static func save(_ chain: SavedChain, into contents: inout Contents) {
        var chain = chain
        chain.createdAt = chain.createdAt.asKeptBySQLite
        chain.updatedAt = chain.updatedAt.asKeptBySQLite
        contents.chains.save(chain, team: chain.team, name: chain.name) {
            $0.source = chain.source
            $0.updatedAt = chain.updatedAt
        }
    }

    public func chain(team: String, name: String) throws -> SavedChain? {
        try withOpenContents { $0.chains.item(team: team, name: name) }
    }

    /// All chains of a team, ordered by name.
    public func chains(team: String) throws -> [SavedChain] {
        try withOpenContents { $0.chains.items(team: team) }
    }

    public func deleteChain(team: String, name: String) throws -> Bool {
        try withOpenContents { $0.chains.delete(team: team, name: name) }
    }

    // MARK: Custom commands

    /// Inserts the command, or replaces the template of the team's command by that name, keeping its
    /// `creator` and `createdAt`.
    public func saveCustomCommand(_ command: CustomCommand) throws {
        try withOpenContents { contents throws(StoreError) in Self.save(command, into: &contents) }
    }

    static func save(_ command: CustomCommand, into contents: inout Contents) {
        var command = command
        command.createdAt = command.createdAt.asKeptBySQLite
        contents.customCommands.save(command, team: command.team, name: command.name) {
            $0.template = command.template
        }
    }

    public func customCommand(team: String, name: String) throws -> CustomCommand? {
        try withOpenContents { $0.customCommands.item(team: team, name: name) }
    }

    /// All custom commands of a team, ordered by name.
    public func customCommands(team: String) throws -> [CustomCommand] {
        try withOpenContents { $0.customCommands.items(team: team) }
    }

    public func deleteCustomCommand(team: String, name: String) throws -> Bool {
        try withOpenContents { $0.customCommands.delete(team: team, name: name) }
    }

    // MARK: Settings

    /// The settings stored for one scope; empty settings when none are stored.
    public func settings(_ scope: SettingsScope) throws -> Settings {
        try withOpenContents { $0.settings[Self.key(scope)] ?? Settings() }
    }

    /// Stores exactly `settings` for the scope; empty settings remove the scope's entry.
    public func saveSettings(_ settings: Settings, for scope: SettingsScope) throws {
        try withOpenContents { contents throws(StoreError) in Self.save(settings, for: scope, into: &contents) }
    }

    static func save(_ settings: Settings, for scope: SettingsScope, into contents: inout Contents) {
        contents.settings[key(scope)] = settings.isEmpty ? nil : settings
    }

    /// The strictest of the default, the user's and the channel's retention in a team, as SQLite's
    /// purges read it (`SQLiteStore.retained`).
    static func retention(
        team: String, user: String, channel: String, settings: [[ExactText]: Settings], defaultRetention: Retention
    ) -> Retention {
        let own = settings[key(.user(team: team, user: user))]?.retention
        let channel = settings[key(.channel(team: team, channel: channel))]?.retention
        return [own, channel].compactMap { $0 }.reduce(defaultRetention) { $0.stricter($1) }
    }

    static func key(_ scope: SettingsScope) -> [ExactText] {
        switch scope {
        case .user(let team, let user): [ExactText("user"), ExactText(team), ExactText(user)]
        case .channel(let team, let channel): [ExactText("channel"), ExactText(team), ExactText(channel)]
        case .team(let platform, let team): [ExactText("team"), ExactText(team), ExactText(platform)]
        }
    }

    // MARK: History

    /// Appends a finished run. What the entry holds is what is kept: the caller applies retention.
    public func recordRun(_ entry: HistoryEntry) throws {
        try withOpenContents { contents throws(StoreError) in try Self.insert(entry, into: &contents) }
    }

    /// Writes what a run keeps, all or nothing; returns the ids of its fact-checks.
    public func record(_ run: RunRecord) throws -> [Int64] {
        try withOpenContents { contents throws(StoreError) in
            var changed = contents
            let ids = try Self.insert(run, into: &changed)
            contents = changed
            return ids
        }
    }

    /// A run's record into `contents`; the ids its fact-checks got. The team's data changes
    /// first, in order, as SQLite's `insert(_:ledger:_:_:)` does.
    static func insert(_ run: RunRecord, into contents: inout Contents) throws(StoreError) -> [Int64] {
        for change in run.changes { apply(change, to: &contents) }
        if let history = run.history { try insert(history, into: &contents) }
        contents.modelCalls += run.usage?.records ?? []
        return run.ledger.map { insert($0, into: &contents) }
    }

    /// A NaN is kept as SQLite keeps it, as NULL: a NaN agreement reads back as none, and a NaN
    /// elapsed time is refused like any missing required value.
    static func insert(_ entry: HistoryEntry, into contents: inout Contents) throws(StoreError) {
        var entry = entry
        entry.createdAt = entry.createdAt.asKeptBySQLite
        if entry.agreement?.isNaN == true { entry.agreement = nil }
        guard !entry.elapsed.isNaN else {
            throw .operationFailed(
                operation: "record a \(entry.command) run in team \(entry.team)",
                reason: "NOT NULL constraint failed: history.elapsed")
        }
        contents.history[[ExactText(entry.team), ExactText(entry.user)], default: []].append(entry)
    }

    /// A user's newest runs in a team, newest first (runs recorded with the same time: the later
    /// recorded first); at most `limit`, none when `limit` is not positive.
    public func history(team: String, user: String, limit: Int) throws -> [HistoryEntry] {
        guard limit > 0 else { return [] }
        return try withOpenContents { contents throws(StoreError) in
            let runs = contents.history[[ExactText(team), ExactText(user)]] ?? []
            let newestFirst = runs.indices.sorted { left, right in
                runs[left].createdAt == runs[right].createdAt
                    ? left > right : runs[left].createdAt > runs[right].createdAt
            }
            return newestFirst.prefix(limit).map { runs[$0] }
        }
    }

    public func modelCostDays(platform: String, team: String, from: Date, to: Date) throws -> [ModelCostDay] {
        try withOpenContents { contents throws(StoreError) in
            let days = RunCount.days(touching: from, to)
            var totals: [String: ModelCostDay] = [:]
            for call in contents.modelCalls
            where ExactText(call.platform) == ExactText(platform) && ExactText(call.team) == ExactText(team) && days.contains(RunCount.dayNumber(of: call.at)) {
                let day = RunCount.day(of: call.at)
                let key = "\(day.timeIntervalSince1970) \(call.model)"
                var total = totals[key] ?? ModelCostDay(day: day, model: call.model, calls: 0, cost: 0, unpriced: 0, estimated: 0)
                total.calls += 1
                total.cost += call.cost ?? 0
                if call.cost == nil { total.unpriced += 1 }
                if call.estimated { total.estimated += 1 }
                totals[key] = total
            }
            return Array(totals.values)
        }
    }

    public func runCounts(team: String, from: Date, to: Date) throws -> [RunCount] {
        try withOpenContents { contents throws(StoreError) in
            var counts: [RunCount: Int] = [:]
            let days = RunCount.days(touching: from, to)
            for (key, runs) in contents.history where key.first == ExactText(team) {
                for run in runs where days.contains(RunCount.dayNumber(of: run.createdAt)) {
                    let key = RunCount(day: RunCount.day(of: run.createdAt), command: run.command, succeeded: run.succeeded, failure: run.failure, count: 0)
                    counts[key, default: 0] += 1
                }
            }
            return counts.map { key, count in
                var point = key
                point.count = count
                return point
            }
        }
    }

    public func connectionsReport() throws -> ConnectionsReport {
        try withOpenContents { contents throws(StoreError) in
            let byPlatform = Dictionary(grouping: contents.outbox.values, by: \.entry.platform)
            let activity = byPlatform.keys.sorted().map { platform in
                let records = byPlatform[platform] ?? []
                let newestError = records.filter { $0.entry.lastError != nil }.max { $0.precedes($1) }
                return ConnectionsReport.Activity(
                    platform: platform, lastQueued: records.map(\.entry.createdAt).max(), lastError: newestError?.entry.lastError,
                    lastErrorQueued: newestError?.entry.createdAt, pending: records.filter { $0.entry.state == .pending }.count)
            }
            let leases = contents.leases.keys.sorted().map { name in
                ConnectionsReport.Lease(name: name.text, holder: contents.leases[name]?.holder, expiresAt: contents.leases[name]?.expiresAt)
            }
            return ConnectionsReport(activity: activity, leases: leases)
        }
    }

    /// Deletes all of a user's runs in a team; returns how many there were.
    public func clearHistory(team: String, user: String) throws -> Int {
        try withOpenContents { contents throws(StoreError) in Self.clearHistory(team: team, user: user, in: &contents) }
    }

    static func clearHistory(team: String, user: String, in contents: inout Contents) -> Int {
        contents.history.removeValue(forKey: [ExactText(team), ExactText(user)])?.count ?? 0
    }

    /// How many runs a user has in a team's history, and how many fact-checks they asked.
    public func keptCount(team: String, user: String) throws -> (history: Int, factChecks: Int) {
        try withOpenContents { contents throws(StoreError) in
            let history = contents.history[[ExactText(team), ExactText(user)]]?.count ?? 0
            let checks = contents.ledger.values.count { ExactText($0.team) == ExactText(team) && ExactText($0.user) == ExactText(user) }
            return (history, checks)
        }
    }

    /// One change a command asked of the team's data, as a step of the run's end.
    static func apply(_ change: TeamChange, to contents: inout Contents) {
        switch change {
        case .saveSettings(let settings, let scope): save(settings, for: scope, into: &contents)
        case .saveCustomCommand(let command): save(command, into: &contents)
        case .deleteCustomCommand(let team, let name): _ = contents.customCommands.delete(team: team, name: name)
        case .saveChain(let chain): save(chain, into: &contents)
        case .deleteChain(let team, let name): _ = contents.chains.delete(team: team, name: name)
        case .markLedger(let team, let id, let mark): _ = markLedger(team: team, id: id, mark: mark, in: &contents)
        case .forget(let team, let user):
            _ = clearHistory(team: team, user: user, in: &contents)
            _ = clearLedger(team: team, user: user, in: &contents)
        case .grantAdmin(let grant):
            let key = [ExactText(grant.platform), ExactText(grant.team)]
            if contents.adminGrants[key, default: []].contains(where: { ExactText($0.user) == ExactText(grant.user) }) { break }
            contents.adminGrants[key, default: []].append(grant)
        case .revokeAdmin(let platform, let team, let user):
            contents.adminGrants[[ExactText(platform), ExactText(team)]]?.removeAll { ExactText($0.user) == ExactText(user) }
        }
    }

    /// Deletes runs older than `before` and those whose effective retention is `off`; drops the
    /// texts of those under `metadata`. Returns how many runs were deleted.
    public func purgeHistory(before: Date, defaultRetention: Retention) throws -> Int {
        let before = before.asKeptBySQLite
        return try withOpenContents { contents throws(StoreError) in
            let settings = contents.settings
            func retention(_ run: HistoryEntry) -> Retention {
                Self.retention(team: run.team, user: run.user, channel: run.channel, settings: settings, defaultRetention: defaultRetention)
            }
            var deleted = 0
            for (key, runs) in contents.history {
                var kept: [HistoryEntry] = []
                for var run in runs {
                    let kind = retention(run)
                    if run.createdAt < before || kind == .off {
                        deleted += 1
                        continue
                    }
                    if kind == .metadata {
                        run.commandLine = nil
                        run.resultText = nil
                    }
                    kept.append(run)
                }
                contents.history[key] = kept.isEmpty ? nil : kept
            }
            return deleted
        }
    }

    // MARK: Dedupe

    /// Claims an inbound event key: true the first time, false while an unexpired claim exists, true
    /// again once it has expired (a claim expires when `now` reaches its `expiresAt`). Expired
    /// claims of every key are purged first.
    public func claimEvent(key: String, expiresAt: Date, now: Date) throws -> Bool {
        let (expiresAt, now) = (expiresAt.asKeptBySQLite, now.asKeptBySQLite)
        return try withOpenContents { contents throws(StoreError) in
            contents.dedupe = contents.dedupe.filter { $0.value > now }
            guard contents.dedupe[ExactText(key)] == nil else { return false }
            contents.dedupe[ExactText(key)] = expiresAt
            return true
        }
    }

    public func isClaimed(key: String, now: Date) throws -> Bool {
        let now = now.asKeptBySQLite
        return try withOpenContents { contents throws(StoreError) in (contents.dedupe[ExactText(key)] ?? .distantPast) > now }
    }

    public func purgeExpiredClaims(now: Date) throws {
        let now = now.asKeptBySQLite
        try withOpenContents { contents throws(StoreError) in
            contents.dedupe = contents.dedupe.filter { $0.value > now }
        }
    }
}

/// Text compared as SQLite compares it (the BINARY collation: byte by byte, in UTF-8).
///
/// A `String` key would not do: Swift's string equality is canonical equivalence, which merges
/// names SQLite keeps apart (a precomposed "é" and "e" with a combining accent), and its ordering
/// differs from SQLite's outside ASCII.
struct ExactText: Hashable, Comparable, Sendable {
    let text: String

    init(_ text: String) {
        self.text = text
    }

    static func == (left: ExactText, right: ExactText) -> Bool {
        left.text.utf8.elementsEqual(right.text.utf8)
    }

    static func < (left: ExactText, right: ExactText) -> Bool {
        left.text.utf8.lexicographicallyPrecedes(right.text.utf8)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(text.utf8.count)
        for byte in text.utf8 {
            hasher.combine(byte)
        }
    }
}

/// Items saved per team under a name (chains, custom commands), listed by name.
struct TeamShelf<Item: Sendable>: Sendable {
    private var teams: [ExactText: [ExactText: Item]] = [:]

    func item(team: String, name: String) -> Item? {
        teams[ExactText(team)]?[ExactText(name)]
    }

    /// The team's items ordered by name, byte by byte as SQLite orders them.
    func items(team: String) -> [Item] {
        (teams[ExactText(team)] ?? [:]).sorted { $0.key < $1.key }.map(\.value)
    }

    /// Inserts `item`, or applies `update` to the item already saved under that name.
    mutating func save(_ item: Item, team: String, name: String, update: (inout Item) -> Void) {
        let (team, name) = (ExactText(team), ExactText(name))
        if teams[team]?[name] != nil {
            update(&teams[team]![name]!)
        } else {
            teams[team, default: [:]][name] = item
        }
    }

    mutating func delete(team: String, name: String) -> Bool {
        let (team, name) = (ExactText(team), ExactText(name))
        guard teams[team]?.removeValue(forKey: name) != nil else { return false }
        if teams[team]?.isEmpty == true { teams[team] = nil }
        return true
    }
}

extension Date {
    /// This instant as SQLiteStore reads it back: it keeps dates as unix seconds in a Double, and
    /// the conversion can move a date by a rounding step. Dates kept in that form here compare and
    /// read back exactly as they do there.
    var asKeptBySQLite: Date {
        Date(timeIntervalSince1970: timeIntervalSince1970)
    }
}
