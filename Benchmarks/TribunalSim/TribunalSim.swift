import ArgumentParser
import Foundation
import RelayCore
import RelayTribunal

/// The council's learned reliability against simulated panels of judges with known accuracies.
///
/// A benchmark, not a test: each panel judges `--claims` claims with the council learning as it
/// goes, and the table reports the last `--recent` of them over `--seeds` seeds (the first seed,
/// the mean and the worst). The simulation's assumptions are written at the top of Simulation.swift.
///
///     swift run -c release tribunal-sim [--claims 400] [--recent 200] [--seeds 10] [--every 1]
@main
struct TribunalSim: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tribunal-sim", abstract: "Measure the council's learned reliability on simulated panels of judges.")

    @Option(help: "Claims per panel and seed.")
    var claims = 400

    @Option(help: "The last claims of each run that are scored.")
    var recent = 200

    @Option(help: "Seeds per panel (1, 2, 3…).")
    var seeds = 10

    @Option(help: "Re-estimate after every this many claims.")
    var every = 1

    @Option(help: "History size for the estimator's timing.")
    var timingClaims = 2000

    @Option(help: "Verdicts the simulated claims can have: 4 (true, false, partly, unverifiable) or 2 (true, false).")
    var verdicts = 4

    private var world: World { verdicts == 2 ? .twoVerdicts : World() }

    func validate() throws {
        guard claims >= recent, recent > 0, seeds > 0, every > 0, [2, 4].contains(verdicts) else {
            throw ValidationError("need claims ≥ recent > 0, seeds > 0, every > 0, verdicts 2 or 4")
        }
    }

    func run() {
        print(
            "tribunal-sim: \(verdicts) verdicts, \(claims) claims per panel, scored over the last \(recent), seeds 1…\(seeds), "
                + "re-estimating every \(every) claim(s)")
        print("accuracy of: the best single judge (on the claims it gave a verdict on), a plain majority, today's confidence-weighted")
        print("plurality (Agreement.compute), the learned council, the Bayes-optimal combiner told the true parameters (oracle);")
        print("ECE (10 bins) of the learned council's calibrated score, of the oracle's probability, of today's agreement as a probability;")
        print("ms: mean time of one re-estimate (EM from scratch and from the previous estimate, then the calibrator) on histories up to \(claims)")
        let header = [
            pad("panel", 19), pad("seeds", 6), "best ", "major", "today", "learn", "oracl", "Δbest ", "Δmaj  ", "ECE  ", "ECEor", "ECEtd", "ms",
        ]
        print(header.joined(separator: " "))
        print(String(repeating: "-", count: 100))
        var verdicts: [String] = []
        for panel in Panel.all(in: world) {
            let runner = PanelRun(panel: panel, claims: claims, recent: recent, reestimateEvery: every)
            // The same seeds for every panel: the two "shared" panels then judge the very same claims, with and without marks.
            let scores = (1...UInt64(seeds)).map { runner.run(seed: $0) }
            let mean = PanelScore.mean(scores)
            row(panel.name, "seed 1", scores[0])
            if seeds > 1 {
                row("", "mean", mean)
                row("", "worst", PanelScore.worst(scores))
            }
            let meets = { (score: PanelScore) in score.overBest >= 0.02 && score.overMajority > 0 && score.learnedECE <= 0.05 }
            let marks = [mean.overBest >= 0.02, mean.overMajority > 0, mean.learnedECE <= 0.05].map { $0 ? "yes" : "NO" }
            verdicts.append(
                "\(pad(panel.name + ":", 20)) mean: Δbest ≥ 0.02 \(marks[0]), > majority \(marks[1]), ECE ≤ 0.05 \(marks[2]); "
                    + "all three on \(scores.filter(meets).count) of \(seeds) seeds; oracle − best \(format(mean.oracle - mean.bestSingle, signed: true)), "
                    + "oracle − majority \(format(mean.oracle - mean.majority, signed: true))")
        }
        print(String(repeating: "-", count: 100))
        print("worst: each column at its least favourable to the learned council over the seeds, on its own (not one seed)")
        for line in verdicts { print(line) }
        timeEstimator()
    }

    /// Times one estimate on a history of `timingClaims` claims of the overconfident panel, a tenth of them marked.
    private func timeEstimator() {
        let panel = Panel.all(in: world)[0]
        var rng = SplitMix64(seed: 7)
        let history = (0..<timingClaims + 1).map { index in
            let claim = panel.drawClaim(using: &rng)
            let votes = panel.judges.map { $0.vote(on: claim, in: panel.world, using: &rng) }
            return JudgedClaim(votes: votes, mark: index % 10 == 0 && claim.truth < 3 ? Verdict.allCases[claim.truth] : nil)
        }
        let estimator = ReliabilityEstimator()
        let clock = ContinuousClock()
        var fresh: [Double] = []
        var resumed: [Double] = []
        var calibration: [Double] = []
        var rounds = (fresh: 0, resumed: 0)
        let before = estimator.estimate(Array(history.prefix(timingClaims)))
        for _ in 0..<21 {
            var started = clock.now
            let scratch = estimator.estimate(Array(history.prefix(timingClaims)))
            fresh.append(started.duration(to: clock.now).milliseconds)
            rounds.fresh = scratch.iterations
            started = clock.now
            let next = estimator.estimate(history, startingFrom: before)
            resumed.append(started.duration(to: clock.now).milliseconds)
            rounds.resumed = next.iterations
            started = clock.now
            _ = ScoreCalibrator(samples: next.calibrationSamples(history))
            calibration.append(started.duration(to: clock.now).milliseconds)
        }
        let median = { (values: [Double]) in format(values.sorted()[values.count / 2], 2) }
        print("estimator on \(timingClaims) claims × \(panel.judges.count) models, a tenth marked (median of 21 runs):")
        print("  from scratch                                  \(median(fresh)) ms (\(rounds.fresh) EM rounds)")
        print("  one claim more, with the previous estimate    \(median(resumed)) ms (both starts run; the winner took \(rounds.resumed) rounds)")
        print("  calibrator: leave-one-out scores of the marked claims and the fit   \(median(calibration)) ms")
    }

    private func row(_ name: String, _ label: String, _ score: PanelScore) {
        let cells = [
            pad(name, 19), pad(label, 6), format(score.bestSingle), format(score.majority), format(score.today), format(score.learned),
            format(score.oracle), format(score.overBest, signed: true), format(score.overMajority, signed: true),
            format(score.learnedECE), format(score.oracleECE), format(score.todayECE), format(score.estimateMilliseconds, 2),
        ]
        print(cells.joined(separator: " "))
    }

    private func pad(_ text: String, _ width: Int) -> String { text.padding(toLength: width, withPad: " ", startingAt: 0) }

    private func format(_ value: Double, _ digits: Int = 3, signed: Bool = false) -> String {
        String(format: signed ? "%+.\(digits)f" : "%.\(digits)f", value)
    }
}

