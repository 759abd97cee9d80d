import Foundation
import RelayCore
public import RelayTribunal

/// A probability stated for a verdict, and whether the verdict was right.
public struct Scored: Sendable {
    public var probability: Double
    public var right: Bool
}

/// What one panel scored on one seed: over its last `recent` claims, and over its first `cold` ones.
public struct PanelScore: Sendable {
    public var bestSingle = 0.0
    public var majority = 0.0
    public var learned = 0.0
    public var oracle = 0.0
    /// The council's accuracy on the same claims with its records learned in hindsight, from every claim's votes (not the
    /// truths): what the votes of the whole run allow the council's method, which the council itself, learning as it goes, cannot reach.
    /// 0 unless `PanelRun.scoresHindsight`, as `told`.
    public var hindsight = 0.0
    /// The council's accuracy on the same claims with its records learned from every claim's truth (all of them marked): what
    /// its way of combining votes reaches when the records are as good as 400 labelled claims make them.
    public var told = 0.0
    /// The learned council's probabilities (calibrated as the council calibrates them) and the oracle's, on the scored claims.
    public var learnedScores: [Scored] = []
    public var oracleScores: [Scored] = []
    public var coldBest = 0.0
    public var coldMajority = 0.0
    public var coldLearned = 0.0
    public var coldOracle = 0.0
    public var coldScores: [Scored] = []
    public var coldOracleScores: [Scored] = []
    /// Mean time of one re-estimate (the estimate with its resampled fits and held-out folds, then the calibrator), in milliseconds.
    public var estimateMilliseconds = 0.0
    /// How many times the council learned again.
    public var estimates = 0

    public var learnedECE: Double { ExpectedCalibrationError(learnedScores).value }
    public var oracleECE: Double { ExpectedCalibrationError(oracleScores).value }
    public var coldECE: Double { ExpectedCalibrationError(coldScores).value }
    public var coldOracleECE: Double { ExpectedCalibrationError(coldOracleScores).value }
    /// The ECE the council's probabilities would show if they were exactly right (see `ExpectedCalibrationError.floor`).
    public var learnedFloor: Double { ExpectedCalibrationError.floor(learnedScores) }
    public var coldFloor: Double { ExpectedCalibrationError.floor(coldScores) }
}

/// Runs a panel claim by claim, the council learning as it goes: each claim is judged with the
/// estimate from the claims before it, then joins the history. The council learns again when the
/// history has grown by `CouncilReliability.relearnStep` (as `serve` does), or every `every` claims.
public struct PanelRun: Sendable {
    public var panel: Panel
    public var claims: Int
    public var recent: Int
    public var cold: Int
    /// Learn again after this many claims; 0: when the history has grown as much as the council waits for.
    public var every: Int
    public var estimator = ReliabilityEstimator()
    /// Whether the run also scores `PanelScore.hindsight` and `.told` (two more estimates; tribunal-sim prints them).
    public var scoresHindsight = false

    public init(panel: Panel, claims: Int, recent: Int, cold: Int = 50, every: Int = 0) {
        self.panel = panel
        self.claims = claims
        self.recent = recent
        self.cold = cold
        self.every = every
    }

