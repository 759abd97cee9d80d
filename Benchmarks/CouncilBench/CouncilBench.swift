import ArgumentParser
import AsyncHTTPClient
import Foundation
import Logging
import RelayCore
import RelayHTTP
import RelayTestSupport
import RelayTribunal
import Synchronization

/// The council's own cost, measured against five fake OpenAI-compatible servers on 127.0.0.1.
///
/// Each fake answers after a fixed delay, so "overhead" is the time from the slowest answer (or
/// the deadline) to the finished `ConsensusResult`: the loopback HTTP exchange, JSON encoding
/// and parsing, verdict parsing, agreement and result assembly. A single direct call to a
/// zero-delay fake is measured too, so the part that is the council's alone can be read off.
///
/// The learned council's cost is measured too: a consensus whose estimate is cached, and one that
/// learns again from a ledger of `--ledger` council fact-checks (which `serve` does once the ledger
/// has grown by 2 %), so the cost per tribunal can be read off.
///
///     swift run -c release council-bench [--runs 200] [--hang-runs 20] [--deadline 1] [--ledger 2000]
@main
struct CouncilBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "council-bench", abstract: "Measure the council's overhead and its consensus time when a model hangs.")

    @Option(help: "Consensus runs per measured case.")
    var runs = 200

    @Option(help: "Runs of the case where one model hangs (each takes the whole deadline).")
    var hangRuns = 20

    @Option(help: "The council's overall deadline in seconds, for the hanging case.")
    var deadline = 1.0

    @Option(help: "Council fact-checks in the ledger the learned council learns from.")
    var ledger = CouncilReliability.historyLimit

    @Option(help: "Runs of the case where the council learns again before each consensus.")
    var learnRuns = 20

    func run() async throws {
        let logger = Logger(label: "council-bench", factory: { _ in SwiftLogNoOpLogHandler() })
        let httpClient = HTTPTransport.makeClient()
        var servers: [FakeOpenAIServer] = []
        for _ in 0..<5 { servers.append(try await FakeOpenAIServer.start(persona: .agree, logger: logger)) }
        let models = servers.enumerated().map { index, server in
            CouncilModel(name: "m\(index + 1)", baseURL: server.url, model: "fake-\(index + 1)", tier: .mid)
        }
        let client = OpenAICompatibleClient(transport: HTTPTransport(client: httpClient), logger: logger)
        let claim = ConsensusRequest(claim: "Water boils at 100 °C at sea level.", k: 5, tier: .mid)

        print("council-bench: 5 fake models on 127.0.0.1, k = 5, \(runs) runs per case (\(hangRuns) when one hangs)")
        print(String(repeating: "-", count: 86))

        // Warm the connection pool and the code paths once.
        let warm = Council(configuration: CouncilConfiguration(models: models, deadline: .seconds(10)), client: client, logger: logger)
        for _ in 0..<20 { _ = try await warm.consensus(claim) }

        // 1. One direct model call: the floor any council call stands on.
        let single = try await measure(runs) {
            _ = try await client.complete(models[0], messages: [.system(CouncilPrompts.judgeSystem), .user(claim.claim)], timeout: .seconds(10))
        }
        report("one direct model call (0 ms delay)", single, minus: 0)

        // 2. Five models, no delay: everything measured is overhead.
        let instant = try await measure(runs) { _ = try await warm.consensus(claim) }
        report("consensus k=5, every model 0 ms", instant, minus: 0)

        // 3. Five models answering after 20…100 ms: overhead past the slowest answer.
        let delays = [0.02, 0.04, 0.06, 0.08, 0.10]
        for (server, delay) in zip(servers, delays) { server.setPersona(.slow(seconds: delay, then: .agree)) }
        let staggered = try await measure(runs) { _ = try await warm.consensus(claim) }
        report("consensus k=5, models 20/40/60/80/100 ms", staggered, minus: delays.max()!)

        // 4. One model hangs: the result comes at the deadline, with 4 of 5 answered.
        servers[4].setPersona(.hang)
        let council = Council(configuration: CouncilConfiguration(models: models, deadline: .clampedSeconds(deadline)), client: client, logger: logger)
        var answered = Set<String>()
        let hanging = try await measure(hangRuns) {
            let result = try await council.consensus(claim)
            answered.insert("\(result.answered) of \(result.asked)")
        }
        report("consensus k=5, one hangs, deadline \(Int(deadline * 1000)) ms", hanging, minus: deadline)
        print("  answered: \(answered.sorted().joined(separator: ", "))")

        // 5. The learned council (issue 29): the estimate cached, then learned again each run.
        for server in servers { server.setPersona(.agree) }
        let history = LedgerHistory(SyntheticLedger.entries(ledger, models: models.map(\.name), firstID: 1))
        let learned = Council(
            configuration: CouncilConfiguration(models: models, deadline: .seconds(10)), client: client, logger: logger,
            reliability: CouncilReliability(
                weights: [:], history: { history.newest(CouncilReliability.historyLimit) },
                stamps: { history.newest(CouncilReliability.historyLimit).map(LedgerStamp.init) }))
        let clock = ContinuousClock()
        let started = clock.now
        _ = try await learned.consensus(claim)
        let first = started.duration(to: clock.now)
        let cached = try await measure(runs) { _ = try await learned.consensus(claim) }
        report("consensus k=5, learned council, estimate cached", cached, minus: 0)
        // Which judges the estimate weighs as repeating each other (the path a consensus then takes), from 5 % as `/council` shows them.
        let repeating = (await learned.councilReport()?.judges ?? []).flatMap { judge in
            judge.repeats.filter { $0.value >= 0.05 }.sorted { $0.key < $1.key }.map { other, share in
                "\(judge.model) repeats \(other) on \(Int((share * 100).rounded())) %"
            }
        }
        print("  repeating: \(repeating.isEmpty ? "none found" : repeating.joined(separator: ", "))")
        let step = CouncilReliability.relearnStep(after: min(ledger, CouncilReliability.historyLimit))
        var nextID = Int64(ledger + 1)
        let relearning = try await measure(learnRuns) {
            history.append(SyntheticLedger.entries(step, models: models.map(\.name), firstID: nextID))
            nextID += Int64(step)
            _ = try await learned.consensus(claim)
        }
        report("consensus k=5, learning again from \(min(ledger, CouncilReliability.historyLimit))", relearning, minus: 0)
        let median = { (values: [Double]) in values[values.count / 2] }
        let extra = median(relearning) - median(cached)
        print(
            String(
                format: "  learning: %.1f ms the first time, %.1f ms more when learning again; once every %d fact-checks: %.2f ms per tribunal",
                first.seconds * 1000, extra * 1000, step, extra * 1000 / Double(step)))

        for server in servers { await server.stop() }
        try await httpClient.shutdown()
    }

    /// Wall-clock seconds of each run of `body`.
    func measure(_ count: Int, _ body: () async throws -> Void) async throws -> [Double] {
        var samples: [Double] = []
        samples.reserveCapacity(count)
        let clock = ContinuousClock()
        for _ in 0..<max(1, count) {
            let started = clock.now
            try await body()
            let elapsed = clock.now - started
            samples.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        }
        return samples.sorted()
    }

    /// Prints p50 / p99 of the elapsed time and of the overhead (elapsed − `minus`).
    func report(_ name: String, _ sorted: [Double], minus floor: Double) {
        func percentile(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int((p * Double(sorted.count - 1)).rounded()))] }
        func ms(_ seconds: Double) -> String { String(format: "%7.2f ms", seconds * 1000) }
        let label = name.padding(toLength: 46, withPad: " ", startingAt: 0)
        print("\(label) elapsed p50 \(ms(percentile(0.5))) p99 \(ms(percentile(0.99)))")
        if floor > 0 {
            let pad = String(repeating: " ", count: 46)
            print("\(pad) overhead p50 \(ms(percentile(0.5) - floor)) p99 \(ms(percentile(0.99) - floor))")
        }
    }
}

