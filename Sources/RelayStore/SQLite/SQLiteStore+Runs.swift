public import Foundation
import Logging
public import RelayCore
public import RelayPipeline
import SQLiteNIO

extension SQLiteStore {
    /// Claims the dedupe key (when given) and inserts the item, in one operation of the writer:
    /// concurrent admissions share a commit, and the caller returns only once it is committed.
    public func admit(
        _ event: Event, route: ReplyRoute, dedupeKey: String?, expiresAt: Date, now: Date, leaseUntil: Date?, budget: BudgetHold?
    ) async throws -> Admitted? {
        var event = event
        event.eventKey = nil
        let encoded = try InboxEventCoding.encode(event)
        let team = event.team
        return try await perform("accept an event from \(route.platform) into the inbox") { db -> Admitted? in
            if let dedupeKey, try !Self.claim(key: dedupeKey, expiresAt: expiresAt, now: now, db) { return nil }
            // The writer is the file's only one: the look and the hold cannot interleave with another's.
            var decision = BudgetAdmission.unchecked
            if let budget {
                let standing = try Self.standing(platform: budget.platform, team: budget.team, from: budget.month.start, to: budget.month.end, db)
                let own = try db.query(
                    "SELECT budget FROM settings WHERE scope_kind = 'team' AND team = ? AND subject = ?", [.text(budget.team), .text(budget.platform)]
                ).first?.optionalDouble("budget")
                decision = budget.decision(limit: own ?? budget.defaultLimit, spent: standing.spent, reserved: standing.reserved)
            }
            let reserved = decision == .within ? budget?.reserve ?? 0 : 0
            let row = try db.query(
                """
                INSERT INTO inbox (team, platform, conversation, address, event, accepted_at, leased_until, turn, reserved, over_budget)
                VALUES (?, ?, ?, ?, ?, ?, ?,
                    MAX(IFNULL((SELECT MAX(turn) FROM inbox WHERE team = ?), 0) + 1, IFNULL((SELECT MIN(turn) FROM inbox), 0)), ?, ?)
                RETURNING id
                """,
                [
                    .text(team), .text(route.platform), .text(route.conversation), .text(route.address), .text(encoded), .date(now),
                    leaseUntil.map { .date($0) } ?? .null, .text(team), .float(reserved), .integer(decision == .over ? 1 : 0),
                ]
            ).first
            return try row.map { Admitted(id: Int64(try $0.int("id")), budget: InboxItem.budget(over: decision == .over, reserved: reserved)) }
        }
    }

    public func budgetStanding(platform: String, team: String, from: Date, to: Date) async throws -> BudgetStanding {
        try await perform("read the budget of team \(team) on \(platform)") { db in try Self.standing(platform: platform, team: team, from: from, to: to, db) }
    }

    /// The month's spend and what the team's items hold, for a look inside the writer.
    static func standing(platform: String, team: String, from: Date, to: Date, _ db: Database) throws -> BudgetStanding {
        // Whole days from their totals (a month is a few dozen rows however busy the team), the
        // part-days at either end call by call.
        let days = RunCount.days(within: from, to)
        let edges: [(Date, Date)] =
            days.isEmpty
            ? [(from, to)]
            : [(from, Date(timeIntervalSince1970: Double(days.lowerBound) * 86_400)), (Date(timeIntervalSince1970: Double(days.upperBound) * 86_400), to)]
        var spent =
            try db.query(
                "SELECT IFNULL(SUM(cost), 0.0) AS spent FROM model_call_days WHERE platform = ? AND team = ? AND day >= ? AND day < ?",
                [.text(platform), .text(team), .integer(days.lowerBound), .integer(days.upperBound)]
            ).first?.double("spent") ?? 0
        for (start, end) in edges where start < end {
            spent +=
                try db.query(
                    "SELECT IFNULL(SUM(cost), 0.0) AS spent FROM model_calls WHERE platform = ? AND team = ? AND at >= ? AND at < ?",
                    [.text(platform), .text(team), .date(start), .date(end)]
                ).first?.double("spent") ?? 0
        }
        let reserved =
            try db.query(
                "SELECT IFNULL(SUM(reserved), 0.0) AS reserved FROM inbox WHERE platform = ? AND team = ?", [.text(platform), .text(team)]
            ).first?.double("reserved") ?? 0
        return BudgetStanding(spent: spent, reserved: reserved)
    }