extension PanelScore {
    static func mean(_ scores: [PanelScore]) -> PanelScore {
        let n = Double(scores.count)
        let sum = { (value: KeyPath<PanelScore, Double>) in scores.reduce(0) { $0 + $1[keyPath: value] } / n }
        return PanelScore(
            bestSingle: sum(\.bestSingle), majority: sum(\.majority), today: sum(\.today), learned: sum(\.learned), oracle: sum(\.oracle),
            overBest: sum(\.overBest), overMajority: sum(\.overMajority), learnedECE: sum(\.learnedECE), oracleECE: sum(\.oracleECE),
            todayECE: sum(\.todayECE), estimateMilliseconds: sum(\.estimateMilliseconds))
    }

    /// Each column at its least favourable to the learned council over the seeds, each on its own.
    static func worst(_ scores: [PanelScore]) -> PanelScore {
        let low = { (value: KeyPath<PanelScore, Double>) in scores.map { $0[keyPath: value] }.min() ?? 0 }
        let high = { (value: KeyPath<PanelScore, Double>) in scores.map { $0[keyPath: value] }.max() ?? 0 }
        return PanelScore(
            bestSingle: high(\.bestSingle), majority: high(\.majority), today: high(\.today), learned: low(\.learned), oracle: low(\.oracle),
            overBest: low(\.overBest), overMajority: low(\.overMajority), learnedECE: high(\.learnedECE), oracleECE: high(\.oracleECE),
            todayECE: high(\.todayECE), estimateMilliseconds: high(\.estimateMilliseconds))
    }
}
