import RelayCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// Judges that share their mistakes (issue 29). Dawid–Skene assumes judges err independently given
// the truth. Two judges that repeat each other then look like two very accurate judges: their
// agreement is the model's only explanation, the posterior follows them, and the council falls
// below a plain majority (tribunal-sim, "two share mistakes": 0.84 against 0.88, ECE 0.085).
//
// So after a fit, every pair of judges is checked: on each claim both answered, the truth as the
// *other* votes (and a mark) tell it, and the pair's records, give the chance the two agree. Where
// they agree more often than that, beyond the noise, the excess is read as a share s of claims on
// which one repeats the other (agreeing = s + (1 − s) · expected). While the records are fitted, a
// judge's vote then counts for 1 / (1 + the sum of its shares) of a full vote when weighing a claim's
// truth, so two judges that always agree count as one; its record still learns from every verdict.
// The fit is repeated with those weights, which lowers the pair's inflated records, and the check
// again, a few rounds. A new claim's votes are weighed under the shares themselves, claim by claim
// (see `RepeatedVerdicts.swift`).
// A pair is checked only on claims where at least two other judges answered (or a person marked
// the claim): one other judge's word is too little truth to measure an excess against.
// The pairs without a share of their own are also checked together, for mistakes every judge makes
// a little together; in tribunal-sim's "shared mistakes" (hard claims that fool everyone) the fit
// absorbs that into higher accuracies and neither check finds it (see the issue 29 notes).
//
// The check is only as good as the truth it is made against. A fit that believes the two repeating
// judges (it explains their agreement best) reads the *other* judges as the ones sharing mistakes,
// and that reading is self-consistent. So the check is also made once against a fit of one EM round
// from the prior, where each claim's truth is still much its majority's, followed by one refit with
// those weights (checking again lets it drift to the other reading: on true/false claims, "two share
// mistakes", seeds 11-14, 0.72 against a majority of 0.81 with three checks from two EM rounds,
// 0.81 with one from one); of the two readings the one
// in which fewer judges share mistakes is kept (parsimony), then the one that needs less sharing.
// On true/false claims the votes hardly tell the readings apart: their likelihoods under a model
// that sees the repeating (a judge repeats another's verdict with their pair's share, otherwise
// votes by its record) differ by 1 to 2 nats in 400 claims. So when both are within `ambiguity` nats
// of the likeliest, the one whose verdicts on the history agree more often with the plain majority
// is kept: where the votes cannot tell, the neutral default decides (true/false claims, "two share
// mistakes", seeds 11-14: ECE 0.124 -> 0.091; 4 verdicts unchanged within 0.005). The other stays
// as an alternative: the posterior averages them by those likelihoods, and the records may overrule
// the majority only where every reading agrees.

extension ReliabilityEstimator {
    /// Standard deviations of the agreement count's noise an excess must exceed to count.
    static let dependenceNoise = 1.0

    /// `table` with the judge weights its shared mistakes call for, and the fit with them.
    /// The other reading comes too when the votes hardly tell the two apart (see `ReliabilityEstimate.Alternative`).
    func weighingSharedMistakes(_ table: VoteTable, fitted: (fitted: FittedReliability, iterations: Int)) -> (
        VoteTable, (fitted: FittedReliability, iterations: Int), [ReliabilityEstimate.Alternative]
    ) {
        var early = self
        early.maxIterations = 1
        let start = early.settle(table, from: FittedReliability(table: table, prior: prior, previous: nil)).fitted
        let readings = [refining(table, from: fitted), refining(table, from: (start, 1), rounds: 1)]
        // Kept: the reading in which fewer judges share mistakes, then the one that needs less sharing.
        let sharing = { (reading: (table: VoteTable, fit: (fitted: FittedReliability, iterations: Int), shared: Double, logLikelihood: Double)) in
            reading.table.judgeWeights.count { $0 < 0.95 }
        }
        var kept = readings.min { sharing($0) != sharing($1) ? sharing($0) < sharing($1) : $0.shared < $1.shared }!
        if keepsMajorityReading {
            let best = readings.map(\.logLikelihood).max()!
            let close = readings.filter { $0.logLikelihood > best - ambiguity }
            if close.count > 1 {
                kept = close.max { $0.table.majorityAgreement(under: $0.fit.fitted).agreeing < $1.table.majorityAgreement(under: $1.fit.fitted).agreeing }!
            }
        }
        // A reading that differs from the kept one and explains the votes nearly as well stays as an alternative,
        // unless it sees another mix of truths: then it is another optimum, such as "every claim is true" (see
        // `ReliabilityEstimator+Uncertainty.swift`), not another reading of who shares mistakes.
        let alternatives = readings.compactMap { reading -> ReliabilityEstimate.Alternative? in
            let odds = reading.logLikelihood - kept.logLikelihood
            let differs = zip(reading.table.judgeWeights, kept.table.judgeWeights).contains { abs($0 - $1) > 0.05 }
            guard differs, odds > -ambiguity, reading.fit.fitted.readsTheSameClaims(as: kept.fit.fitted) else { return nil }
            return ReliabilityEstimate.Alternative(fitted: reading.fit.fitted, odds: exp(odds))
        }
        return (kept.table, kept.fit, alternatives)
    }