    /// Leases waiting items in turn order, in one operation; an item whose event does not decode
    /// is removed and logged, and the claim looks again.
    public func claimInbox(now: Date, leaseUntil: Date, limit: Int) async throws -> [InboxItem] {
        guard limit > 0 else { return [] }
        let logger = logger
        return try await perform("claim waiting inbox items") { db in
            while true {
                let rows = try db.query(
                    "SELECT * FROM inbox WHERE leased_until IS NULL OR leased_until < ? ORDER BY turn, id LIMIT ?",
                    [.date(now), .integer(SQLiteInt64(limit))])
                var items: [InboxItem] = []
                var unreadable: [Int64] = []
                for row in rows {
                    do {
                        items.append(try InboxItem(stored: row))
                    } catch StoreError.unreadableInboxItem(let id, let reason) {
                        logger.error("an inbox item cannot be read and is removed", metadata: ["inbox.id": "\(id)", "reason": "\(reason)"])
                        unreadable.append(id)
                    }
                }
                if !unreadable.isEmpty {
                    try db.query(inList: "DELETE FROM inbox WHERE id IN ({list})", unreadable.map { .integer(SQLiteInt64($0)) })
                    continue
                }
                if !items.isEmpty {
                    try db.query(
                        inList: "UPDATE inbox SET leased_until = ? WHERE id IN ({list})", leading: [.date(leaseUntil)],
                        items.map { .integer(SQLiteInt64($0.id)) })
                }
                return items
            }
        }
    }

    public func waitingInboxCount(now: Date) async throws -> Int {
        try await perform("count waiting inbox items") { db in
            try db.query("SELECT count(*) AS n FROM inbox WHERE leased_until IS NULL OR leased_until < ?", [.date(now)]).first?.int("n") ?? 0
        }
    }

    public func inboxQueue() async throws -> [InboxTicket] {
        try await perform("read the inbox") { db in
            try db.query("SELECT id, team FROM inbox ORDER BY id").map { InboxTicket(id: Int64(try $0.int("id")), team: try $0.text("team")) }
        }
    }

    /// Removes the item, writes the run's record and enqueues the replies in one operation:
    /// after a crash either all of it happened or none (and the run runs again). A reply with no
    /// pending entry before it in its conversation is leased as it is written, when `leaseUntil`
    /// is given, and returned. An item that is gone was finished already: nothing is written.
    @discardableResult
    public func finishRun(id: Int64, record: RunRecord, replies: [OutboxEntry], leaseUntil: Date?) async throws -> [OutboxEntry] {
        let ledger = try record.ledger.map(LedgerRow.init)
        // A reply that names a fact-check is encoded once the fact-check has its number.
        let numbers = record.numberedByReply != nil
        let rows = numbers ? [] : try replies.map { try OutboxRow($0) }
        let cache = cache
        return try await perform("finish the run of inbox item \(id)") { db in
            guard try !db.query("DELETE FROM inbox WHERE id = ? RETURNING id", [.integer(SQLiteInt64(id))]).isEmpty else {
                throw StoreError.leaseLost(id: id)
            }
            let ledgerIDs = try Self.insert(record, ledger: ledger, cache, db)
            let replies = numbers ? replies.map { record.numbered($0, ledgerIDs: ledgerIDs) } : replies
            let rows = numbers ? try replies.map { try OutboxRow($0) } : rows
            var handed: [OutboxEntry] = []
            for (reply, row) in zip(replies, rows) {
                if let leaseUntil, try Self.isIdle(conversation: reply.conversation, db) {
                    try Self.insert(row, leasedUntil: leaseUntil, db)
                    handed.append(reply)
                } else {
                    try Self.insert(row, db)
                }
            }
            return handed
        }
    }

    public func dropInboxItem(id: Int64) async throws -> Bool {
        try await perform("remove inbox item \(id)") { db in
            try !db.query("DELETE FROM inbox WHERE id = ? RETURNING id", [.integer(SQLiteInt64(id))]).isEmpty
        }
    }

    /// Drops every inbox lease: this store has one process per file, so at start any lease left
    /// in it belongs to a process that is gone.
    public func releaseInboxLeases() async throws {
        try await perform("release inbox leases") { db in
            _ = try db.query("UPDATE inbox SET leased_until = NULL WHERE leased_until IS NOT NULL")
        }
    }

    public func renewLeases(inbox: [Int64], outbox: [String], until: Date) async throws {
        guard !inbox.isEmpty || !outbox.isEmpty else { return }
        try await perform("renew the leases of work in flight") { db in
            if !inbox.isEmpty {
                try db.query(
                    inList: "UPDATE inbox SET leased_until = ? WHERE leased_until IS NOT NULL AND id IN ({list})", leading: [.date(until)],
                    inbox.map { .integer(SQLiteInt64($0)) })
            }
            if !outbox.isEmpty {
                try db.query(
                    inList: "UPDATE outbox SET leased_until = ? WHERE state = 'pending' AND leased_until IS NOT NULL AND id IN ({list})",
                    leading: [.date(until)], outbox.map { .text($0) })
            }
        }
    }

    /// One process per file: nobody else writes work for this one.
    public func watchForWork(_ wake: @escaping @Sendable (StoreWork) -> Void) {}
}

// What a run keeps: its history row and its fact-checks, written with its end (`finishRun`) or
// on their own.
extension SQLiteStore {
    /// Appends a finished run. What the entry holds is what is kept: the caller applies retention.
    public func recordRun(_ entry: HistoryEntry) async throws {
        try await perform("record a \(entry.command) run in team \(entry.team)") { db in try Self.insert(entry, db) }
    }

