import RelayCore
public import RelayPipeline

public import struct Foundation.Date

extension MemoryStore {
    /// Writes a new entry as given. An id that is already in the outbox is refused rather than
    /// overwritten, with the same error SQLiteStore gives: ids are idempotency keys.
    public func enqueue(_ entry: OutboxEntry) throws {
        let prepared = try Self.prepared(entry)
        try withOpenContents { contents throws(StoreError) in try Self.insert(prepared, into: &contents) }
    }

    /// The entry as SQLiteStore would keep it: dates as SQLite keeps them, content through the
    /// JSON it is stored as (content it cannot encode is refused here too).
    static func prepared(_ entry: OutboxEntry) throws(StoreError) -> OutboxEntry {
        var entry = entry
        entry.nextAttemptAt = entry.nextAttemptAt.asKeptBySQLite
        entry.createdAt = entry.createdAt.asKeptBySQLite
        do {
            entry.content = try OutboxContentCoding.decode(OutboxContentCoding.encode(entry.content))
        } catch {
            throw .operationFailed(operation: "enqueue outbox entry \(entry.id)", reason: StoreError.reason(for: error))
        }
        return entry
    }

    static func insert(_ entry: OutboxEntry, into contents: inout Contents) throws(StoreError) {
        let operation = "enqueue outbox entry \(entry.id)"
        try checkAttempts(entry.attempts, operation: operation)
        let id = ExactText(entry.id)
        guard contents.outbox[id] == nil else {
            throw .operationFailed(operation: operation, reason: "an entry with this id already exists")
        }
        contents.outbox[id] = OutboxRecord(entry: entry, sequence: contents.nextSequence)
        contents.nextSequence += 1
    }

    /// Leases up to `limit` due entries until `leaseUntil` and returns them, oldest first; none when
    /// `limit` is not positive.
    ///
    /// A conversation's candidate is its oldest pending entry (by `createdAt`, then enqueue order),
    /// whether or not that one is due or leased: while it waits, the conversation's later entries
    /// wait behind it.
    public func claimDueOutbox(now: Date, leaseUntil: Date, limit: Int, excluding: Set<String>) throws -> [OutboxEntry] {
        guard limit > 0 else { return [] }
        let (now, leaseUntil) = (now.asKeptBySQLite, leaseUntil.asKeptBySQLite)
        return try withOpenContents { contents throws(StoreError) in
            // A scan per claim: the outbox holds a backlog of replies, not a database, and a scan
            // cannot drift from the entries the way a separate index could. Heads are picked before
            // the due and lease filters, so a waiting head holds back its conversation.
            var heads: [ExactText: OutboxRecord] = [:]
            for record in contents.outbox.values where record.entry.state == .pending {
                let conversation = ExactText(record.entry.conversation)
                if let head = heads[conversation], head.precedes(record) { continue }
                heads[conversation] = record
            }
            let claimed = heads.values
                .filter { $0.entry.nextAttemptAt <= now && ($0.leasedUntil.map { $0 < now } ?? true) }
                .filter { !excluding.contains($0.entry.platform) }
                .sorted { $0.precedes($1) }
                .prefix(limit)
            for record in claimed {
                contents.outbox[ExactText(record.entry.id)]?.leasedUntil = leaseUntil
            }
            return claimed.map(\.entry)
        }
    }

    /// Delivered: state sent and the platform's message id kept, lease dropped. `at` is not kept:
    /// SQLiteStore writes it to a column that nothing reads back.
    public func markSent(id: String, platformRef: String?, at: Date) throws {
        try update(id: id, operation: "mark outbox entry \(id) sent") { record in
            record.entry.state = .sent
            record.entry.platformRef = platformRef ?? record.entry.platformRef
        }
    }

