public import RelayCore
import Synchronization

public import struct Foundation.Date

/// The durable inbox (DESIGN §6): an accepted event is committed here before the platform is
/// acknowledged, and stays until its run's reply is in the outbox — the two change in one
/// transaction — so a crash at any moment loses no acknowledged command and answers none twice.
/// Every `Store` is one.
public protocol InboxStore: Sendable {
    /// Commits an accepted event for `route` and returns its id; with `dedupeKey`, only when the
    /// key is not claimed yet (it is claimed in the same transaction until `expiresAt`) — nil
    /// then: a platform's retry of an event already accepted. The event is kept without its
    /// event key.
    func admit(_ event: Event, route: ReplyRoute, dedupeKey: String?, expiresAt: Date, now: Date) async throws -> Int64?
    /// The inbox items with these ids that are still there, in id order.
    func inboxItems(ids: [Int64]) async throws -> [InboxItem]
    /// Every item's id and team, oldest first: what is still to run (at start).
    func inboxQueue() async throws -> [InboxTicket]
    /// A run's end, in one transaction: what it keeps (`record`: its history row, its
    /// fact-checks) written, `replies` enqueued in the outbox — a reply that names a fact-check
    /// of the record gets its number (`RunRecord.numbered`) — and the item removed.
    ///
    /// With `leaseUntil`, a reply that is its conversation's only pending entry is leased until
    /// then as it is written, and returned: the caller delivers it at once, without a claim
    /// (`OutboxStore.claimDueOutbox`) finding it again. The others wait to be claimed.
    @discardableResult
    func finishRun(id: Int64, record: RunRecord, replies: [OutboxEntry], leaseUntil: Date?) async throws -> [OutboxEntry]
    /// Removes an item that cannot run (its event does not decode); returns whether it was there.
    func dropInboxItem(id: Int64) async throws -> Bool
}

/// An accepted event waiting in the inbox, or running.
public struct InboxItem: Sendable, Hashable {
    public var id: Int64
    public var event: Event
    public var route: ReplyRoute
    public var acceptedAt: Date

    public init(id: Int64, event: Event, route: ReplyRoute, acceptedAt: Date) {
        self.id = id
        self.event = event
        self.route = route
        self.acceptedAt = acceptedAt
    }
}

/// What the scheduler keeps in memory of an item waiting in the inbox: its id and its team (for
/// fairness across teams) — the event itself stays in the store.
public struct InboxTicket: Sendable, Hashable {
    public var id: Int64
    public var team: String

    public init(id: Int64, team: String) {
        self.id = id
        self.team = team
    }
}

extension InboxStore {
    /// A run's end that keeps nothing but its replies, every one left for a claim.
    public func finishRun(id: Int64, replies: [OutboxEntry]) async throws {
        try await finishRun(id: id, record: RunRecord(), replies: replies, leaseUntil: nil)
    }

    /// A run's end that keeps nothing but its replies.
    @discardableResult
    public func finishRun(id: Int64, replies: [OutboxEntry], leaseUntil: Date?) async throws -> [OutboxEntry] {
        try await finishRun(id: id, record: RunRecord(), replies: replies, leaseUntil: leaseUntil)
    }
}

/// What a run keeps besides its reply: its history row and the fact-checks it asked for.
///
/// Written in the transaction that finishes the run — with its reply into the outbox and its
/// item out of the inbox (`InboxStore.finishRun`) — so a command that asks a model costs the
/// store three writes: its admission, its run's end, its delivery's mark. (A command that changes
/// a team's data — `/chain save`, `/settings` — writes that change as it runs: one more.) A crash before that transaction keeps
/// neither the reply nor the rows, and the run runs again; never one without the other.
public struct RunRecord: Sendable, Hashable {
    /// The run, as `/history` shows it; nil when retention is `off`.
    public var history: HistoryEntry?
    /// Consensus results to keep in the team's ledger (a tribunal's, a chain's verify gates').
    public var ledger: [LedgerEntry]
    /// The entry of `ledger` the reply names (`fact-check #N` in its footer), whose number is
    /// known only once it is written: the store fills it in (`numbered`).
    public var numberedByReply: Int?

    public init(history: HistoryEntry? = nil, ledger: [LedgerEntry] = [], numberedByReply: Int? = nil) {
        self.history = history
        self.ledger = ledger
        self.numberedByReply = numberedByReply
    }

    /// Nothing to write.
    public var isEmpty: Bool { history == nil && ledger.isEmpty }

    /// `entry` with the number of the fact-check its reply names, given the ids `ledger` got.
    public func numbered(_ entry: OutboxEntry, ledgerIDs: [Int64]) -> OutboxEntry {
        guard case .reply(let reply) = entry.content else { return entry }
        var entry = entry
        entry.content = .reply(numbered(reply, ledgerIDs: ledgerIDs))
        return entry
    }

    /// `reply` with the number of the fact-check it names, given the ids `ledger` got.
    public func numbered(_ reply: Reply, ledgerIDs: [Int64]) -> Reply {
        guard let index = numberedByReply, ledgerIDs.indices.contains(index), reply.footer != nil else { return reply }
        var reply = reply
        reply.footer?.ledgerID = ledgerIDs[index]
        return reply
    }
}

/// Collects one run's record while it runs: its commands and a chain's verify gates add to it
/// from wherever they run.
final class RunRecorder: Sendable {
    private let record = Mutex(RunRecord())

    var current: RunRecord { record.withLock { $0 } }

    func keep(_ history: HistoryEntry) {
        record.withLock { $0.history = history }
    }

    /// Adds a consensus to keep; `numbersReply` when the reply is to name it.
    func keep(_ entry: LedgerEntry, numbersReply: Bool = false) {
        record.withLock { record in
            record.ledger.append(entry)
            if numbersReply { record.numberedByReply = record.ledger.count - 1 }
        }
    }
}
