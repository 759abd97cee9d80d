import Foundation
import RelayCore
import RelayPipeline
import RelayStore
import RelayTestSupport
import RelayTestTags
import Testing

/// The same long, seeded sequence of operations on every store, answer by answer: catches
/// differences in ordering and tie-breaking that the scenario tests do not think to try. SQLite is
/// the reference; the memory store and PostgreSQL must answer exactly as it does.
///
/// The script's texts are ids, conversations and fixed error words, never U+0000, so nothing is
/// left out of the comparison: PostgreSQL's one intended difference (it keeps U+FFFD where the
/// others keep U+0000) cannot show here.
@Suite("MemoryStore and PostgresStore answer as SQLiteStore does", .tags(.peers))
struct StoreEquivalenceTests {
    @Test("Outbox, dedupe and history operations give the same answers", arguments: [1, 2, 3] as [UInt64])
    func sameAnswers(seed: UInt64) async throws {
        try await withTemporaryStore { sqlite in
            try await withPostgresStore { postgres in
                let others: [(name: String, store: any Store)] = [("MemoryStore", MemoryStore()), ("PostgresStore", postgres)]
                var script = OperationScript(seed: seed)
                for step in 0..<600 {
                    let operation = script.next()
                    let expected = await operation.answer(from: sqlite)
                    for other in others {
                        let actual = await operation.answer(from: other.store)
                        try #require(actual == expected, "\(other.name), seed \(seed), step \(step): \(operation)")
                    }
                    script.observe(expected)
                }
            }
        }
    }

    @Test("Dates come back from every store as the same instants, to the last bit")
    func sameDates() async throws {
        // Instants as Date() makes them, counted from 2001: SQLite keeps unix seconds, and converting
        // rounds some of them. Without such instants this test would prove nothing.
        let dates = (0..<40).map { Date(timeIntervalSinceReferenceDate: 770_000_000 + Double($0) * 0.001_234_567) }
        #expect(dates.contains { Date(timeIntervalSince1970: $0.timeIntervalSince1970) != $0 })
        try await withTemporaryStore { sqlite in
            let fromSQLite = try await Self.saveAndRead(dates, sqlite)
            let fromMemory = try await Self.saveAndRead(dates, MemoryStore())
            #expect(fromMemory == fromSQLite)
            try await withPostgresStore { postgres in
                let fromPostgres = try await Self.saveAndRead(dates, postgres)
                #expect(fromPostgres == fromSQLite)
            }
        }
    }

    /// Everything that holds a date, as read back.
    struct DatedReads: Equatable {
        var chains: [SavedChain] = []
        var commands: [CustomCommand] = []
        var runs: [HistoryEntry] = []
        var entries: [OutboxEntry] = []
    }

    private static func saveAndRead(_ dates: [Date], _ store: any Store) async throws -> DatedReads {
        for (index, date) in dates.enumerated() {
            try await store.saveChain(
                SavedChain(
                    team: "T1", name: "c\(index)", source: "input > output", creator: "U1", createdAt: date,
                    updatedAt: date))
            try await store.saveCustomCommand(
                CustomCommand(team: "T1", name: "c\(index)", template: "{input}", creator: "U1", createdAt: date))
            try await store.recordRun(
                HistoryEntry(
                    team: "T1", user: "alice", channel: "C1", command: "fix", commandLine: nil, resultText: nil,
                    succeeded: true, elapsed: 1, createdAt: date))
            try await store.enqueue(
                OutboxEntry(
                    id: "e\(index)", platform: "slack", conversation: "C\(index)", address: "",
                    content: .progress(RunProgress(completed: 1, total: 2, block: "grammar")), nextAttemptAt: date,
                    createdAt: date))
        }
        var reads = DatedReads()
        reads.chains = try await store.chains(team: "T1")
        reads.commands = try await store.customCommands(team: "T1")
        reads.runs = try await store.history(team: "T1", user: "alice", limit: 100)
        reads.entries = try await store.claimDueOutbox(now: dates.last!, leaseUntil: dates.last!, limit: 100)
        return reads
    }
}

/// What an operation answered, comparable across stores.
enum StoreAnswer: Equatable {
    case done
    case ids([String])
    case entry(OutboxEntry?)
    case count(Int)
    case claimed(Bool)
    case runs([HistoryEntry])
    case failed(String)
}

/// One store operation, with the arguments drawn for it.
struct StoreOperation: CustomStringConvertible {
    let description: String
    let run: @Sendable (any Store) async throws -> StoreAnswer

    func answer(from store: any Store) async -> StoreAnswer {
        do {
            return try await run(store)
        } catch {
            return .failed(String(describing: error))
        }
    }
}