    public func run(seed: UInt64) -> PanelScore {
        var rng = SimulationGenerator(seed: seed)
        // Marks draw from their own stream, so marking claims does not change the claims or the votes.
        var marking = SimulationGenerator(seed: ~seed)
        var estimate = ReliabilityEstimate(prior: estimator.prior)
        var calibrator = ScoreCalibrator(samples: [])
        var history: [JudgedClaim] = []
        var learnedAt = 0
        var recentTally = Tally(judges: panel.judges.count)
        var coldTally = Tally(judges: panel.judges.count)
        var wholeTally = Tally(judges: panel.judges.count)
        var told: [JudgedClaim] = []
        var scoredClaims: [(votes: [JudgedClaim.Vote], truth: Verdict)] = []
        var score = PanelScore()
        var estimating = Duration.zero
        let clock = ContinuousClock()
        let debugsClaims = ProcessInfo.processInfo.environment["SIM_DEBUG"] == "2"

        for index in 0..<claims {
            let due = every > 0 ? index % every == 0 : index - learnedAt >= CouncilReliability.relearnStep(after: learnedAt)
            if index > 0 && due {
                let started = clock.now
                estimate = estimator.estimate(history, startingFrom: estimate)
                calibrator = ScoreCalibrator(samples: estimate.calibrationSamples(history))
                estimating += started.duration(to: clock.now)
                score.estimates += 1
                if ProcessInfo.processInfo.environment["SIM_DEBUG"] == "4" {
                    // SIM_DEBUG=4: each re-estimate's accuracies (± their spread over the resampled fits), to see a fit move
                    // from one reading of who is the expert to another as claims come in.
                    let models = estimate.models.map { "\($0.model) \(String(format: "%.2f±%.2f", $0.accuracy, $0.spread))" }
                    print("  at \(index): \(models.joined(separator: ", ")) panel \(String(format: "%.2f", estimate.panelWeight))")
                }
                learnedAt = index
            }
            let claim = panel.drawClaim(using: &rng)
            let votes = panel.votes(on: claim, using: &rng)
            let truth = Verdict.allCases[claim.truth]

            let posterior = estimate.posterior(votes)
            let oracle = panel.oracle(votes)
            let oracleVerdict = oracle.indices.max { oracle[$0] < oracle[$1] }!
            // A plain majority: every answer at full confidence, so each counts once (ties as Agreement breaks them).
            let majority = Agreement.compute(
                votes.map { Ballot(model: $0.model, weight: 1, parsed: ParsedVerdict(verdict: $0.verdict, confidence: 1, answer: "")) })
            let learned = Scored(probability: posterior.verdict == nil ? 0.5 : calibrator.calibrated(posterior.score), right: posterior.verdict == truth)
            let best = Scored(probability: oracle[oracleVerdict], right: oracleVerdict == claim.truth)

            if index >= claims - recent, debugsClaims, posterior.verdict != majority.verdict || posterior.verdict != truth || oracleVerdict != claim.truth {
                // SIM_DEBUG=2: every scored claim where the council, the majority or the oracle differs or is wrong.
                let short = { (verdict: Verdict?) in verdict.map { String("\($0)".prefix(4)) } ?? "-" }
                let said = votes.map { "\($0.model)=\(short($0.verdict))" }.joined(separator: " ")
                let council = "\(short(posterior.verdict)) \(String(format: "%.2f", posterior.score))"
                let bayes = "\(short(Verdict.allCases[oracleVerdict])) \(String(format: "%.2f", oracle[oracleVerdict]))"
                print("  \(index) truth \(short(truth)) majority \(short(majority.verdict)) council \(council) oracle \(bayes) | \(said)")
            }
            if ProcessInfo.processInfo.environment["SIM_DEBUG"] == "5" {
                // SIM_DEBUG=5: every claim's votes (verdict index:confidence, - for silence) and truth, to refit elsewhere.
                let said = votes.map { vote in vote.verdict.map { "\(Verdict.allCases.firstIndex(of: $0)!):\(vote.confidence ?? -1)" } ?? "-" }
                let name = panel.name.replacingOccurrences(of: " ", with: "_")
                print("V \(name) \(seed) \(index) \(claim.truth) \(posterior.verdict == truth ? 1 : 0) \(said.joined(separator: " "))")
            }
            if index >= claims - recent {
                recentTally.count(votes, truth: truth, majority: majority.verdict == truth, learned: learned, oracle: best)
                if scoresHindsight { scoredClaims.append((votes, truth)) }
            }
            wholeTally.count(votes, truth: truth, majority: majority.verdict == truth, learned: learned, oracle: best)
            if index < cold {
                coldTally.count(votes, truth: truth, majority: majority.verdict == truth, learned: learned, oracle: best)
            }

            // A person marks the claim after the council answered; only true, false and partly are marked.
            let marked = marking.unit() < panel.world.markShare && truth != .unverifiable
            history.append(JudgedClaim(votes: votes, mark: marked ? truth : nil))
            if scoresHindsight { told.append(JudgedClaim(votes: votes, mark: truth)) }
        }

        if let debug = ProcessInfo.processInfo.environment["SIM_DEBUG"] {
            let models = estimate.models.map {
                "\($0.model) \(String(format: "%.2f", $0.accuracy))×\(String(format: "%.2f", estimate.judgeWeights[$0.model] ?? 1)) λ\(String(format: "%.2f", estimate.shrinkage[$0.model] ?? 1))"
            }
            print("\(panel.name) seed \(seed): \(models.joined(separator: ", ")) panel \(String(format: "%.2f", estimate.panelWeight))")
            // Beside what was learned, what each judge truly scored over the run.
            let truly = zip(wholeTally.judgeRight, wholeTally.judgeAnswered).map { String(format: "%.2f", Double($0) / Double(max(1, $1))) }
            print("  right over the whole run: \(truly.joined(separator: " "))")
            if debug == "3" {
                // SIM_DEBUG=3: each judge's learned matrix, a row per truth (true, false, partly, unverifiable).
                for model in estimate.models {
                    let rows = model.confusion.map { $0.map { String(format: "%.2f", $0) }.joined(separator: " ") }
                    print("  \(model.model): \(rows.joined(separator: " | "))")
                }
                print("  classes: \(Verdict.allCases.map { String(format: "%.2f", estimate.classFrequencies[$0] ?? 0) }.joined(separator: " "))")
            }
        }
        (score.bestSingle, score.majority, score.learned, score.oracle) = recentTally.shares
        (score.learnedScores, score.oracleScores) = (recentTally.learned, recentTally.oracle)
        (score.coldBest, score.coldMajority, score.coldLearned, score.coldOracle) = coldTally.shares
        (score.coldScores, score.coldOracleScores) = (coldTally.learned, coldTally.oracle)
        if scoresHindsight {
            let accuracy = { (records: ReliabilityEstimate) in
                Double(scoredClaims.count { records.posterior($0.votes).verdict == $0.truth }) / Double(max(1, scoredClaims.count))
            }
            // Hindsight: one estimate from every claim's votes (and marks, as the council sees them); told: from every truth.
            score.hindsight = accuracy(estimator.estimate(history, startingFrom: estimate))
            score.told = accuracy(estimator.estimate(told))
        }
        score.estimateMilliseconds = score.estimates > 0 ? estimating.milliseconds / Double(score.estimates) : 0
        return score
    }
}

