public import Foundation
import PostgresNIO
public import RelayCore
public import RelayPipeline

extension PostgresStore {
    /// Claims the dedupe key (when given) and inserts the item in one statement: a platform's
    /// retry that reaches another replica finds the key taken, whichever commits first. A
    /// leased item is this replica's at once; an unleased one wakes the replicas' claimers.
    /// A platform's request waits on it: it fails after ``requestTimeout``.
    public func admit(
        _ event: Event, route: ReplyRoute, dedupeKey: String?, expiresAt: Date, now: Date, leaseUntil: Date?, budget: BudgetHold?
    ) async throws -> Admitted? {
        var event = event
        event.eventKey = nil
        let encoded = PostgresJSON.withoutNUL(json: try InboxEventCoding.encode(event))
        let operation = "accept an event from \(route.platform) into the inbox"
        guard let budget else {
            // The hot path, as before budgets: one prepared statement.
            let statement = PostgresHotStatements.Admit(
                expiresAt: expiresAt.timeIntervalSince1970, dedupeKey: dedupeKey.map { PostgresJSON.withoutNUL($0) },
                acceptedAt: now.timeIntervalSince1970, team: PostgresJSON.withoutNUL(event.team), platform: route.platform,
                conversation: PostgresJSON.withoutNUL(route.conversation), address: PostgresJSON.withoutNUL(route.address), event: encoded,
                leaseUntil: leaseUntil?.timeIntervalSince1970, owner: owner)
            return try await execute(operation, statement, within: requestTimeout).first.map { Admitted(id: $0) }
        }
        let (dedupe, team) = (dedupeKey.map { PostgresJSON.withoutNUL($0) }, PostgresJSON.withoutNUL(event.team))
        let (conversation, address) = (PostgresJSON.withoutNUL(route.conversation), PostgresJSON.withoutNUL(route.address))
        let budgetTeam = PostgresJSON.withoutNUL(budget.team)
        let rows = try await query(
            operation,
            """
            SELECT admitted_id AS id, admitted_over AS over_budget, admitted_hold AS reserved FROM relay_admit_within_budget(\(expiresAt.timeIntervalSince1970), \(dedupe), \(now.timeIntervalSince1970),
                \(team), \(route.platform), \(conversation), \(address), \(encoded), \(leaseUntil?.timeIntervalSince1970), \(owner),
                \(budgetTeam), \(budget.defaultLimit), \(budget.reserve), \(budget.month.start.timeIntervalSince1970), \(budget.month.end.timeIntervalSince1970))
            """)
        return try rows.first.map {
            Admitted(id: try $0.int64("id"), budget: InboxItem.budget(over: try $0.bool("over_budget"), reserved: try $0.double("reserved")))
        }
    }

    public func budgetStanding(platform: String, team: String, from: Date, to: Date) async throws -> BudgetStanding {
        let team = PostgresJSON.withoutNUL(team)
        let row = try await query(
            "read the budget of team \(team) on \(platform)",
            """
            SELECT relay_spent(\(platform), \(team), \(from.timeIntervalSince1970), \(to.timeIntervalSince1970)) AS spent,
                (SELECT coalesce(sum(reserved), 0) FROM inbox WHERE platform = \(platform) AND team = \(team))::double precision AS reserved
            """
        ).first
        return BudgetStanding(spent: try row?.double("spent") ?? 0, reserved: try row?.double("reserved") ?? 0)
    }

    /// Leases waiting items in turn order, `FOR UPDATE SKIP LOCKED`: replicas claiming at once
    /// take different items. An item whose event does not decode is removed and logged.
    public func claimInbox(now: Date, leaseUntil: Date, limit: Int) async throws -> [InboxItem] {
        guard limit > 0 else { return [] }
        let (at, until) = (now.timeIntervalSince1970, leaseUntil.timeIntervalSince1970)
        let rows = try await query(
            "claim waiting inbox items",
            """
            WITH waiting AS (
                SELECT id FROM inbox WHERE leased_until IS NULL OR leased_until < \(at)
                ORDER BY turn, id LIMIT \(limit) FOR UPDATE SKIP LOCKED
            )
            UPDATE inbox SET leased_until = \(until), owner = \(owner) FROM waiting WHERE inbox.id = waiting.id
            RETURNING inbox.*
            """)
        var claimed: [(turn: Int64, item: InboxItem)] = []
        var unreadable: [Int64] = []
        for row in rows {
            do {
                claimed.append((try row.int64("turn"), try InboxItem(stored: row)))
            } catch StoreError.unreadableInboxItem(let id, let reason) {
                logger.error("an inbox item cannot be read and is removed", metadata: ["inbox.id": "\(id)", "reason": "\(reason)"])
                unreadable.append(id)
            }
        }
        var items = claimed.sorted { ($0.turn, $0.item.id) < ($1.turn, $1.item.id) }.map(\.item)
        if !unreadable.isEmpty {
            try await query("remove unreadable inbox items", "DELETE FROM inbox WHERE id = ANY(\(unreadable))")
            items += try await claimInbox(now: now, leaseUntil: leaseUntil, limit: limit - items.count)
        }
        return items
    }

    public func waitingInboxCount(now: Date) async throws -> Int {
        try await query(
            "count waiting inbox items",
            "SELECT count(*) AS n FROM inbox WHERE leased_until IS NULL OR leased_until < \(now.timeIntervalSince1970)"
        ).first?.int("n") ?? 0
    }

    public func inboxQueue() async throws -> [InboxTicket] {
        try await query("read the inbox", "SELECT id, team FROM inbox ORDER BY id").map {
            InboxTicket(id: try $0.int64("id"), team: try $0.text("team"))
        }
    }

