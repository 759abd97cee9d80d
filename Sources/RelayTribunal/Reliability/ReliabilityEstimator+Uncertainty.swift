import RelayCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// How sure the estimate can be (issue 29). The Dawid–Skene fit alone treats each judge's record as
// known, and is overconfident exactly where judges are weak or few: with three judges of about
// 0.65 on true/false claims, the votes barely tell "all three alike" from "one nearly perfect, two
// near chance", and EM settles wherever the noise points. Integrating over Beta posteriors of each
// accuracy does not help: for one new claim it gives back the posterior means the fit already
// uses, and counts that treat EM's guessed truths as known are far too narrow (tribunal-sim:
// accuracies that move by ±0.10 from seed to seed, Beta spreads of ±0.02). So:
//
// 1. Resampled fits. The history is refitted `resamples` times, each claim counted a Poisson(1)
//    number of times and EM started afresh; their spread matches how far the fit moves between
//    histories. A new claim's P(truth, votes) is averaged over them. A resampled fit whose mix of
//    truths is far from the estimate's (`FittedReliability.readsTheSameClaims`) is left out: it
//    landed in another optimum altogether, which says nothing of how sure this one is. On true/false
//    claims with a judge that always says true, some fits read "every claim is true, that judge is
//    never wrong, the other four are coin flips"; averaged in, they called four judges' "false"
//    against its "true" true (tribunal-sim, always true, 2 verdicts, seed 8: the council 0.785
//    against a majority of 0.825, ECE 0.29; without them 0.820, ECE 0.08).
// 2. The panel view. Every judge's vote is counted as one judge's (the council's pooled record,
//    confidence bands included), except as far as the evidence singles a judge out (issue 48): each
//    judge's record there is the panel's pulled back towards its own, by how far its accuracy stands
//    from the panel's beyond the noise of its resampled fits (`shrinkage`). A judge within the noise
//    cannot be singled out there, so not the wrong one; an expert among weak judges, or a contrarian,
//    keeps its own record in both views. Counting every judge alike, the panel view gave an expert's
//    vote a weak judge's weight in 0.2–0.6 of the mix, and the council stayed near the majority
//    (tribunal-sim, stand-out among five and three, seeds 101–110: 0.903 and 0.883 against the expert's
//    0.904 and 0.909).
//    It is an estimate too, refitted to each resampled history beside the records and averaged the
//    same way; where the records may overrule the majority, each history's records are mixed with
//    that history's panel view. With three judges one fit of it can be far off on a rare verdict
//    (tribunal-sim, three .70/.65c/.60, seed 1: P(says true | partly) 0.05 at claim 222, 0.16 at
//    claim 399, about 0.13 in truth), and it overruled two "partly" votes for one "true" where the
//    records themselves backed the majority (the council 0.755 against a majority of 0.810).
// 3. Held-out weight. The claims are split into `folds`; each fold is scored by both views fitted on
//    the others, and the mixture weight is the one that predicts those claims (votes, and marks
//    where people marked) best. A claim never scores itself. The marked claims' held-out scores
//    are what the calibrator fits to people's marks. The folds count a sharing judge's vote by its
//    judge weight, as the fit does, not under the model that sees repeating (`RepeatedVerdicts.swift`)
//    that a new claim is weighed under: scored under that model, the judges' own records predict
//    held-out votes better and the panel view's weight falls (about 0.4 to 0.25), and on true/false
//    claims where the records read the wrong pair of judges as repeating, the council then follows
//    them (tribunal-sim, two share mistakes, 2 verdicts, seeds 11–20: ECE 0.089 → 0.107; the other
//    panels within 0.002).

extension ReliabilityEstimator {
    /// The name every vote takes in the panel view.
    static let panelName = "(the panel)"

