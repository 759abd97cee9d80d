import Foundation
import RelayCore
import RelayPipeline
import RelayStore

/// The store the console is measured on: one team with the whole of it (the worst case for its
/// pages: every row the bench writes is that team's), written through the store's own `record`,
/// as runs' ends write it.
///
/// - `runs` runs spread evenly over the last `days` days (1 000 000 over 100 days: 10 000 a day,
///   300 000 in the overview's 30 days), 3 % failed with a backend's reason;
/// - one run in ten a `/tribunal` whose fact-check goes to the ledger (`ledger` of them) with five
///   judges' votes, one in ten of them marked by a person;
/// - each run's model calls: one for a quick action, six for a tribunal (five judges and the
///   chairman), priced: 1 500 000 calls for a million runs;
/// - 20 saved chains and 20 custom commands.
struct BigTeam: Sendable {
    static let platform = "slack"
    static let team = "TBENCH"

    var runs: Int
    var ledger: Int
    var days: Int
    var now: Date

    static let quickCommands = ["translate", "translate", "translate", "fix", "fix", "rewrite", "summarize", "explain", "ask"]
    static let models = ["alpha", "beta", "gamma", "delta", "epsilon"]
    static let failures = ["timed_out", "unreachable", "rate_limited", "provider_failed", "refused"]
    /// Claims are drawn from these words: a few common ones (a search for them matches one claim
    /// in three), and many rare ones.
    static let commonWords = ["water", "the", "moon", "coffee", "river"]
    static let rareWords: [String] = (0..<2_000).map { "w\(String($0, radix: 36))x" }

    /// Writes the team's rows into `store`, `inFlight` runs at a time (the writer batches them).
    func write(to store: any Store, inFlight: Int = 256, progress: @Sendable (Int) -> Void) async throws {
        let tribunalEvery = max(1, runs / max(1, ledger))
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = 0
            func add(_ index: Int) {
                let run = self.run(index, tribunal: index % tribunalEvery == 0 && index / tribunalEvery < ledger)
                group.addTask { _ = try await store.record(run) }
            }
            while next < min(inFlight, runs) {
                add(next)
                next += 1
            }
            while try await group.next() != nil {
                if next < runs {
                    add(next)
                    next += 1
                    if next % 50_000 == 0 { progress(next) }
                }
            }
        }
        for index in 0..<20 {
            let at = now.addingTimeInterval(-Double(index) * 86_400)
            _ = try await store.record(
                RunRecord(changes: [
                    .saveChain(
                        SavedChain(
                            team: Self.team, name: "chain\(index)", source: "input > grammar > rewrite:formal > verify:80 > output", creator: "U1",
                            createdAt: at, updatedAt: at)),
                    .saveCustomCommand(
                        CustomCommand(team: Self.team, name: "cmd\(index)", template: "Explain like I am five: {input}", creator: "U1", createdAt: at)),
                ]))
        }
    }

    /// Run `index`: its time walks back from now, one every `days`/`runs`.
    func run(_ index: Int, tribunal: Bool) -> RunRecord {
        var random = SplitMix(seed: UInt64(index))
        let at = now.addingTimeInterval(-Double(days) * 86_400 * Double(index) / Double(runs))
        let user = "U\(random.next(2_000))"
        let channel = "C\(random.next(100))"
        let command = tribunal ? "tribunal" : Self.quickCommands[random.next(Self.quickCommands.count)]
        let failure = random.next(100) < 3 ? Self.failures[random.next(Self.failures.count)] : nil
        let runID = "run-\(index)"
        var calls: [ModelUsage] = []
        var entries: [LedgerEntry] = []
        if tribunal {
            let claim = (0..<8).map { _ in
                random.next(3) == 0 ? Self.commonWords[random.next(Self.commonWords.count)] : Self.rareWords[random.next(Self.rareWords.count)]
            }
            .joined(separator: " ")
            let truth: Verdict = random.next(2) == 0 ? .true : .false
            let judges = Self.models.map { model -> LedgerJudge in
                let right = random.next(100) < 75
                return LedgerJudge(
                    model: model, verdict: right ? truth : (truth == .true ? .false : .true), confidence: 0.5 + Double(random.next(50)) / 100,
                    answer: "Because the sources say so.", latency: 1.2)
            }
            let mark = random.next(10) == 0 ? LedgerMark(verdict: truth, user: "U1", markedAt: at.addingTimeInterval(3_600)) : nil
            entries.append(
                LedgerEntry(
                    team: Self.team, user: user, channel: channel, origin: .tribunal, claim: claim, answer: "Mostly, yes: the evidence points that way.",
                    verdict: truth, score: 0.5 + Double(random.next(50)) / 100, scoreMeaning: .probabilityRight, answered: 5, asked: 5, judges: judges,
                    backend: "council", createdAt: at, mark: mark))
            calls = (Self.models + [Self.models[0]]).map { Self.call($0, &random) }
        } else {
            calls = [Self.call(Self.models[random.next(3)], &random)]
        }
        let history = HistoryEntry(
            team: Self.team, user: user, channel: channel, command: command, commandLine: "/\(command) something to work on",
            resultText: failure == nil ? "The answer, as it was posted." : nil, succeeded: failure == nil, elapsed: 1.5, createdAt: at,
            failure: failure)
        let usage = RunUsage(platform: Self.platform, team: Self.team, user: user, command: command, run: runID, at: at, calls: calls)
        return RunRecord(history: history, ledger: entries, usage: usage)
    }

    static func call(_ model: String, _ random: inout SplitMix) -> ModelUsage {
        let tokensIn = 200 + random.next(800)
        let tokensOut = 50 + random.next(300)
        return ModelUsage(
            model: model, tokensIn: tokensIn, tokensOut: tokensOut, estimated: random.next(20) == 0, cost: Double(tokensIn + 4 * tokensOut) * 1e-7,
            elapsed: .milliseconds(800))
    }
}

/// A small seeded generator, so every run of the bench writes the same store.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 &+ 1 }
    mutating func next(_ bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }
}