/// Draws operations that keep the outbox moving: new entries, claims, outcomes for the entries
/// last claimed, and now and then a duplicate, an unknown id or a negative attempt count.
///
/// Times are whole tenths of a second past ``instant()``, converted only at the end: few enough
/// instants that ties are common (equal times are equal doubles), and fractions, so dates go
/// through the same rounding in both stores.
struct OperationScript {
    private var random: SplitMix64
    private var tenths = 0
    private var enqueued = 0
    /// The entries the last non-empty claim returned.
    private var claimed: [String] = []

    init(seed: UInt64) {
        random = SplitMix64(seed: seed)
    }

    /// Feeds back the reference store's answer, so outcomes go to entries that were claimed.
    mutating func observe(_ answer: StoreAnswer) {
        if case .ids(let ids) = answer, !ids.isEmpty { claimed = ids }
    }

    mutating func next() -> StoreOperation {
        tenths += draw(0...2)
        let now = seconds(tenths)
        let later = seconds(tenths + draw(0...20))
        let earlier = seconds(tenths - draw(0...10))
        let attempts = draw(-1...3)
        switch draw(0..<17) {
        case 0..<3:
            // Now and then an id already used; creation a little in the past, so creation order
            // and enqueue order differ.
            let id = draw(0..<8) == 0 && enqueued > 0 ? "e\(enqueued - draw(1...min(5, enqueued)))" : "e\(enqueued)"
            enqueued += 1
            let entry = OutboxFixtures.entry(
                id, conversation: "C\(draw(0..<4))", created: earlier, due: draw(0...1) == 0 ? earlier : later)
            return StoreOperation(description: "enqueue \(id) in \(entry.conversation) created at \(earlier)") {
                try await $0.enqueue(entry)
                return .done
            }
        case 3..<6:
            let limit = draw(0..<10) == 0 ? -1 : draw(0...4)
            return StoreOperation(description: "claim at \(now) until \(later), limit \(limit)") {
                .ids(try await $0.claimDueOutbox(now: instant(now), leaseUntil: instant(later), limit: limit).map(\.id))
            }
        case 6..<9:
            let id = claimed.isEmpty || draw(0..<10) == 0 ? someID() : claimed[draw(0..<claimed.count)]
            switch draw(0..<3) {
            case 0:
                return StoreOperation(description: "mark \(id) sent") {
                    try await $0.markSent(id: id, platformRef: "ref-\(now)", at: instant(now))
                    return .done
                }
            case 1:
                return StoreOperation(description: "reschedule \(id) to \(later) after \(attempts) attempts") {
                    try await $0.reschedule(
                        id: id, attempts: attempts, nextAttemptAt: instant(later), lastError: "HTTP 503")
                    return .done
                }
            default:
                return StoreOperation(description: "mark \(id) failed after \(attempts) attempts") {
                    try await $0.markFailed(id: id, attempts: attempts, lastError: "HTTP 404")
                    return .done
                }
            }
        case 9:
            let id = someID()
            return StoreOperation(description: "read \(id)") { .entry(try await $0.outboxEntry(id: id)) }
        case 10:
            return StoreOperation(description: "count pending") { .count(try await $0.pendingOutboxCount()) }
        case 11:
            if draw(0..<3) == 0 {
                return StoreOperation(description: "release leases") {
                    try await $0.releaseOutboxLeases()
                    return .done
                }
            }
            return StoreOperation(description: "purge before \(earlier)") {
                try await $0.purgeOutbox(before: instant(earlier))
                return .done
            }
        case 12, 13:
            // Two keys and short claims, so a claim often comes exactly when the last one expires.
            let key = "slack:Ev\(draw(0...1))"
            let expiry = seconds(tenths + draw(0...10))
            return StoreOperation(description: "claim \(key) at \(now) until \(expiry)") {
                .claimed(try await $0.claimEvent(key: key, expiresAt: instant(expiry), now: instant(now)))
            }
        case 14, 15:
            // Whole seconds, so runs often share a time.
            let run = HistoryEntry(
                team: "T1", user: draw(0...1) == 0 ? "alice" : "bob", channel: "C1", command: "fix \(tenths)",
                commandLine: nil, resultText: nil, succeeded: true, elapsed: later - now,
                createdAt: instant(Double(tenths / 10)))
            return StoreOperation(description: "record \(run.command) of \(run.user)") {
                try await $0.recordRun(run)
                return .done
            }
        default:
            let user = draw(0...1) == 0 ? "alice" : "bob"
            let limit = draw(-1...4)
            return StoreOperation(description: "history of \(user), limit \(limit)") {
                .runs(try await $0.history(team: "T1", user: user, limit: limit))
            }
        }
    }

    /// Any id enqueued so far, or one not enqueued yet.
    private mutating func someID() -> String {
        "e\(draw(0...enqueued))"
    }

    private mutating func draw(_ range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &random)
    }

    private mutating func draw(_ range: Range<Int>) -> Int {
        Int.random(in: range, using: &random)
    }

    private func seconds(_ tenths: Int) -> TimeInterval {
        TimeInterval(tenths) / 10
    }
}