    /// `estimate` with its resampled fits, the panel view, the view's held-out weight and the marked claims' held-out scores.
    func withUncertainty(_ estimate: ReliabilityEstimate, claims: [JudgedClaim], table: VoteTable, previous: ReliabilityEstimate?) -> ReliabilityEstimate {
        // Seeded by the history's size: the same ledger gives the same estimate.
        var generator = SplitMix64(seed: UInt64(claims.count))
        let panelTable =
            folds >= 2 ? VoteTable(claims.map { Self.panelView($0, prior: prior) }, bands: table.bands, judgeWeights: Self.panelWeights(table)) : nil
        let panel = panelTable.map { fit($0, previous: previous?.panel).fitted }
        var draws: [FittedReliability] = []
        var panelDraws: [FittedReliability] = []
        for _ in 0..<resamples {
            let weights = claims.indices.map { _ in generator.poisson() }
            var resampled = table
            resampled.weights = weights
            let own = settle(resampled, from: FittedReliability(table: resampled, prior: prior, previous: nil)).fitted
            guard own.readsTheSameClaims(as: estimate.fitted) else { continue }
            draws.append(own)
            if let panelTable, let panel {
                var resampledPanel = panelTable
                resampledPanel.weights = weights
                let fitted = settle(resampledPanel, from: FittedReliability(table: resampledPanel, prior: prior, previous: nil)).fitted
                // One in another optimum says nothing of how sure the panel view is (as for the records): the panel view stands in.
                panelDraws.append(fitted.readsTheSameClaims(as: panel) ? fitted : panel)
            }
        }
        guard let panel else { return ReliabilityEstimate(fitted: estimate.fitted, iterations: estimate.iterations, claimCount: claims.count, draws: draws) }
        let shrinkage = Self.shrinkage(fitted: estimate.fitted, panel: panel, draws: draws, panelDraws: panelDraws)
        let heldOut = heldOutScores(claims, judgeWeights: table.namedJudgeWeights, panelWeights: Self.panelWeights(table), shrinkage: shrinkage)
        return ReliabilityEstimate(
            fitted: estimate.fitted, iterations: estimate.iterations, claimCount: claims.count, draws: draws, panel: panel, panelDraws: panelDraws,
            panelWeight: heldOut.weight, shrinkage: shrinkage, heldOutSamples: heldOut.samples)
    }

    /// The panel view of a claim to learn from: every vote under one name; votes of models whose hand-set weight is 0 are left out.
    static func panelView(_ claim: JudgedClaim, prior: ReliabilityPrior) -> JudgedClaim {
        JudgedClaim(votes: ReliabilityEstimate.panelView(claim.votes, prior: prior).filter { $0.model == panelName }, mark: claim.mark)
    }

    /// The panel view's weight that best predicts held-out claims, and the marked claims' held-out scores under it.
    private func heldOutScores(_ claims: [JudgedClaim], judgeWeights: [String: Double], panelWeights: [String: Double], shrinkage: [String: Double]) -> (
        weight: Double, samples: [CalibrationSample]
    ) {
        let count = min(folds, claims.count)
        guard count >= 2 else { return (0.5, []) }
        let bands = ConfidenceBands(learning: prior.learnsConfidence)
        // Per held-out claim: log P(truth, votes) under each view, and its mark.
        var scored: [(own: PerTruth, alike: PerTruth, mark: Int?)] = []
        scored.reserveCapacity(claims.count)
        for fold in 0..<count {
            let training = claims.indices.filter { $0 % count != fold }.map { claims[$0] }
            let own = fit(VoteTable(training, bands: bands, judgeWeights: judgeWeights), previous: nil).fitted
            let panel = fit(VoteTable(training.map { Self.panelView($0, prior: prior) }, bands: bands, judgeWeights: panelWeights), previous: nil).fitted
            for index in stride(from: fold, to: claims.count, by: count) where claims[index].votes.contains(where: { $0.verdict != nil }) {
                let claim = claims[index]
                scored.append(
                    (
                        ReliabilityEstimate.logJoint(claim.votes, under: own),
                        // The pulls are the whole history's (one number a judge), not refitted per fold.
                        ReliabilityEstimate.logJoint(claim.votes, underPanel: panel, own: own, shrinkage: shrinkage, repeated: nil),
                        claim.mark?.reliabilityIndex
                    ))
            }
        }
        // What each view gave the claim as it happened: its votes, and the marked truth where there is one.
        let evidence = scored.map { claim in
            guard let mark = claim.mark else { return (own: Self.logSumExp(claim.own), alike: Self.logSumExp(claim.alike)) }
            return (own: claim.own[mark], alike: claim.alike[mark])
        }
        // Stacking: the weight that predicts the held-out claims best, held a little off 0 and 1 by a Beta(2, 2) prior.
        let weight = Self.maximise(in: 0...1) { weight in
            evidence.reduce(log(weight) + log(1 - weight)) { total, claim in
                let top = max(claim.own, claim.alike)
                return total + top + log((1 - weight) * exp(claim.own - top) + weight * exp(claim.alike - top))
            }
        }
        let samples = scored.compactMap { claim -> CalibrationSample? in
            guard let mark = claim.mark else { return nil }
            let posterior = VerdictPosterior(logOdds: ReliabilityEstimate.mix(claim.own, claim.alike, weight: weight), answered: true)
            guard let verdict = posterior.verdict else { return nil }
            return CalibrationSample(score: posterior.score, outcome: verdict.reliabilityIndex == mark ? 1 : 0)
        }
        return (weight, samples)
    }