    /// Checks for shared mistakes and refits with the weights they call for, from `start`, until the weights settle.
    private func refining(_ table: VoteTable, from start: (fitted: FittedReliability, iterations: Int), rounds: Int? = nil) -> (
        table: VoteTable, fit: (fitted: FittedReliability, iterations: Int), shared: Double, logLikelihood: Double
    ) {
        var table = table
        var fit = start
        var check = Self.dependence(table, under: fit.fitted, pooled: pooledDependence)
        for _ in 0..<(rounds ?? dependenceRounds) {
            guard zip(check.weights, table.judgeWeights).contains(where: { abs($0 - $1) > 0.01 }) else { break }
            table.judgeWeights = check.weights
            // Resumed, not restarted: a fresh start can fall back into the reading that was just checked away.
            let settled = settle(table, from: FittedReliability(table: table, prior: prior, previous: fit.fitted))
            fit = (settled.fitted, fit.iterations + settled.iterations)
            check = Self.dependence(table, under: fit.fitted, pooled: pooledDependence)
        }
        // The repeating found by the last check goes with the fit: a claim's votes are weighed under it (see `RepeatedVerdicts.swift`).
        table.repeated = RepeatedVerdicts(models: table.models, shares: check.pairs)
        fit.fitted.repeated = table.repeated
        return (table, fit, check.shared, Self.logLikelihood(table, under: fit.fitted, repeated: table.repeated))
    }

