import RelayCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Learns how reliable each model is from the ledger alone, by how models agree and disagree (Dawid–Skene EM).
///
/// Each model has a confusion matrix, P(it says verdict l | the truth is k), and the truth of each
/// claim is unknown: EM alternates between the distribution of each claim's truth given the
/// matrices (E) and the matrices given those distributions (M). Priors keep a model with little
/// history near its prior accuracy and each row of its matrix near the model's overall accuracy
/// and the council's usual mistakes; a person's mark fixes a claim's truth. When the prior
/// learns confidence, each confidence band of a model gets its own matrix, pulled towards the
/// model's overall one, so a stated confidence counts only as far as history backs it.
public struct ReliabilityEstimator: Sendable {
    public var prior: ReliabilityPrior
    /// EM stops after this many rounds even if it has not settled.
    public var maxIterations: Int
    /// EM stops once no probability in the estimate moves by more than this in a round.
    public var tolerance: Double
    /// Refits on resampled histories (each claim counted a Poisson(1) number of times), whose spread
    /// stands for the uncertainty of every judge's record; a new claim's votes are combined under
    /// each and the results averaged. 0: the single fit, taken as known.
    public var resamples: Int
    /// Folds of held-out claims: each fold is scored by fits on the others, which weighs the panel
    /// view against the judges' own records and gives the scores people's marks calibrate. Below 2:
    /// neither, and marked claims are scored leave-one-out.
    public var folds: Int
    /// Rounds of looking for judges that agree more than their records explain (shared mistakes),
    /// each followed by a refit with their votes counted for less (see
    /// `ReliabilityEstimator+Dependence.swift`). 0: every vote counts in full.
    public var dependenceRounds: Int
    /// How much less likely (natural log) than the kept reading of who shares mistakes another may be
    /// and still count as an alternative (see `ReliabilityEstimator+Dependence.swift`); 0: none.
    public var ambiguity = 5.0
    /// Whether, among readings within `ambiguity` of the likeliest, the one whose verdicts on the history agree most
    /// often with the plain majority is kept (otherwise: the one in which fewer judges share mistakes).
    public var keepsMajorityReading = true

    /// When the learned records may overrule the plain majority; nil: always.
    public var overrule: MajorityOverrule? = MajorityOverrule()
    /// Whether the pairs without a share of their own are also checked together, for mistakes every judge makes a little together.
    public var pooledDependence = true

    public init(
        prior: ReliabilityPrior = ReliabilityPrior(), maxIterations: Int = 200, tolerance: Double = 1e-4, resamples: Int = 8, folds: Int = 5,
        dependenceRounds: Int = 3
    ) {
        self.prior = prior
        self.maxIterations = maxIterations
        self.tolerance = tolerance
        self.resamples = resamples
        self.folds = folds
        self.dependenceRounds = dependenceRounds
    }

    /// Estimates every model's reliability from `claims`, and how sure it can be of it.
    ///
    /// EM starts from the prior (in effect, each claim's majority verdict). An earlier estimate
    /// given as `previous` is a second start, and the fit that explains the votes better wins:
    /// resuming alone can stay in a poor optimum, such as "every claim is true" when one model
    /// always says true, that a fresh start avoids. With `resamples` and `folds` the estimate also
    /// carries the resampled fits, the panel view and its held-out weight (see
    /// `ReliabilityEstimator+Uncertainty.swift`).
    public func estimate(_ claims: [JudgedClaim], startingFrom previous: ReliabilityEstimate? = nil) -> ReliabilityEstimate {
        var estimate = learn(claims, startingFrom: previous)
        estimate.overrule = overrule
        estimate.markedCount = claims.count { $0.mark != nil }
        if overrule != nil { estimate.oneCoin = OneCoinPanel(learning: claims, prior: prior) }
        return estimate
    }

    private func learn(_ claims: [JudgedClaim], startingFrom previous: ReliabilityEstimate?) -> ReliabilityEstimate {
        var table = VoteTable(claims, bands: ConfidenceBands(learning: prior.learnsConfidence))
        var best = fit(table, previous: previous?.fitted)
        var alternatives: [ReliabilityEstimate.Alternative] = []
        if dependenceRounds > 0 { (table, best, alternatives) = weighingSharedMistakes(table, fitted: best) }
        var estimate = ReliabilityEstimate(fitted: best.fitted, iterations: best.iterations, claimCount: claims.count)
        if !claims.isEmpty, resamples > 0 || folds >= 2 { estimate = withUncertainty(estimate, claims: claims, table: table, previous: previous) }
        estimate.alternatives = alternatives
        return estimate
    }

    /// The better of a fresh start and, when given, a start from `previous`.
    func fit(_ table: VoteTable, previous: FittedReliability?) -> (fitted: FittedReliability, iterations: Int) {
        var best = settle(table, from: FittedReliability(table: table, prior: prior, previous: nil))
        if let previous {
            let resumed = settle(table, from: FittedReliability(table: table, prior: prior, previous: previous))
            // The votes cannot tell a fit from its mirror image (see `VoteTable+Majority.swift`): one that sides with the
            // majority on most claims is kept over one that does not, whatever the likelihoods.
            let sides = (fresh: table.sidesWithMajority(best.fitted), resumed: table.sidesWithMajority(resumed.fitted))
            if sides.fresh == sides.resumed ? resumed.logLikelihood > best.logLikelihood : sides.resumed { best = resumed }
        }
        return (best.fitted, best.iterations)
    }