    /// Per judge: how far the panel view pulls its record towards the panel's one record (1: all the way).
    ///
    /// Measured on each judge's accuracy against the panel's: d, the distance in the estimate, and s²,
    /// its variance over the resampled fits (each judge against its history's panel view). A judge no
    /// farther from the panel than its noise (d² ≤ s²) is counted alike; one farther is pulled by
    /// s² / d² (James–Stein's positive part, one judge at a time), so an expert among weak judges or a
    /// contrarian standing three noise deviations out keeps 8/9 of its own record. One judge at a time,
    /// not by the judges' spread around the panel (normal–normal empirical Bayes): there the one judge
    /// that stands out makes most of the spread itself, and an expert was pulled 0.4–0.8 of the way
    /// back to the weak judges' record on some histories. On accuracy, not its log-odds, which stretch
    /// an expert's noise near 1 (on one history of 300 claims that pulled it halfway back).
    static func shrinkage(fitted: FittedReliability, panel: FittedReliability, draws: [FittedReliability], panelDraws: [FittedReliability]) -> [String: Double]
    {
        guard draws.count >= 2, draws.count == panelDraws.count else { return [:] }
        let accuracy = { (fitted: FittedReliability, model: String) in ReliabilityEstimate.reliability(of: model, under: fitted).accuracy }
        let panelAccuracy = accuracy(panel, panelName)
        let panelAccuracies = panelDraws.map { accuracy($0, panelName) }
        var pulls: [String: Double] = [:]
        // A judge found repeating others' verdicts (counted for under 0.9 of a vote) keeps the panel's record: that agreement
        // inflates its own. Not every judge with a share: the check of all pairs together gives each a small one.
        for (index, model) in fitted.models.enumerated() where fitted.prior.weights[model] != 0 && fitted.judgeWeights[index] >= 0.9 {
            let distance = accuracy(fitted, model) - panelAccuracy
            let perDraw = zip(draws, panelAccuracies).map { accuracy($0, model) - $1 }
            let mean = perDraw.reduce(0, +) / Double(perDraw.count)
            let noise = perDraw.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(perDraw.count - 1)
            pulls[model] = distance * distance > noise ? noise / (distance * distance) : 1
        }
        return pulls
    }

    static func logSumExp(_ values: PerTruth) -> Double {
        let top = values.max()
        return top + log(PerTruth(exp(values[0] - top), exp(values[1] - top), exp(values[2] - top), exp(values[3] - top)).sum())
    }

    /// The maximum of a function with one peak on `range`, by golden-section search.
    static func maximise(in range: ClosedRange<Double>, _ function: (Double) -> Double) -> Double {
        let ratio = (5.0.squareRoot() - 1) / 2
        var low = range.lowerBound
        var high = range.upperBound
        var left = high - ratio * (high - low)
        var right = low + ratio * (high - low)
        var atLeft = function(left)
        var atRight = function(right)
        for _ in 0..<40 {
            if atLeft > atRight {
                high = right
                right = left
                atRight = atLeft
                left = high - ratio * (high - low)
                atLeft = function(left)
            } else {
                low = left
                left = right
                atLeft = atRight
                right = low + ratio * (high - low)
                atRight = function(right)
            }
        }
        return (low + high) / 2
    }
}

extension ReliabilityEstimate {
    /// Votes as the panel view scores them: all under one name, except those of models whose hand-set
    /// weight is 0, which keep theirs and so, unknown to the panel's fit, say nothing. (Kept rather
    /// than dropped, so both views give a probability to the same votes and can be mixed.)
    static func panelView(_ votes: [JudgedClaim.Vote], prior: ReliabilityPrior) -> [JudgedClaim.Vote] {
        votes.map { vote in
            prior.weights[vote.model] == 0 ? vote : JudgedClaim.Vote(model: ReliabilityEstimator.panelName, verdict: vote.verdict, confidence: vote.confidence)
        }
    }
}

extension SplitMix64 {
    /// How many times a claim counts in a resampled history: Poisson(1), by multiplying uniforms until below e⁻¹.
    mutating func poisson() -> Double {
        var count = 0.0
        var product = unit()
        while product > 0.367_879_441_171_442_3 {
            count += 1
            product *= unit()
        }
        return count
    }
}