/// The ledger the learned council reads, growing as the bench adds fact-checks.
final class LedgerHistory: Sendable {
    private let entries: Mutex<[LedgerEntry]>

    init(_ entries: [LedgerEntry]) { self.entries = Mutex(entries) }

    func append(_ more: [LedgerEntry]) { entries.withLock { $0.append(contentsOf: more) } }

    /// The newest `limit` entries, newest first, as `LedgerStore.recentLedger` gives them.
    func newest(_ limit: Int) -> [LedgerEntry] { entries.withLock { Array($0.suffix(limit).reversed()) } }
}

/// Council fact-checks by judges right 85, 75, 70, 65 and 60 % of the time (wrong: another verdict at random), the
/// fourth repeating the third's verdict on 40 % of claims: the council then weighs votes under the model that sees
/// repeating, its costlier path (`RepeatedVerdicts.swift`).
enum SyntheticLedger {
    static func entries(_ count: Int, models: [String], firstID: Int64) -> [LedgerEntry] {
        var generator = SplitMix64(seed: UInt64(bitPattern: firstID) &* 0x9E37_79B9_7F4A_7C15)
        func unit() -> Double { generator.unit() }
        let accuracies = [0.85, 0.75, 0.70, 0.65, 0.60]
        return (0..<count).map { offset in
            let truth = Verdict.allCases[unit() < 0.5 ? 0 : unit() < 0.6 ? 1 : 2]
            var judges: [LedgerJudge] = []
            for (index, model) in models.enumerated() {
                let right = unit() < accuracies[index % accuracies.count]
                let wrong = Verdict.allCases.filter { $0 != truth }[Int(unit() * 3)]
                let repeats = index % accuracies.count == 3 && unit() < 0.4
                let verdict = repeats ? judges[index - 1].verdict : right ? truth : wrong
                judges.append(LedgerJudge(model: model, verdict: verdict, confidence: 0.8 + 0.18 * unit()))
            }
            return LedgerEntry(
                id: firstID + Int64(offset), team: "bench", user: "u", channel: "c", origin: .tribunal, claim: nil, answer: nil, verdict: truth, score: 0.5,
                scoreMeaning: .probabilityRight, answered: judges.count, asked: judges.count, judges: judges, backend: "council",
                createdAt: Date(timeIntervalSince1970: 1_750_000_000 + Double(firstID) + Double(offset)))
        }
    }
}
