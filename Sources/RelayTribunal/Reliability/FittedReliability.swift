import RelayCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The M step's result: class frequencies and confusion matrices, each a posterior mean under its prior.
///
/// Matrices are stored by (model, [band,] said), each element holding P(says | truth) for every
/// truth at once, which is the shape the E step reads.
struct FittedReliability: Sendable {
    let prior: ReliabilityPrior
    let models: [String]
    let bands: ConfidenceBands
    /// The counts these parameters were fitted to; kept for warm starts and leave-one-out scores.
    let counts: ExpectedCounts
    let classFrequencies: PerTruth
    /// (model, said): the counts over all the model's bands.
    let pooled: [PerTruth]
    /// (model, said): P(says | truth) over all the model's votes.
    let confusion: [PerTruth]
    /// (model, band, said): P(says | truth) for votes in that confidence band.
    let bandConfusion: [PerTruth]
    /// log P(says | truth) per (model, band, said), times the model's judge weight: what a vote adds to a claim's log-odds.
    let logBandConfusion: [PerTruth]
    /// Per model: the share of a full vote its verdict counts for (see `VoteTable.judgeWeights`).
    let judgeWeights: [Double]
    /// Which judges repeat each other's verdicts; when set, a claim's votes are weighed under it, not by `judgeWeights`.
    var repeated: RepeatedVerdicts?
    /// Per model: its accuracy over all verdicts, the centre its rows are pulled towards.
    let overallAccuracy: [Double]
    /// (said): P(a wrong model says it | truth), pooled over models; 0 where said is the truth.
    let mistakes: [PerTruth]
    /// Per model: votes by which each confidence band's record is pulled towards the model's overall one
    /// (at least `prior.bandStrength`; more when its bands are no more right or wrong than chance explains).
    let bandStrengths: [Double]

    /// The starting point: the prior, or `previous` for the models it knows.
    init(table: VoteTable, prior: ReliabilityPrior, previous: FittedReliability?) {
        var counts = ExpectedCounts(models: table.models.count, bands: table.bands.count)
        if let previous, previous.bands == table.bands {
            // Reuse what the previous estimate learned, so EM resumes instead of restarting.
            let block = table.bands.count * Verdict.reliabilityClassCount
            let old = Dictionary(uniqueKeysWithValues: previous.models.enumerated().map { ($1, $0) })
            for (model, name) in table.models.enumerated() {
                guard let was = old[name] else { continue }
                counts.votes.replaceSubrange(model * block..<(model + 1) * block, with: previous.counts.votes[was * block..<(was + 1) * block])
            }
            counts.classes = previous.counts.classes
            counts.claims = previous.counts.claims
        }
        self.init(prior: prior, models: table.models, bands: table.bands, judgeWeights: table.judgeWeights, counts: counts)
        repeated = table.repeated
    }

    /// The M step: parameters fitted to `counts`, with the same prior and models as `current`.
    init(fitting counts: ExpectedCounts, to current: FittedReliability) {
        self.init(prior: current.prior, models: current.models, bands: current.bands, judgeWeights: current.judgeWeights, counts: counts)
        repeated = current.repeated
    }

    private init(prior: ReliabilityPrior, models: [String], bands: ConfidenceBands, judgeWeights: [Double], counts: ExpectedCounts) {
        let classes = Verdict.reliabilityClassCount
        self.prior = prior
        self.models = models
        self.bands = bands
        self.judgeWeights = judgeWeights
        self.counts = counts
        let frequencies = prior.frequencies
        classFrequencies = (counts.classes + prior.classStrength * PerTruth(frequencies)) / (counts.claims + prior.classStrength)

        var pooled = [PerTruth](repeating: PerTruth(), count: models.count * classes)
        for model in models.indices {
            for band in 0..<bands.count {
                for said in 0..<classes { pooled[model * classes + said] += counts.votes[(model * bands.count + band) * classes + said] }
            }
        }
        self.pooled = pooled

        // How the council errs, pooled over models: a row with few claims borrows its shape.
        var wrong = (0..<classes).map { said in
            var count = PerTruth(repeating: 1)
            for model in models.indices { count += pooled[model * classes + said] }
            count[said] = 0
            return count
        }
        let wrongTotal = wrong.reduce(PerTruth(), +)
        for said in 0..<classes { wrong[said] /= wrongTotal }
        mistakes = wrong

        // Each model's accuracy over all verdicts, from its prior and its record: a row with few claims borrows it.
        overallAccuracy = models.indices.map { model in
            var right = 0.0
            var total = 0.0
            for said in 0..<classes {
                right += pooled[model * classes + said][said]
                total += pooled[model * classes + said].sum()
            }
            return (right + prior.strength * prior.accuracy(of: models[model])) / (total + prior.strength)
        }

        let bandStrengths = models.indices.map { Self.bandStrength(of: $0, counts: counts, bands: bands, prior: prior) }
        self.bandStrengths = bandStrengths
        var confusion = [PerTruth](repeating: PerTruth(), count: pooled.count)
        var bandConfusion = [PerTruth](repeating: PerTruth(), count: counts.votes.count)
        for model in models.indices {
            let rows = (0..<classes).reduce(PerTruth()) { $0 + pooled[model * classes + $1] }
            for said in 0..<classes {
                let expected = Self.expected(said: said, accuracy: overallAccuracy[model], mistakes: mistakes)
                confusion[model * classes + said] = (pooled[model * classes + said] + prior.rowStrength * expected) / (rows + prior.rowStrength)
            }
            for band in 0..<bands.count {
                let first = (model * bands.count + band) * classes
                let bandRows = (0..<classes).reduce(PerTruth()) { $0 + counts.votes[first + $1] }
                for said in 0..<classes {
                    bandConfusion[first + said] =
                        (counts.votes[first + said] + bandStrengths[model] * confusion[model * classes + said]) / (bandRows + bandStrengths[model])
                }
            }
        }
        self.confusion = confusion
        self.bandConfusion = bandConfusion
        let perModel = bands.count * classes
        logBandConfusion = bandConfusion.indices.map { cell in
            let probabilities = bandConfusion[cell]
            return judgeWeights[cell / perModel] * PerTruth(log(probabilities[0]), log(probabilities[1]), log(probabilities[2]), log(probabilities[3]))
        }
    }

