import ArgumentParser
import Foundation
import RelayCore
import RelayTribunal
import Synchronization
import TribunalSimulation

/// The council's learned reliability against simulated panels of judges with known accuracies.
///
/// A benchmark, not a test: each panel judges `--claims` claims with the council learning as it
/// goes (as `serve` does: again whenever the history has grown by `CouncilReliability.relearnStep`),
/// and the table reports the last `--recent` of them and the first `--cold` (the cold start), as
/// means ± standard deviations over `--seeds` seeds, against issue 29's targets. The simulation's
/// assumptions are written at the top of Simulation.swift.
///
///     swift run -c release tribunal-sim [--claims 400] [--recent 200] [--cold 50] [--seeds 10] [--verdicts 4] [--jobs 2]
@main
struct TribunalSim: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tribunal-sim", abstract: "Measure the council's learned reliability on simulated panels of judges.")

    @Option(help: "Claims per panel and seed.")
    var claims = 400

    @Option(help: "The last claims of each run that are scored.")
    var recent = 200

    @Option(help: "The first claims of each run that are scored as the cold start.")
    var cold = 50

    @Option(help: "Seeds per panel (first-seed, first-seed + 1…).")
    var seeds = 10

    @Option(help: "The first seed: tune on other seeds than the reported 1…10 (e.g. 11), so the reported figures are honest.")
    var firstSeed = 1

    @Option(help: "Learn again after every this many claims; 0: when the history has grown as the council waits for.")
    var every = 0

    @Option(help: "Verdicts the simulated claims can have: 4 (true, false, partly, unverifiable) or 2 (true, false).")
    var verdicts = 4

    @Option(help: "Only the panels whose name contains this (several: separated by commas).")
    var panel: String?

    @Option(help: "Share of claims people mark on every panel (0: only the \"+ marks\" panel's own).")
    var marks = 0.0

    @Option(help: "Panels run at once.")
    var jobs = 1

    @Option(help: "Resampled fits the estimate averages over (0: the single fit taken as known).")
    var resamples = ReliabilityEstimator().resamples

    @Option(help: "EM stops once no probability moves by more than this in a round.")
    var tolerance = ReliabilityEstimator().tolerance

    @Option(help: "EM stops after this many rounds even if it has not settled.")
    var maxIterations = ReliabilityEstimator().maxIterations

    @Option(help: "Held-out folds that weigh the panel view in (below 2: no panel view).")
    var folds = ReliabilityEstimator().folds

    @Option(help: "Rounds of looking for judges that share mistakes and counting their votes for less (0: none).")
    var dependenceRounds = ReliabilityEstimator().dependenceRounds

    @Option(help: "The prior's rowStrength (claims pulling each row of a judge's matrix towards its accuracy).")
    var rowStrength = ReliabilityPrior().rowStrength

    @Option(help: "The prior's bandStrength (votes pulling a confidence band's record towards the judge's overall one).")
    var bandStrength = ReliabilityPrior().bandStrength

    @Option(help: "The prior's strength (verdicts the prior accuracy is worth).")
    var strength = ReliabilityPrior().strength

    private var prior: ReliabilityPrior {
        var prior = ReliabilityPrior()
        (prior.rowStrength, prior.bandStrength, prior.strength) = (rowStrength, bandStrength, strength)
        prior.poolsQuietBands = !noQuietBands
        return prior
    }

    @Option(help: "Claims of history before the learned records may overrule the plain majority.")
    var overruleMinimum = MajorityOverrule().minimumClaims

    @Option(help: "Share of resampled fits that must agree before the records overrule the majority (above 1: always overrule).")
    var overruleShare = MajorityOverrule().agreeingShare

    @Option(help: "Nats within which another reading of who shares mistakes is kept as an alternative (0: none).")
    var ambiguity = ReliabilityEstimator().ambiguity

    @Flag(help: "Check pairs of judges for shared mistakes only one by one, not the rest together.")
    var noPooledDependence = false

    @Flag(help: "Pull a judge's confidence bands together only by --band-strength, even when they differ by no more than noise.")
    var noQuietBands = false

    @Flag(help: "Leave out the reliability diagrams.")
    var noDiagrams = false

    @Option(help: "History size for the estimator's timing (0: no timing).")
    var timingClaims = 2000

    @Option(help: "Write each panel's figures on each seed to this CSV file.")
    var perSeed: String?

    @Option(help: "Compare with an earlier run's --per-seed file, seed by seed: the differences with their paired standard errors.")
    var against: String?

    private var world: World { verdicts == 2 ? .twoVerdicts : World() }

    func validate() throws {
        guard claims >= recent, claims >= cold, recent > 0, seeds > 0, firstSeed > 0, every >= 0, jobs > 0, [2, 4].contains(verdicts), (0...1).contains(marks)
        else {
            throw ValidationError("need claims ≥ recent > 0, claims ≥ cold, seeds > 0, firstSeed > 0, every ≥ 0, jobs > 0, verdicts 2 or 4, marks in 0…1")
        }
    }

    func run() {
        let wanted = panel?.split(separator: ",").map(String.init)
        let panels = Panel.all(in: world).filter { candidate in wanted.map { $0.contains { candidate.name.contains($0) } } ?? true }.map { panel in
            var panel = panel
            panel.world.markShare = max(panel.world.markShare, marks)
            return panel
        }
        print(
            "tribunal-sim: \(verdicts) verdicts, \(claims) claims per panel, scored over the last \(recent) and the first \(cold) (cold start), "
                + "seeds \(firstSeed)…\(firstSeed + seeds - 1), learning again \(every == 0 ? "as serve does (every 2 % of growth)" : "every \(every) claim(s)"), "
                + "\(resamples) resampled fits, \(folds >= 2 ? "the panel view weighed on \(folds) held-out folds" : "no panel view")")
        print("accuracy of the best single judge (on the claims it gave a verdict on), a plain majority, the learned council, and the")
        print("Bayes-optimal combiner told the true parameters (oracle); ECE (10 bins) of the council's probability and of the oracle's;")
        print("each a mean ± standard deviation over the seeds. pooled: the ECE of all seeds' scored claims together (less noise).")
        print("hindsight: the council on the same claims with its records learned from the whole run's votes (never the truths);")
        print("told: with its records learned from every claim's truth, as if people had marked them all.")
        let results = Mutex([Int: [PanelScore]]())
        DispatchQueue.concurrentPerform(iterations: jobs) { worker in
            for index in stride(from: worker, to: panels.count, by: jobs) {
                var runner = PanelRun(panel: panels[index], claims: claims, recent: recent, cold: cold, every: every)
                runner.estimator = ReliabilityEstimator(
                    prior: prior, maxIterations: maxIterations, tolerance: tolerance, resamples: resamples, folds: folds, dependenceRounds: dependenceRounds)
                runner.scoresHindsight = true
                runner.estimator.pooledDependence = !noPooledDependence
                runner.estimator.ambiguity = ambiguity
                runner.estimator.overrule = overruleShare > 1 ? nil : MajorityOverrule(minimumClaims: overruleMinimum, agreeingShare: overruleShare)
                let scores = (UInt64(firstSeed)..<UInt64(firstSeed + seeds)).map { runner.run(seed: $0) }
                results.withLock { $0[index] = scores }
            }
        }
        let scored = results.withLock { table in panels.indices.map { table[$0]! } }

        print("")
        print("last \(recent) claims")
        print(
            [
                pad("panel", 20), "best       ", "majority   ", "learned    ", "oracle     ", "hindsight  ", "told       ", "ECE        ", "oracle ECE ",
                "pooled", "ms",
            ].joined(
                separator: " "))
        for (panel, scores) in zip(panels, scored) {
            let cells = [
                spread(scores, \.bestSingle), spread(scores, \.majority), spread(scores, \.learned), spread(scores, \.oracle),
                spread(scores, \.hindsight), spread(scores, \.told), spread(scores, \.learnedECE), spread(scores, \.oracleECE),
                format(pooled(scores, \.learnedScores)),
                format(mean(scores, \.estimateMilliseconds), 1),
            ]
            print(([pad(panel.name, 20)] + cells).joined(separator: " "))
        }
        print("")
        print("cold start: the first \(cold) claims")
        print([pad("panel", 20), "best       ", "majority   ", "learned    ", "oracle     ", "ECE        ", "oracle ECE ", "pooled"].joined(separator: " "))
        for (panel, scores) in zip(panels, scored) {
            let cells = [
                spread(scores, \.coldBest), spread(scores, \.coldMajority), spread(scores, \.coldLearned), spread(scores, \.coldOracle),
                spread(scores, \.coldECE), spread(scores, \.coldOracleECE), format(pooled(scores, \.coldScores)),
            ]
            print(([pad(panel.name, 20)] + cells).joined(separator: " "))
        }

        print("")
        print("targets (means over the seeds): last \(recent): ECE ≤ 0.05, learned ≥ best + 0.02 and ≥ majority where the oracle is;")
        print("cold start: ECE ≤ 0.10 and learned ≥ majority. In brackets: what the oracle itself reaches. In braces: the ECE the")
        print("council's own probabilities would show on as many claims if they were exactly right (the noise floor of ECE).")
        for (panel, scores) in zip(panels, scored) { print(targets(panel.name, scores)) }

        if !noDiagrams {
            print("")
            print("reliability diagrams, last \(recent) claims of every seed pooled: stated probability → share right (claims)")
            for (panel, scores) in zip(panels, scored) {
                print("  \(panel.name)")
                for line in diagram(scores.flatMap(\.learnedScores)) { print("    \(line)") }
            }
            print("")
            print("reliability diagrams, cold start (first \(cold) claims of every seed pooled)")
            for (panel, scores) in zip(panels, scored) {
                print("  \(panel.name)")
                for line in diagram(scores.flatMap(\.coldScores)) { print("    \(line)") }
            }
        }
        let rows = zip(panels, scored).flatMap { panel, scores in
            zip(UInt64(firstSeed)..., scores).map { SeedRow(panel: panel.name, seed: $0, score: $1) }
        }
        do {
            if let perSeed { try PerSeed.write(rows, to: perSeed) }
            if let against {
                print("")
                print("against \(against), seed by seed (this run − that one; mean ± paired standard error):")
                for line in PerSeed.compare(rows, against: try PerSeed.read(against)) { print(line) }
            }
        } catch {
            print("tribunal-sim: \(error)")
        }
        if timingClaims > 0 { timeEstimator() }
    }

    /// One line: each target met or not, with the oracle's own figure where it says whether the panel allows it.
    private func targets(_ name: String, _ scores: [PanelScore]) -> String {
        let ece = mean(scores, \.learnedECE)
        let overBest = mean(scores, \.learned) - mean(scores, \.bestSingle)
        let overMajority = mean(scores, \.learned) - mean(scores, \.majority)
        let oracleOverBest = mean(scores, \.oracle) - mean(scores, \.bestSingle)
        let oracleOverMajority = mean(scores, \.oracle) - mean(scores, \.majority)
        let coldECE = mean(scores, \.coldECE)
        let coldOverMajority = mean(scores, \.coldLearned) - mean(scores, \.coldMajority)
        let mark = { (met: Bool) in met ? "yes" : "NO" }
        return "\(pad(name + ":", 21)) ECE \(format(ece)) \(mark(ece <= 0.05)) [\(format(mean(scores, \.oracleECE)))] "
            + "{\(format(mean(scores, \.learnedFloor)))}; "
            + "−best \(format(overBest, signed: true)) \(mark(overBest >= 0.02)) [\(format(oracleOverBest, signed: true))]; "
            + "−majority \(format(overMajority, signed: true)) \(mark(overMajority >= 0)) [\(format(oracleOverMajority, signed: true))]; "
            + "cold ECE \(format(coldECE)) \(mark(coldECE <= 0.10)) [\(format(mean(scores, \.coldOracleECE)))] {\(format(mean(scores, \.coldFloor)))}; "
            + "cold −majority \(format(coldOverMajority, signed: true)) \(mark(coldOverMajority >= 0)) "
            + "[\(format(mean(scores, \.coldOracle) - mean(scores, \.coldMajority), signed: true))]"
    }

    /// The reliability diagram as text: one line per non-empty bin, with a bar of the share right.
    private func diagram(_ scores: [Scored]) -> [String] {
        let bins = ExpectedCalibrationError(scores).bins
        return bins.enumerated().compactMap { index, bin in
            guard bin.claims > 0 else { return nil }
            let stated = bin.stated / Double(bin.claims)
            let right = bin.right / Double(bin.claims)
            let bar = String(repeating: "#", count: Int((right * 40).rounded()))
            let tick = Int((stated * 40).rounded())
            let marked = bar.count >= tick ? bar : bar + String(repeating: " ", count: tick - bar.count - 1) + "|"
            return
                "\(format(Double(index) / 10, 1))–\(format(Double(index + 1) / 10, 1))  \(format(stated)) → \(format(right)) \(pad("(\(bin.claims))", 7)) \(marked)"
        }
    }

    /// Times one estimate on a history of `timingClaims` claims of the overconfident panel, a tenth of them marked.
    private func timeEstimator() {
        let panel = Panel.all(in: world)[0]
        var rng = SimulationGenerator(seed: 7)
        let history = (0..<timingClaims + 1).map { index in
            let claim = panel.drawClaim(using: &rng)
            let votes = panel.votes(on: claim, using: &rng)
            return JudgedClaim(votes: votes, mark: index % 10 == 0 && claim.truth < 3 ? Verdict.allCases[claim.truth] : nil)
        }
        let clock = ContinuousClock()
        let estimator = ReliabilityEstimator()
        let plain = ReliabilityEstimator(resamples: 0, folds: 0)
        var single: [Double] = []
        var full: [Double] = []
        var calibration: [Double] = []
        let before = estimator.estimate(Array(history.prefix(timingClaims)))
        for _ in 0..<5 {
            var started = clock.now
            _ = plain.estimate(history, startingFrom: before)
            single.append(started.duration(to: clock.now).milliseconds)
            started = clock.now
            let next = estimator.estimate(history, startingFrom: before)
            full.append(started.duration(to: clock.now).milliseconds)
            started = clock.now
            _ = ScoreCalibrator(samples: next.calibrationSamples(history))
            calibration.append(started.duration(to: clock.now).milliseconds)
        }
        let median = { (values: [Double]) in format(values.sorted()[values.count / 2], 1) }
        print("")
        print("learning from \(timingClaims) claims × \(panel.judges.count) models, a tenth marked (median of 5 runs):")
        print("  the single Dawid–Skene fit (fresh start and from the previous estimate)   \(median(single)) ms")
        print("  with \(estimator.resamples) resampled fits, the panel view and \(estimator.folds) held-out folds          \(median(full)) ms")
        print("  calibrator on the marked claims' held-out scores                           \(median(calibration)) ms")
        print("  the council learns again every \(CouncilReliability.relearnStep(after: timingClaims)) fact-checks at this size")
    }

    private func mean(_ scores: [PanelScore], _ value: KeyPath<PanelScore, Double>) -> Double {
        scores.reduce(0) { $0 + $1[keyPath: value] } / Double(scores.count)
    }

    /// "0.812±0.021": the mean and the standard deviation over the seeds.
    private func spread(_ scores: [PanelScore], _ value: KeyPath<PanelScore, Double>) -> String {
        let average = mean(scores, value)
        let variance =
            scores.count > 1 ? scores.reduce(0) { $0 + ($1[keyPath: value] - average) * ($1[keyPath: value] - average) } / Double(scores.count - 1) : 0
        return "\(format(average))±\(format(variance.squareRoot()))"
    }

    private func pooled(_ scores: [PanelScore], _ value: KeyPath<PanelScore, [Scored]>) -> Double {
        ExpectedCalibrationError(scores.flatMap { $0[keyPath: value] }).value
    }

    private func pad(_ text: String, _ width: Int) -> String { text.padding(toLength: width, withPad: " ", startingAt: 0) }

    private func format(_ value: Double, _ digits: Int = 3, signed: Bool = false) -> String {
        String(format: signed ? "%+.\(digits)f" : "%.\(digits)f", value)
    }
}