    /// Runs EM from `start` until it settles; returns the fit, its rounds and the votes' log-likelihood under it.
    func settle(_ table: VoteTable, from start: FittedReliability) -> (fitted: FittedReliability, iterations: Int, logLikelihood: Double) {
        var fitted = start
        var iterations = 0
        while iterations < maxIterations {
            iterations += 1
            let next = FittedReliability(fitting: table.expectedCounts(under: fitted).counts, to: fitted)
            let change = next.largestChange(from: fitted)
            fitted = next
            if change < tolerance { break }
        }
        return (fitted, iterations, table.expectedCounts(under: fitted).logLikelihood)
    }
}

/// One value per possible truth, in `Verdict.allCases` order (true, false, partly, unverifiable).
typealias PerTruth = SIMD4<Double>

/// Which stated confidences share a confusion matrix: none, < 0.6, 0.6–0.75, 0.75–0.9, ≥ 0.9.
struct ConfidenceBands: Sendable, Hashable {
    /// Lower edges of the bands above the lowest; models state confidences in coarse steps, so few bands suffice.
    static let edges = [0.6, 0.75, 0.9]
    let count: Int

    init(learning: Bool) { count = learning ? Self.edges.count + 2 : 1 }

    /// The band of a stated confidence; 0 holds votes without one (and every vote when confidence is not learned).
    func band(of confidence: Double?) -> Int {
        guard count > 1, let confidence else { return 0 }
        return 1 + Self.edges.count(where: { confidence >= $0 })
    }
}

/// The history flattened for EM: each verdict as the index of its (model, band, verdict said), so a round is a pass over integers.
struct VoteTable: Sendable {
    let models: [String]
    let bands: ConfidenceBands
    /// `cells[claimStart[i]..<claimStart[i + 1]]` are claim i's verdicts.
    let claimStart: [Int]
    let cells: [Int]
    /// Per claim: the marked truth's index, or -1.
    let marks: [Int]
    /// Per claim: how many times it counts (a resampled history); nil: once each.
    var weights: [Double]?
    /// Per model: the share of a full vote its verdict counts for when weighing a claim's truth (below 1
    /// for judges that share mistakes with others); its own record still learns from every verdict.
    var judgeWeights: [Double]
    /// Which judges repeat each other, found with those weights; nil: none (see `RepeatedVerdicts.swift`).
    var repeated: RepeatedVerdicts?

    /// - Parameter judgeWeights: by model name; 1 for a model not named.
    init(_ claims: [JudgedClaim], bands: ConfidenceBands, judgeWeights named: [String: Double] = [:]) {
        let classes = Verdict.reliabilityClassCount
        var index: [String: Int] = [:]
        var models: [String] = []
        var claimStart = [0]
        var cells: [Int] = []
        claimStart.reserveCapacity(claims.count + 1)
        cells.reserveCapacity(claims.count * 5)
        for claim in claims {
            for vote in claim.votes {
                guard let verdict = vote.verdict else { continue }
                let model: Int
                if let known = index[vote.model] {
                    model = known
                } else {
                    model = models.count
                    index[vote.model] = model
                    models.append(vote.model)
                }
                cells.append((model * bands.count + bands.band(of: vote.confidence)) * classes + verdict.reliabilityIndex)
            }
            claimStart.append(cells.count)
        }
        self.models = models
        self.bands = bands
        self.claimStart = claimStart
        self.cells = cells
        self.marks = claims.map { $0.mark?.reliabilityIndex ?? -1 }
        judgeWeights = models.map { named[$0] ?? 1 }
    }

    /// The judge weights by model name, for a table of other claims by the same models.
    var namedJudgeWeights: [String: Double] { Dictionary(uniqueKeysWithValues: zip(models, judgeWeights)) }

    /// The E step: each claim's truth distribution under `fitted`, summed into expected counts, and the votes' log-likelihood.
    func expectedCounts(under fitted: FittedReliability) -> (counts: ExpectedCounts, logLikelihood: Double) {
        var counts = ExpectedCounts(models: models.count, bands: bands.count)
        let logClass = PerTruth(fitted.classFrequencies.indices.map { log(fitted.classFrequencies[$0]) })
        var logLikelihood = 0.0
        fitted.logBandConfusion.withUnsafeBufferPointer { logs in
            counts.votes.withUnsafeMutableBufferPointer { votes in
                for claim in marks.indices {
                    let weight = weights?[claim] ?? 1
                    guard weight > 0 else { continue }
                    let range = claimStart[claim]..<claimStart[claim + 1]
                    var logp = logClass
                    for vote in range { logp += logs[cells[vote]] }
                    var truth = PerTruth()
                    if marks[claim] >= 0 {
                        truth[marks[claim]] = weight
                        logLikelihood += weight * logp[marks[claim]]
                    } else {
                        let largest = logp.max()
                        let odds = PerTruth(exp(logp[0] - largest), exp(logp[1] - largest), exp(logp[2] - largest), exp(logp[3] - largest))
                        let total = odds.sum()
                        truth = odds * (weight / total)
                        logLikelihood += weight * (largest + log(total))
                    }
                    counts.classes += truth
                    for vote in range { votes[cells[vote]] += truth }
                }
            }
        }
        counts.claims = weights?.reduce(0, +) ?? Double(marks.count)
        return (counts, logLikelihood)
    }
}

/// Soft counts from an E step: how often each model, in each band, said each verdict, split by the truth.
struct ExpectedCounts: Sendable, Hashable {
    /// Indexed by (model, band, said); each element is split over the truths.
    var votes: [PerTruth]
    var classes = PerTruth()
    var claims = 0.0

    init(models: Int, bands: Int) {
        votes = [PerTruth](repeating: PerTruth(), count: models * bands * Verdict.reliabilityClassCount)
    }
}