    /// How many votes pull a model's confidence bands towards its overall record: the prior's, or more when
    /// the bands' accuracies spread no more than their sampling noise.
    ///
    /// Each band's record costs parameters the votes must pay for. When a model's stated confidence says
    /// nothing (its bands are right about as often as each other), those parameters only fit noise, and
    /// on a small panel of true/false claims that noise is enough to read the wrong judge as the expert.
    /// So the spread of the bands' accuracies beyond binomial noise, τ² (method of moments, counting only
    /// what noise would rarely give), sets the pull as a normal–normal prior would: p(1 − p)/τ² votes,
    /// never fewer than `prior.bandStrength`.
    static func bandStrength(of model: Int, counts: ExpectedCounts, bands: ConfidenceBands, prior: ReliabilityPrior) -> Double {
        guard bands.count > 1, prior.poolsQuietBands else { return prior.bandStrength }
        let classes = Verdict.reliabilityClassCount
        var right = [Double](repeating: 0, count: bands.count)
        var total = [Double](repeating: 0, count: bands.count)
        for band in 0..<bands.count {
            for said in 0..<classes {
                let cell = counts.votes[(model * bands.count + band) * classes + said]
                right[band] += cell[said]
                total[band] += cell.sum()
            }
        }
        let votes = total.reduce(0, +)
        let used = total.count { $0 >= 1 }
        guard used > 1, votes > 0 else { return prior.bandStrength }
        let accuracy = right.reduce(0, +) / votes
        let noise = max(accuracy * (1 - accuracy), 1e-6)
        var spread = 0.0
        for band in 0..<bands.count where total[band] > 0 {
            let difference = right[band] / total[band] - accuracy
            spread += total[band] * difference * difference
        }
        // Noise alone gives spread/noise ≈ χ² with used − 1 degrees of freedom; only what lies beyond its mean plus two
        // standard deviations is counted, or a chance spread (a third of the time for two bands) would unpool the bands.
        let freedom = Double(used - 1)
        let between = (spread - (freedom + 2 * (2 * freedom).squareRoot()) * noise) / (votes - total.reduce(0) { $0 + $1 * $1 } / votes)
        guard between > 0 else { return Self.pooledBandStrength }
        return min(Self.pooledBandStrength, max(prior.bandStrength, noise / between))
    }

    /// The pull of bands whose accuracies differ by no more than noise: in effect, one record for the model.
    static let pooledBandStrength = 1e6

    /// What a model's P(says `said` | truth) is pulled towards: its accuracy where said is the truth, the council's way of erring elsewhere.
    static func expected(said: Int, accuracy: Double, mistakes: [PerTruth]) -> PerTruth {
        var expected = (1 - accuracy) * mistakes[said]
        expected[said] = accuracy
        return expected
    }

    /// The largest move of any probability between two fits of the same models.
    func largestChange(from other: FittedReliability) -> Double {
        var change = 0.0
        for (a, b) in zip(bandConfusion, other.bandConfusion) { change = max(change, (a - b).max(), (b - a).max()) }
        return max(change, (classFrequencies - other.classFrequencies).max(), (other.classFrequencies - classFrequencies).max())
    }

    /// Whether the two fits see about the same mix of truths: their class frequencies differ by at most
    /// `modeDistance` (total variation). Fits that do not are in different optima of the votes' likelihood,
    /// not two estimates of one (see `ReliabilityEstimator+Uncertainty.swift`).
    func readsTheSameClaims(as other: FittedReliability) -> Bool {
        let difference = classFrequencies - other.classFrequencies
        return (difference.replacing(with: -difference, where: difference .< 0)).sum() / 2 <= Self.modeDistance
    }

    /// Resampling 50 claims moves a class frequency by about 0.07 (one standard deviation); 0.2 is well beyond that.
    static let modeDistance = 0.2
}