    /// One more part accepted: the count and (the first time) the message id kept, attempts
    /// started over, due again at `nextAttemptAt`; lease dropped.
    public func markPartDelivered(id: String, parts: Int, platformRef: String?, nextAttemptAt: Date) throws {
        let operation = "record a delivered part of outbox entry \(id)"
        guard parts >= 0 else { throw StoreError.operationFailed(operation: operation, reason: "CHECK constraint failed: parts_delivered >= 0") }
        try update(id: id, operation: operation) { record in
            record.entry.partsDelivered = parts
            record.entry.attempts = 0
            record.entry.platformRef = record.entry.platformRef ?? platformRef
            record.entry.nextAttemptAt = nextAttemptAt.asKeptBySQLite
        }
    }

    /// Not delivered yet: records the attempts and the error, retries at `nextAttemptAt`, drops the
    /// lease. The state is left as it is.
    public func reschedule(id: String, attempts: Int, nextAttemptAt: Date, lastError: String) throws {
        try update(id: id, operation: "reschedule outbox entry \(id)", attempts: attempts) { record in
            record.entry.attempts = attempts
            record.entry.nextAttemptAt = nextAttemptAt.asKeptBySQLite
            record.entry.lastError = lastError
        }
    }

    /// Given up: state failed, with the attempts and the reason; lease dropped.
    public func markFailed(id: String, attempts: Int, lastError: String) throws {
        try update(id: id, operation: "mark outbox entry \(id) failed", attempts: attempts) { record in
            record.entry.state = .failed
            record.entry.attempts = attempts
            record.entry.lastError = lastError
        }
    }

    /// The entry with this id, in any state; nil when there is none.
    public func outboxEntry(id: String) throws -> OutboxEntry? {
        try withOpenContents { $0.outbox[ExactText(id)]?.entry }
    }

    /// Pending entries, leased or not: the outbox depth.
    public func pendingOutboxCount() throws -> Int {
        try withOpenContents { $0.outbox.values.count(where: { $0.entry.state == .pending }) }
    }

    /// Drops every lease.
    public func releaseOutboxLeases() throws {
        try withOpenContents { contents throws(StoreError) in
            for id in contents.outbox.keys {
                contents.outbox[id]?.leasedUntil = nil
            }
        }
    }

    /// Deletes sent and failed entries created before `before`; pending ones are kept whatever
    /// their age.
    public func purgeOutbox(before: Date) throws {
        let before = before.asKeptBySQLite
        try withOpenContents { contents throws(StoreError) in
            contents.outbox = contents.outbox.filter { $0.value.entry.state == .pending || $0.value.entry.createdAt >= before }
        }
    }

    /// Applies `change` to the entry with this id and drops its lease; an id with no entry is an
    /// error, as in SQLiteStore (the caller acts on an entry it believes exists).
    private func update(
        id: String, operation: String, attempts: Int? = nil, _ change: (inout OutboxRecord) -> Void
    ) throws {
        try withOpenContents { contents throws(StoreError) in
            let id = ExactText(id)
            guard contents.outbox[id] != nil else {
                throw .operationFailed(operation: operation, reason: "no outbox entry has this id")
            }
            if let attempts { try Self.checkAttempts(attempts, operation: operation) }
            change(&contents.outbox[id]!)
            contents.outbox[id]!.leasedUntil = nil
        }
    }

    /// SQLite's outbox table refuses a negative attempt count; so does this store, in the same words.
    private static func checkAttempts(_ attempts: Int, operation: String) throws(StoreError) {
        guard attempts >= 0 else {
            throw .operationFailed(operation: operation, reason: "CHECK constraint failed: attempts >= 0")
        }
    }
}

/// An outbox entry with what the store keeps beside it.
struct OutboxRecord: Sendable {
    var entry: OutboxEntry
    /// Enqueue order: it decides between entries created at the same instant.
    let sequence: Int
    var leasedUntil: Date? = nil

    /// Delivery order: oldest first, then first enqueued.
    func precedes(_ other: OutboxRecord) -> Bool {
        (entry.createdAt, sequence) < (other.entry.createdAt, other.sequence)
    }
}
