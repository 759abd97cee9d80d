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
// which one repeats the other (agreeing = s + (1 − s) · expected). A judge's vote then counts for
// 1 / (1 + the sum of its shares) of a full vote when weighing a claim's truth, so two judges that
// always agree count as one; its record still learns from every verdict. The fit is repeated with
// those weights, which lowers the pair's inflated records, and the check again, a few rounds.
// Where every judge errs a little together (hard claims that fool everyone), every vote counts a
// little less, which is what keeps the probability from the overconfidence of independence.
//
// The check is only as good as the truth it is made against. A fit that believes the two repeating
// judges (it explains their agreement best) reads the *other* judges as the ones sharing mistakes,
// and that reading is self-consistent. So the check also starts from a fit of two EM rounds from
// the prior, where each claim's truth is still much its majority's, and of the two readings the one
// that needs less shared mistakes to explain the votes is kept (parsimony).

extension ReliabilityEstimator {
    /// Standard deviations of the agreement count's noise an excess must exceed to count.
    static let dependenceNoise = 1.0

    /// `table` with the judge weights its shared mistakes call for, and the fit with them.
    func weighingSharedMistakes(_ table: VoteTable, fitted: (fitted: FittedReliability, iterations: Int)) -> (
        VoteTable, (fitted: FittedReliability, iterations: Int)
    ) {
        var early = self
        early.maxIterations = 2
        let start = early.settle(table, from: FittedReliability(table: table, prior: prior, previous: nil)).fitted
        let readings = [refining(table, from: fitted), refining(table, from: (start, 2))]
        let kept = readings.min { $0.shared < $1.shared }!
        return (kept.table, kept.fit)
    }

    /// Checks for shared mistakes and refits with the weights they call for, from `start`, until the weights settle.
    private func refining(_ table: VoteTable, from start: (fitted: FittedReliability, iterations: Int)) -> (
        table: VoteTable, fit: (fitted: FittedReliability, iterations: Int), shared: Double
    ) {
        var table = table
        var fit = start
        var check = Self.dependence(table, under: fit.fitted, pooled: pooledDependence)
        for _ in 0..<dependenceRounds {
            guard zip(check.weights, table.judgeWeights).contains(where: { abs($0 - $1) > 0.01 }) else { break }
            table.judgeWeights = check.weights
            // Resumed, not restarted: a fresh start can fall back into the reading that was just checked away.
            let settled = settle(table, from: FittedReliability(table: table, prior: prior, previous: fit.fitted))
            fit = (settled.fitted, fit.iterations + settled.iterations)
            check = Self.dependence(table, under: fit.fitted, pooled: pooledDependence)
        }
        return (table, fit, check.shared)
    }

    /// Per model of `table`: the share of a full vote its verdict counts for, from how much more
    /// than `fitted` explains it agrees with each other judge.
    /// The second value is the sum of the pairs' shares: how much repeating the reading needs.
    static func dependence(_ table: VoteTable, under fitted: FittedReliability, pooled: Bool = true) -> (weights: [Double], shared: Double) {
        let models = table.models.count
        let classes = Verdict.reliabilityClassCount
        let bands = table.bands.count
        guard models >= 2 else { return ([Double](repeating: 1, count: models), 0) }
        var observed = [Double](repeating: 0, count: models * models)
        var expected = observed
        var variance = observed
        var pairs = observed
        let logClass = ReliabilityEstimate.logOf(fitted.classFrequencies)
        let logs = fitted.logBandConfusion
        for claim in table.marks.indices {
            let range = table.claimStart[claim]..<table.claimStart[claim + 1]
            guard range.count >= 2 else { continue }
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
        for first in 0..<models {
            for second in first + 1..<models where pairs[first * models + second] > 0 {
                let share = max(own[first * models + second], common)
                shared[first] += share
                shared[second] += share
                total += share
            }
        }
        return (shared.map { 1 / (1 + $0) }, total)
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