/// Counts over a window of claims.
struct Tally {
    var judgeRight: [Int]
    var judgeAnswered: [Int]
    var majorityRight = 0
    var learned: [Scored] = []
    var oracle: [Scored] = []

    init(judges: Int) {
        judgeRight = Array(repeating: 0, count: judges)
        judgeAnswered = judgeRight
    }

    mutating func count(_ votes: [JudgedClaim.Vote], truth: Verdict, majority: Bool, learned: Scored, oracle: Scored) {
        // A judge is scored on the claims it gave a verdict on: its silences do not count against it.
        for (judge, vote) in votes.enumerated() where vote.verdict != nil {
            judgeAnswered[judge] += 1
            if vote.verdict == truth { judgeRight[judge] += 1 }
        }
        if majority { majorityRight += 1 }
        self.learned.append(learned)
        self.oracle.append(oracle)
    }

    /// The best single judge's, the majority's, the learned council's and the oracle's accuracy.
    var shares: (Double, Double, Double, Double) {
        let claims = Double(max(1, learned.count))
        let best = zip(judgeRight, judgeAnswered).map { Double($0) / Double(max(1, $1)) }.max() ?? 0
        return (best, Double(majorityRight) / claims, Double(learned.count { $0.right }) / claims, Double(oracle.count { $0.right }) / claims)
    }
}

/// Expected calibration error over 10 equal-width bins, and the bins themselves (the reliability diagram).
public struct ExpectedCalibrationError: Sendable {
    public struct Bin: Sendable {
        public var claims = 0
        public var stated = 0.0
        public var right = 0.0
    }

    public var bins = [Bin](repeating: Bin(), count: 10)
    /// The share-weighted gap between stated probability and observed accuracy.
    public var value: Double

    public init(_ scores: [Scored]) {
        for score in scores {
            let bin = min(9, max(0, Int(score.probability * 10)))
            bins[bin].claims += 1
            bins[bin].stated += score.probability
            bins[bin].right += score.right ? 1 : 0
        }
        value = bins.reduce(0) { $0 + abs($1.right - $1.stated) } / Double(max(1, scores.count))
    }

    /// The mean ECE of a perfectly calibrated forecaster stating the same probabilities on as many claims: each claim
    /// right with exactly its stated probability, over `draws` draws. ECE over a few hundred claims cannot be expected
    /// to fall below it (each bin's share right is a sample), so a figure near it is calibrated as far as it can show.
    public static func floor(_ scores: [Scored], draws: Int = 100) -> Double {
        var rng = SimulationGenerator(seed: 29)
        var total = 0.0
        for _ in 0..<draws {
            total += ExpectedCalibrationError(scores.map { Scored(probability: $0.probability, right: rng.unit() < $0.probability) }).value
        }
        return total / Double(draws)
    }
}

extension Duration {
    public var milliseconds: Double { Double(components.seconds) * 1000 + Double(components.attoseconds) * 1e-15 }
}