    /// Per model of `table`: the share of a full vote its verdict counts for, from how much more
    /// than `fitted` explains it agrees with each other judge.
    /// The second value is the sum of the pairs' shares: how much repeating the reading needs.
    static func dependence(_ table: VoteTable, under fitted: FittedReliability, pooled: Bool = true) -> (
        weights: [Double], shared: Double, pairs: [Double]
    ) {
        let models = table.models.count
        let classes = Verdict.reliabilityClassCount
        let bands = table.bands.count
        guard models >= 2 else { return ([Double](repeating: 1, count: models), 0, [Double](repeating: 0, count: models * models)) }
        var observed = [Double](repeating: 0, count: models * models)
        var expected = observed
        var variance = observed
        var pairs = observed
        let logClass = ReliabilityEstimate.logOf(fitted.classFrequencies)
        let logs = fitted.logBandConfusion
        for claim in table.marks.indices {
            let range = table.claimStart[claim]..<table.claimStart[claim + 1]
            // A pair is checked against the truth as at least two other votes tell it, or as a person marked it. Against one
            // other vote the "truth" is that judge's word: two good judges beside a liar agree far more than the liar's
            // verdicts let them expect, and read as sharing mistakes (tribunal-sim, three with a liar: both counted as
            // 0.85–0.91 of a vote on half the seeds; ECE 0.060, now 0.047). So on three-judge panels only marks can show it.
            guard range.count >= 4 || (table.marks[claim] >= 0 && range.count >= 2) else { continue }
            var logp = logClass
            for vote in range { logp += logs[table.cells[vote]] }
            for first in range {
                for second in range where second > first {
                    let a = table.cells[first]
                    let b = table.cells[second]
                    let (modelA, modelB) = (a / (bands * classes), b / (bands * classes))
                    guard modelA != modelB else { continue }
                    // The truth as the other votes tell it, or as a person marked it.
                    var truth = PerTruth()
                    if table.marks[claim] >= 0 {
                        truth[table.marks[claim]] = 1
                    } else {
                        let others = logp - logs[a] - logs[b]
                        let top = others.max()
                        truth = PerTruth(exp(others[0] - top), exp(others[1] - top), exp(others[2] - top), exp(others[3] - top))
                        truth /= truth.sum()
                    }
                    // P(both say the same | truth), from each one's record in its band.
                    var agree = PerTruth()
                    let (rowA, rowB) = (a - a % classes, b - b % classes)
                    for said in 0..<classes { agree += fitted.bandConfusion[rowA + said] * fitted.bandConfusion[rowB + said] }
                    let chance = min(max((truth * agree).sum(), 0), 1)
                    let pair = min(modelA, modelB) * models + max(modelA, modelB)
                    observed[pair] += a % classes == b % classes ? 1 : 0
                    expected[pair] += chance
                    variance[pair] += chance * (1 - chance)
                    pairs[pair] += 1
                }
            }
        }
        // A pair's own share where its excess stands out of its noise; the other pairs together give
        // one share for all of them, which catches mistakes every judge makes a little together.
        var own = [Double](repeating: 0, count: models * models)
        var rest = (observed: 0.0, expected: 0.0, variance: 0.0, pairs: 0.0)
        for first in 0..<models {
            for second in first + 1..<models {
                let pair = first * models + second
                let share = Self.excessShare(observed[pair], expected[pair], variance[pair], pairs[pair])
                own[pair] = share
                if share == 0 {
                    rest.observed += observed[pair]
                    rest.expected += expected[pair]
                    rest.variance += variance[pair]
                    rest.pairs += pairs[pair]
                }
            }
        }
        let common = pooled ? Self.excessShare(rest.observed, rest.expected, rest.variance, rest.pairs) : 0
        var shared = [Double](repeating: 0, count: models)
        var total = 0.0
        var shares = [Double](repeating: 0, count: models * models)
        for first in 0..<models {
            for second in first + 1..<models where pairs[first * models + second] > 0 {
                let share = max(own[first * models + second], common)
                shares[first * models + second] = share
                shares[second * models + first] = share
                shared[first] += share
                shared[second] += share
                total += share
            }
        }
        return (shared.map { 1 / (1 + $0) }, total, shares)
    }

    /// The votes' log-likelihood under `fitted` where judges repeat each other as `repeated` has it (see `RepeatedVerdicts.swift`).
    /// Unlike the fit's own likelihood it sees the repeating, so two readings of who shares mistakes can be compared.
    static func logLikelihood(_ table: VoteTable, under fitted: FittedReliability, repeated: RepeatedVerdicts?) -> Double {
        let classes = Verdict.reliabilityClassCount
        let perModel = table.bands.count * classes
        let logClass = ReliabilityEstimate.logOf(fitted.classFrequencies)
        var total = 0.0
        for claim in table.marks.indices {
            let range = table.claimStart[claim]..<table.claimStart[claim + 1]
            var logp = logClass
            for vote in range {
                let cell = table.cells[vote]
                var record = fitted.bandConfusion[cell]
                if let repeated {
                    let earlier = (range.lowerBound..<vote).lazy.map { (judge: table.cells[$0] / perModel, said: table.cells[$0] % classes) }
                    record = repeated.likelihood(record, judge: cell / perModel, said: cell % classes, after: earlier)
                }
                logp += ReliabilityEstimate.logOf(record)
            }
            if table.marks[claim] >= 0 {
                total += logp[table.marks[claim]]
            } else {
                total += ReliabilityEstimator.logSumExp(logp)
            }
        }
        return total
    }

    /// The share of repeated verdicts an agreement count implies beyond its noise: agreeing = s + (1 − s) · expected.
    static func excessShare(_ observed: Double, _ expected: Double, _ variance: Double, _ pairs: Double) -> Double {
        let excess = observed - expected - dependenceNoise * variance.squareRoot()
        let room = pairs - expected
        guard excess > 0, room > 0 else { return 0 }
        return min(1, excess / room)
    }

    /// The panel view's one judge weight: the mean of the judges' weights over their verdicts.
    static func panelWeights(_ table: VoteTable) -> [String: Double] {
        let perModel = table.bands.count * Verdict.reliabilityClassCount
        let total = table.cells.reduce(0) { $0 + table.judgeWeights[$1 / perModel] }
        return [panelName: table.cells.isEmpty ? 1 : total / Double(table.cells.count)]
    }
}
