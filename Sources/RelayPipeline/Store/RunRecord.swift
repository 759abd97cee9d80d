public import RelayCore
import Synchronization

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