    /// Drops this replica's own inbox leases (at shutdown: its unfinished runs go to the others
    /// at once). Other replicas' leases are theirs until they lapse.
    public func releaseInboxLeases() async throws {
        try await query("release inbox leases", "UPDATE inbox SET leased_until = NULL, owner = NULL WHERE owner = \(owner)")
    }

    public func renewLeases(inbox: [Int64], outbox: [String], until: Date) async throws {
        let until = until.timeIntervalSince1970
        if !inbox.isEmpty {
            try await query(
                "renew the leases of runs in flight",
                "UPDATE inbox SET leased_until = \(until) WHERE id = ANY(\(inbox)) AND owner = \(owner) AND leased_until IS NOT NULL")
        }
        if !outbox.isEmpty {
            try await query(
                "renew the leases of deliveries in flight",
                "UPDATE outbox SET leased_until = \(until) WHERE id = ANY(\(outbox)) AND owner = \(owner) AND state = 'pending' AND leased_until IS NOT NULL")
        }
    }

    /// The run's end in one call of ``PostgresFunctions/finishRun``: one round trip, unless the
    /// run changes the team's data (applied first, in the same transaction) or its reply names a
    /// fact-check (whose number is taken from the sequence first).
    @discardableResult
    public func finishRun(id: Int64, record: RunRecord, replies: [OutboxEntry], leaseUntil: Date?) async throws -> [OutboxEntry] {
        let operation = "finish the run of inbox item \(id)"
        let ledgerIDs = try await newLedgerIDs(count: record.ledger.count)
        let replies = replies.map { record.numbered($0, ledgerIDs: ledgerIDs) }
        let statement = try finishStatement(id: id, record: record, ledgerIDs: ledgerIDs, replies: replies, leaseUntil: leaseUntil)
        let handed = try await finish(operation, statement, changes: record.changes)
        return replies.filter { handed.contains($0.id) }
    }

    public func dropInboxItem(id: Int64) async throws -> Bool {
        try await !query("remove inbox item \(id)", "DELETE FROM inbox WHERE id = \(id) RETURNING id").isEmpty
    }

    /// The call of the schema's function for a run's end (no `id`: a record, or entries, alone).
    func finishStatement(
        id: Int64?, record: RunRecord, ledgerIDs: [Int64], replies: [OutboxEntry], leaseUntil: Date?
    ) throws -> PostgresHotStatements.FinishRun {
        PostgresHotStatements.FinishRun(
            item: id, owner: owner, history: record.history.map { PostgresJSON.encode(PostgresJSON.History($0).json) },
            ledger: PostgresJSON.encode(try zip(record.ledger, ledgerIDs).map { try PostgresJSON.Ledger($0, id: $1) }),
            replies: PostgresJSON.encode(try replies.map { try PostgresJSON.Outbox($0) }), leaseUntil: leaseUntil?.timeIntervalSince1970,
            usage: PostgresJSON.encode((record.usage?.records ?? []).map(PostgresJSON.ModelCall.init)))
    }

    /// Runs `call` alone, or after the run's team-data changes in one transaction; returns the
    /// ids of the replies leased to this replica.
    func finish(_ operation: String, _ call: PostgresHotStatements.FinishRun, changes: [TeamChange]) async throws -> Set<String> {
        guard !changes.isEmpty else { return Set(try await execute(operation, call).compactMap { $0 }) }
        let handed = try await transaction(operation) { connection in
            for change in changes { try await Self.apply(change, connection) }
            return try await connection.execute(call)
        }
        dropCached(for: changes)
        return Set(handed.compactMap { $0 })
    }

    /// `count` fresh ledger ids, in order (none asked: no round trip).
    func newLedgerIDs(count: Int) async throws -> [Int64] {
        guard count > 0 else { return [] }
        return try await query(
            "number \(count) fact-checks",
            "SELECT nextval(pg_get_serial_sequence('ledger', 'id')) AS id FROM generate_series(1, \(count)) ORDER BY 1"
        ).map { try $0.int64("id") }
    }
}

// What a run keeps, on its own (the terminal, `rhea-relay run`).
extension PostgresStore {
    public func recordRun(_ entry: HistoryEntry) async throws {
        _ = try await record(RunRecord(history: entry))
    }

    public func record(_ run: RunRecord) async throws -> [Int64] {
        let operation = "record a run in team \(run.history?.team ?? run.ledger.first?.team ?? "")"
        let ledgerIDs = try await newLedgerIDs(count: run.ledger.count)
        let call = try finishStatement(id: nil, record: run, ledgerIDs: ledgerIDs, replies: [], leaseUntil: nil)
        _ = try await finish(operation, call, changes: run.changes)
        return ledgerIDs
    }

    public func recordConsensus(_ entry: LedgerEntry) async throws -> Int64 {
        try await record(RunRecord(ledger: [entry]))[0]
    }
}

// Dedupe.
extension PostgresStore {
    public func claimEvent(key: String, expiresAt: Date, now: Date) async throws -> Bool {
        try await !query(
            "claim event key \(key)",
            """
            INSERT INTO dedupe (key, expires_at) VALUES (\(key), \(expiresAt.timeIntervalSince1970))
            ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at WHERE dedupe.expires_at <= \(now.timeIntervalSince1970)
            RETURNING key
            """, within: requestTimeout
        ).isEmpty
    }

    public func isClaimed(key: String, now: Date) async throws -> Bool {
        try await !query(
            "read event key \(key)", "SELECT key FROM dedupe WHERE key = \(key) AND expires_at > \(now.timeIntervalSince1970)", within: requestTimeout
        ).isEmpty
    }

    public func purgeExpiredClaims(now: Date) async throws {
        try await query("purge expired event keys", "DELETE FROM dedupe WHERE expires_at <= \(now.timeIntervalSince1970)")
    }
}