    /// Writes what a run keeps, in one operation; returns the ids of its fact-checks.
    public func record(_ run: RunRecord) async throws -> [Int64] {
        let ledger = try run.ledger.map(LedgerRow.init)
        let cache = cache
        return try await perform("record a run in team \(run.history?.team ?? run.ledger.first?.team ?? "")") { db in
            try Self.insert(run, ledger: ledger, cache, db)
        }
    }

    /// The rows of a run's record; the ids its fact-checks got. The team's data changes first,
    /// in order, so a `/history clear` keeps the row of its own run.
    static func insert(_ run: RunRecord, ledger: [LedgerRow], _ cache: ReadCache, _ db: Database) throws -> [Int64] {
        for change in run.changes { try apply(change, cache, db) }
        if let history = run.history { try insert(history, db) }
        for call in run.usage?.records ?? [] { try insert(call, db) }
        return try ledger.map { try insert($0, db) }
    }

    /// One change a command asked of the team's data, as a step of the run's end.
    static func apply(_ change: TeamChange, _ cache: ReadCache, _ db: Database) throws {
        switch change {
        case .saveSettings(let settings, let scope): try save(settings, for: scope, cache, db)
        case .saveCustomCommand(let command): try save(command, cache, db)
        case .deleteCustomCommand(let team, let name): _ = try deleteCustomCommand(team: team, name: name, cache, db)
        case .saveChain(let chain): try save(chain, db)
        case .deleteChain(let team, let name): _ = try deleteChain(team: team, name: name, db)
        case .markLedger(let team, let id, let mark): _ = try markLedger(team: team, id: id, mark: mark, db)
        case .forget(let team, let user):
            _ = try clearHistory(team: team, user: user, db)
            _ = try clearLedger(team: team, user: user, db)
        case .grantAdmin(let grant): try insert(grant, db)
        case .revokeAdmin(let platform, let team, let user): try revokeAdmin(platform: platform, team: team, user: user, db)
        }
    }

    static func insert(_ entry: HistoryEntry, _ db: Database) throws {
        _ = try db.query(
            """
            INSERT INTO history (team, user, channel, command, command_line, result_text, succeeded,
                agreement, models_answered, models_asked, elapsed, created_at, verdict, score_meaning, agreeing, failure)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(entry.team), .text(entry.user), .text(entry.channel), .text(entry.command),
                .text(orNull: entry.commandLine), .text(orNull: entry.resultText),
                .integer(entry.succeeded ? 1 : 0), .float(orNull: entry.agreement),
                .integer(orNull: entry.modelsAnswered), .integer(orNull: entry.modelsAsked),
                .float(entry.elapsed), .date(entry.createdAt), .text(orNull: entry.verdict?.rawValue),
                .text(orNull: entry.scoreMeaning?.rawValue), .integer(orNull: entry.agreeing), .text(orNull: entry.failure),
            ])
    }

    /// Records a consensus; returns its id.
    @discardableResult
    public func recordConsensus(_ entry: LedgerEntry) async throws -> Int64 {
        let row = try LedgerRow(entry)
        return try await perform("record a consensus in the ledger of team \(entry.team)") { db in try Self.insert(row, db) }
    }

    /// Inserts a ledger row; returns its id.
    static func insert(_ row: LedgerRow, _ db: Database) throws -> Int64 {
        let rows = try db.query(
            """
            INSERT INTO ledger (team, user, channel, origin, claim, answer, verdict, score, score_meaning, answered, asked,
                judges, backend, prompts_version, created_at, mark_verdict, marked_by, marked_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
            """, row.binds)
        return Int64(try rows[0].int("id"))
    }
}

/// A ledger entry's values, bound before the writer runs (its judges encoded as JSON).
struct LedgerRow: Sendable {
    let binds: [SQLiteData]

    init(_ entry: LedgerEntry) throws {
        let entry = entry.storable
        let judges = try LedgerJudgesCoding.encode(entry.judges)
        binds = [
            .text(entry.team), .text(entry.user), .text(entry.channel), .text(entry.origin.rawValue),
            .text(orNull: entry.claim), .text(orNull: entry.answer), .text(orNull: entry.verdict?.rawValue),
            .float(entry.score), .text(entry.scoreMeaning.rawValue), .integer(entry.answered), .integer(entry.asked),
            .text(judges), .text(entry.backend), .text(orNull: entry.promptsVersion), .date(entry.createdAt),
            .text(orNull: entry.mark?.verdict.rawValue), .text(orNull: entry.mark?.user), entry.mark.map { .date($0.markedAt) } ?? .null,
        ]
    }
}

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

    public func isClaimed(key: String, now: Date) async throws -> Bool {
        try await perform("read event key \(key)") { db in
            try !db.query("SELECT key FROM dedupe WHERE key = ? AND expires_at > ?", [.text(key), .date(now)]).isEmpty
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
