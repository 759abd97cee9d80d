import RelayCore
import RelayTribunal

/// What one panel scored on one seed, over its last `recent` claims.
struct PanelScore {
    var bestSingle = 0.0
    var majority = 0.0
    var today = 0.0
    var learned = 0.0
    var oracle = 0.0
    /// Learned minus best single judge, and minus plain majority, on the same claims.
    var overBest = 0.0
    var overMajority = 0.0
    var learnedECE = 0.0
    var oracleECE = 0.0
    var todayECE = 0.0
    /// Mean time of one re-estimate (EM plus the calibrator's leave-one-out scores), in milliseconds.
    var estimateMilliseconds = 0.0
}

/// Runs a panel claim by claim, the council learning as it goes: each claim is judged with the
/// estimate from the claims before it, then joins the history.
struct PanelRun {
    var panel: Panel
    var claims: Int
    var recent: Int
    var reestimateEvery: Int
    var prior = ReliabilityPrior()

    func run(seed: UInt64) -> PanelScore {
        var rng = SplitMix64(seed: seed)
        // Marks draw from their own stream, so marking claims does not change the claims or the votes.
        var marking = SplitMix64(seed: ~seed)
        let estimator = ReliabilityEstimator(prior: prior)
        var estimate = ReliabilityEstimate(prior: prior)
        var calibrator = ScoreCalibrator(samples: [])
        var history: [JudgedClaim] = []
        var judgeRight = [Int](repeating: 0, count: panel.judges.count)
        var judgeAnswered = [Int](repeating: 0, count: panel.judges.count)
        var right = (majority: 0, today: 0, learned: 0, oracle: 0)
        var learnedScores: [(Double, Bool)] = []
        var oracleScores: [(Double, Bool)] = []
        var todayScores: [(Double, Bool)] = []
        var estimating = Duration.zero
        var estimates = 0
        let clock = ContinuousClock()

        for index in 0..<claims {
            if index > 0 && index % reestimateEvery == 0 {
                let started = clock.now
                estimate = estimator.estimate(history, startingFrom: estimate)
                calibrator = ScoreCalibrator(samples: estimate.calibrationSamples(history))
                estimating += started.duration(to: clock.now)
                estimates += 1
            }
            let claim = panel.drawClaim(using: &rng)
            let votes = panel.judges.map { $0.vote(on: claim, in: panel.world, using: &rng) }
            let truth = Verdict.allCases[claim.truth]

            let posterior = estimate.posterior(votes)
            let oracle = panel.oracle(votes)
            let oracleVerdict = oracle.indices.max { oracle[$0] < oracle[$1] }!
            let today = Agreement.compute(votes.map { Self.ballot($0, confidence: $0.confidence) })
            // A plain majority: every answer at full confidence, so each counts once (ties as Agreement breaks them).
            let majority = Agreement.compute(votes.map { Self.ballot($0, confidence: 1) })

            if index >= claims - recent {
                // A judge is scored on the claims it gave a verdict on: its silences do not count against it.
                for (judge, vote) in votes.enumerated() where vote.verdict != nil {
                    judgeAnswered[judge] += 1
                    if vote.verdict == truth { judgeRight[judge] += 1 }
                }
                if majority.verdict == truth { right.majority += 1 }
                if today.verdict == truth { right.today += 1 }
                if posterior.verdict == truth { right.learned += 1 }
                if oracleVerdict == claim.truth { right.oracle += 1 }
                learnedScores.append((calibrator.calibrated(posterior.score), posterior.verdict == truth))
                oracleScores.append((oracle[oracleVerdict], oracleVerdict == claim.truth))
                todayScores.append((today.agreement, today.verdict == truth))
            }

            // A person marks the claim after the council answered; only true, false and partly are marked.
            let marked = marking.unit() < panel.world.markShare && truth != .unverifiable
            history.append(JudgedClaim(votes: votes, mark: marked ? truth : nil))
        }

        let share = { (count: Int) in Double(count) / Double(recent) }
        let bestSingle = zip(judgeRight, judgeAnswered).map { Double($0) / Double(max(1, $1)) }.max() ?? 0
        return PanelScore(
            bestSingle: bestSingle, majority: share(right.majority), today: share(right.today), learned: share(right.learned),
            oracle: share(right.oracle), overBest: share(right.learned) - bestSingle, overMajority: share(right.learned - right.majority),
            learnedECE: Self.expectedCalibrationError(learnedScores), oracleECE: Self.expectedCalibrationError(oracleScores),
            todayECE: Self.expectedCalibrationError(todayScores), estimateMilliseconds: estimates > 0 ? estimating.milliseconds / Double(estimates) : 0)
    }

    static func ballot(_ vote: JudgedClaim.Vote, confidence: Double?) -> Ballot {
        Ballot(model: vote.model, weight: 1, parsed: ParsedVerdict(verdict: vote.verdict, confidence: confidence, answer: ""))
    }

    /// ECE over 10 equal-width bins: the share-weighted gap between stated probability and observed accuracy.
    static func expectedCalibrationError(_ scores: [(score: Double, right: Bool)]) -> Double {
        var count = [Int](repeating: 0, count: 10)
        var stated = [Double](repeating: 0, count: 10)
        var hits = [Double](repeating: 0, count: 10)
        for (score, right) in scores {
            let bin = min(9, max(0, Int(score * 10)))
            count[bin] += 1
            stated[bin] += score
            hits[bin] += right ? 1 : 0
        }
        let gaps = (0..<10).map { abs(hits[$0] - stated[$0]) }
        return gaps.reduce(0, +) / Double(max(1, scores.count))
    }
}

extension Duration {
    var milliseconds: Double { Double(components.seconds) * 1000 + Double(components.attoseconds) * 1e-15 }
}
