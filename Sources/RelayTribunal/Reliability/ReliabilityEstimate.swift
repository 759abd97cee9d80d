public import RelayCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the estimator learned: every model's reliability and the verdicts' frequencies, ready to combine a new claim's votes.
///
/// A new claim's votes are combined two ways, each with its uncertainty, and the two mixed (see
/// `ReliabilityEstimator+Uncertainty.swift`): under each judge's own record, and under the panel
/// view, where every judge counts alike; each averaged over its fits to the same resampled
/// histories. The mixture's weight is what predicted held-out claims best.
public struct ReliabilityEstimate: Sendable {
    let fitted: FittedReliability
    /// EM rounds the estimate took.
    public let iterations: Int
    /// Claims in the history it was learned from.
    public let claimCount: Int
    /// Fits to resampled histories; empty: the single fit is taken as known.
    let draws: [FittedReliability]
    /// The panel view: every judge's votes counted as one judge's; nil when not learned.
    let panel: FittedReliability?
    /// The panel view fitted to each of the resampled histories of `draws`, pair by pair; empty without the panel view.
    let panelDraws: [FittedReliability]
    /// The panel view's share of the mixture, 0…1, from held-out claims.
    public let panelWeight: Double
    /// Per model: how far the panel view pulls its record towards the panel's one record, 0…1 (1 for a
    /// model not named): the evidence-based shrinkage of `ReliabilityEstimator+Uncertainty.swift`.
    public let shrinkage: [String: Double]
    /// The scores of the history's marked claims, each from fits that did not see it; nil when not computed.
    let heldOutSamples: [CalibrationSample]?
    /// When the records may overrule the plain majority; nil: always.
    var overrule: MajorityOverrule?
    /// Claims of the history that people marked.
    var markedCount = 0
    /// Other readings of who shares mistakes that explain the votes nearly as well as this one.
    var alternatives: [Alternative] = []

    /// Another reading of which judges share mistakes, and how likely it is against the kept one.
    struct Alternative: Sendable {
        var fitted: FittedReliability
        /// P(votes | this reading) / P(votes | the kept one): above 1 where the kept one won for needing fewer judges that share mistakes.
        var odds: Double
    }
    /// The one-coin panel: the majority's probability while it stands (see `OneCoinPanel.swift`).
    var oneCoin: OneCoinPanel?

    /// Per model: the share of a full vote its verdict counts for while the records are fitted, below 1 where it shares mistakes with other judges.
    public var judgeWeights: [String: Double] { Dictionary(uniqueKeysWithValues: zip(fitted.models, fitted.judgeWeights)) }

    /// The share of `model`'s verdicts that repeat each other model's, for the models it agrees with more than their
    /// records explain (shared mistakes; see `RepeatedVerdicts.swift`); empty when it shares none.
    public func repeats(of model: String) -> [String: Double] { fitted.repeated?.shares(of: model) ?? [:] }

    init(
        fitted: FittedReliability, iterations: Int, claimCount: Int, draws: [FittedReliability] = [], panel: FittedReliability? = nil,
        panelDraws: [FittedReliability] = [], panelWeight: Double = 0, shrinkage: [String: Double] = [:], heldOutSamples: [CalibrationSample]? = nil
    ) {
        precondition(panelDraws.isEmpty || panelDraws.count == draws.count, "the panel view's resampled fits pair with the records'")
        self.fitted = fitted
        self.iterations = iterations
        self.claimCount = claimCount
        self.draws = draws
        self.panel = panel
        self.panelDraws = panelDraws
        self.panelWeight = panelWeight
        self.shrinkage = shrinkage
        self.heldOutSamples = heldOutSamples
    }

    /// The estimate before any history: every model at its prior.
    public init(prior: ReliabilityPrior = ReliabilityPrior()) {
        self = ReliabilityEstimator(prior: prior).estimate([])
    }

    /// How often each verdict is the truth, as learned.
    public var classFrequencies: [Verdict: Double] {
        Dictionary(uniqueKeysWithValues: Verdict.allCases.map { ($0, fitted.classFrequencies[$0.reliabilityIndex]) })
    }

    /// Every model in the history, in the order first seen.
    public var models: [ModelReliability] { fitted.models.map { reliability(of: $0) } }

    /// The reliability of `model`; a model without history gets its prior.
    public func reliability(of model: String) -> ModelReliability {
        var record = Self.reliability(of: model, under: fitted)
        // How far its accuracy moves between fits to resampled histories: the uncertainty of the record.
        let accuracies = draws.compactMap { $0.models.contains(model) ? Self.reliability(of: model, under: $0).accuracy : nil }
        if accuracies.count > 1 {
            let mean = accuracies.reduce(0, +) / Double(accuracies.count)
            record.spread = (accuracies.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(accuracies.count - 1)).squareRoot()
        }
        return record
    }

    static func reliability(of model: String, under fitted: FittedReliability) -> ModelReliability {
        let classes = Verdict.reliabilityClassCount
        // Columns are P(says | every truth); the record wants rows by truth.
        let columns: [PerTruth]
        var votes = 0.0
        if let index = fitted.models.firstIndex(of: model) {
            columns = Array(fitted.confusion[index * classes..<(index + 1) * classes])
            votes = columns.indices.reduce(0) { $0 + fitted.pooled[index * classes + $1].sum() }
        } else {
            columns = (0..<classes).map { priorProbabilities(of: $0, model: model, prior: fitted.prior) }
        }
        let rows = (0..<classes).map { truth in columns.map { $0[truth] } }
        return ModelReliability(model: model, votes: Int(votes.rounded()), confusion: rows, classFrequencies: (0..<classes).map { fitted.classFrequencies[$0] })
    }

    /// The distribution of the truth given a claim's votes.
    ///
    /// Under each judge's own record (averaged over the resampled fits, when there are any, and with
    /// the other reading of who shares mistakes, when there is one), and under the panel view
    /// (averaged over its fits to the same histories), mixed by `panelWeight`: P(truth, votes) of the
    /// two views, then normalised. The verdict is the plain majority's unless `overrule` lets the
    /// records overrule it (see `MajorityOverrule.swift`); while the majority stands, its probability
    /// is the one-coin panel's (see `OneCoinPanel.swift`).
    public func posterior(_ votes: [JudgedClaim.Vote]) -> VerdictPosterior {
        let answered = votes.contains { $0.verdict != nil }
        let alikePerDraw = zip(draws, panelDraws).map { Self.logJoint(votes, underPanel: $1, own: $0, shrinkage: shrinkage, repeated: fitted.repeated) }
        let alike =
            alikePerDraw.isEmpty
            ? panel.map { Self.logJoint(votes, underPanel: $0, own: fitted, shrinkage: shrinkage, repeated: fitted.repeated) } : Self.logMeanExp(alikePerDraw)
        let mix = { (own: PerTruth, alike: PerTruth?) in alike.map { panelWeight > 0 ? Self.mix(own, $0, weight: panelWeight) : own } ?? own }
        let mixed = { (own: PerTruth) in mix(own, alike) }
        let perDraw = draws.map { Self.logJoint(votes, under: $0) }
        var own = perDraw.isEmpty ? Self.logJoint(votes, under: fitted) : Self.logMeanExp(perDraw)
        // Averaged with the other readings of who shares mistakes, by how well each explains the votes.
        let others = alternatives.map { Self.logJoint(votes, under: $0.fitted) }
        for (alternative, other) in zip(alternatives, others) {
            own = Self.mix(own, other, weight: alternative.odds / (1 + alternative.odds))
        }
        var posterior = VerdictPosterior(logOdds: mixed(own), answered: answered)
        guard let overrule, let verdict = posterior.verdict, let majority = MajorityOverrule.majority(votes, prior: fitted.prior) else { return posterior }
        let early = !overrule.allows(claims: claimCount, marked: markedCount)
        if verdict != majority && !early {
            // Each resampled history's records with its own panel view: the panel view is an estimate too, and on three
            // judges one fit of it can read two "partly" votes as weaker than one "true" where the records do not.
            let agreeing = perDraw.indices.count { draw in
                let view = alikePerDraw.isEmpty ? alike : alikePerDraw[draw]
                return VerdictPosterior(logOdds: mix(perDraw[draw], view), answered: true).verdict == verdict
            }
            let readingsAgree = others.allSatisfy { VerdictPosterior(logOdds: mixed($0), answered: true).verdict == verdict }
            if readingsAgree && Double(agreeing) >= overrule.agreeingShare * Double(max(1, perDraw.count)) { return posterior }
        }
        guard early || verdict != majority else { return posterior }
        // The majority stands: its probability as the one-coin panel gives it, which counts every judge alike as the
        // majority does (the records just judged too unsure to overrule it would otherwise call it unlikely).
        if let oneCoin {
            posterior = VerdictPosterior(logOdds: Self.logOf(oneCoin.posterior(votes, prior: fitted.prior)), answered: true)
        }
        posterior.verdict = majority
        posterior.score = posterior.probability(of: majority)
        return posterior
    }

    /// log P(truth, votes) for every truth, each vote weighted by the log-likelihoods its model's record implies,
    /// or, where the fit found judges repeating each other, under the model that sees it (see `RepeatedVerdicts.swift`).
    static func logJoint(_ votes: [JudgedClaim.Vote], under fitted: FittedReliability) -> PerTruth {
        if let repeated = fitted.repeated { return logJoint(votes, records: fitted, repeated: repeated) }
        var logp = logOf(fitted.classFrequencies)
        for vote in votes {
            guard let verdict = vote.verdict else { continue }
            if let index = fitted.models.firstIndex(of: vote.model) {
                logp +=
                    fitted.logBandConfusion[
                        (index * fitted.bands.count + fitted.bands.band(of: vote.confidence)) * Verdict.reliabilityClassCount + verdict.reliabilityIndex]
            } else {
                logp += logOf(priorProbabilities(of: verdict.reliabilityIndex, model: vote.model, prior: fitted.prior))
            }
        }
        return logp
    }

    /// log P(truth, votes) under the panel view: every vote by the panel's one record, pulled back towards its
    /// judge's own record (`own`) as far as `shrinkage` leaves it (0: all the way), repeating as the judges' own fit found it.
    static func logJoint(
        _ votes: [JudgedClaim.Vote], underPanel panel: FittedReliability, own: FittedReliability, shrinkage: [String: Double], repeated: RepeatedVerdicts?
    ) -> PerTruth {
        let classes = Verdict.reliabilityClassCount
        let panelRecord = panel.models.firstIndex(of: ReliabilityEstimator.panelName)
        var logp = logOf(panel.classFrequencies)
        var earlier: [(judge: Int, said: Int)] = []
        for vote in votes {
            guard let said = vote.verdict?.reliabilityIndex else { continue }
            // A model whose hand-set weight is 0 is not in the panel: its prior makes its vote say nothing.
            guard panel.prior.weights[vote.model] != 0, let panelRecord else {
                logp += logOf(priorProbabilities(of: said, model: vote.model, prior: panel.prior))
                continue
            }
            var record = panel.bandConfusion[(panelRecord * panel.bands.count + panel.bands.band(of: vote.confidence)) * classes + said]
            // Without the model that sees repeating, a vote counts for the panel's judge weight, as in the panel's fit (a
            // judge's own weight there, as far as it keeps its own record, let a repeating pair's records through: tribunal-sim,
            // two share mistakes, true/false claims, seeds 101–110, ECE 0.068 → 0.123).
            let weight = panel.judgeWeights[panelRecord]
            let pull = shrinkage[vote.model] ?? 1
            if pull < 1, let index = own.models.firstIndex(of: vote.model) {
                let ownRecord = own.bandConfusion[(index * own.bands.count + own.bands.band(of: vote.confidence)) * classes + said]
                record = pull * record + (1 - pull) * ownRecord
            }
            guard let repeated, let judge = repeated.models.firstIndex(of: vote.model) else {
                logp += weight * logOf(record)
                continue
            }
            logp += logOf(repeated.likelihood(record, judge: judge, said: said, after: earlier))
            earlier.append((judge, said))
        }
        return logp
    }

    /// log P(truth, votes) where judges repeat each other as `repeated` has it, each vote by its model's own record.
    private static func logJoint(_ votes: [JudgedClaim.Vote], records fitted: FittedReliability, repeated: RepeatedVerdicts) -> PerTruth {
        let classes = Verdict.reliabilityClassCount
        var logp = logOf(fitted.classFrequencies)
        var earlier: [(judge: Int, said: Int)] = []
        for vote in votes {
            guard let verdict = vote.verdict?.reliabilityIndex else { continue }
            guard let record = fitted.models.firstIndex(of: vote.model) else {
                logp += logOf(priorProbabilities(of: verdict, model: vote.model, prior: fitted.prior))
                continue
            }
            let said = fitted.bandConfusion[(record * fitted.bands.count + fitted.bands.band(of: vote.confidence)) * classes + verdict]
            guard let judge = repeated.models.firstIndex(of: vote.model) else {
                logp += logOf(said)
                continue
            }
            logp += logOf(repeated.likelihood(said, judge: judge, said: verdict, after: earlier))
            earlier.append((judge, verdict))
        }
        return logp
    }

    /// log((1 − weight) · e^a + weight · e^b), per truth.
    static func mix(_ a: PerTruth, _ b: PerTruth, weight: Double) -> PerTruth {
        let top = max(a.max(), b.max())
        return PerTruth((0..<Verdict.reliabilityClassCount).map { log((1 - weight) * exp(a[$0] - top) + weight * exp(b[$0] - top)) + top })
    }

    /// log of the mean of e^x over `values`, per truth.
    static func logMeanExp(_ values: [PerTruth]) -> PerTruth {
        let top = values.reduce(PerTruth(repeating: -.infinity)) { $0.replacing(with: $1, where: $1 .> $0) }
        var sum = PerTruth()
        for value in values { sum += PerTruth(exp(value[0] - top[0]), exp(value[1] - top[1]), exp(value[2] - top[2]), exp(value[3] - top[3])) }
        return logOf(sum / Double(values.count)) + top
    }

    /// For each marked claim: the score the estimate gives it without counting that claim, and whether its verdict matched the mark.
    ///
    /// Scored without the claim, the scores are honest: its own mark would otherwise have taught the
    /// estimate its answer. With held-out folds these are the scores of the marked claims of the
    /// history the estimate was learned from, each by fits on the other folds, and `history` is not
    /// read; without them, each claim of `history` is scored by the fit less its own counts (one M
    /// step, the other claims' truths held).
    public func calibrationSamples(_ history: [JudgedClaim]) -> [CalibrationSample] {
        if let heldOutSamples { return heldOutSamples }
        let prior = fitted.prior
        let counts = fitted.counts
        return history.compactMap { claim in
            guard let mark = claim.mark?.reliabilityIndex else { return nil }
            var known = PerTruth()
            known[mark] = 1
            let classes = (counts.classes - known).replacing(with: 0, where: counts.classes - known .< 0)
            var logp = Self.logOf((classes + prior.classStrength * PerTruth(prior.frequencies)) / (max(0, counts.claims - 1) + prior.classStrength))
            var answered = false
            for vote in claim.votes {
                guard let verdict = vote.verdict else { continue }
                answered = true
                logp += Self.logOf(leaveOneOut(model: vote.model, band: fitted.bands.band(of: vote.confidence), said: verdict.reliabilityIndex, marked: mark))
            }
            let posterior = VerdictPosterior(logOdds: logp, answered: answered)
            guard let verdict = posterior.verdict else { return nil }
            return CalibrationSample(score: posterior.score, outcome: verdict.reliabilityIndex == mark ? 1 : 0)
        }
    }

    /// P(says | truth) for one vote, refitted without it where the truth is `marked` (the only truth its claim counted towards).
    private func leaveOneOut(model: String, band: Int, said: Int, marked: Int) -> PerTruth {
        guard let index = fitted.models.firstIndex(of: model) else { return Self.priorProbabilities(of: said, model: model, prior: fitted.prior) }
        let classes = Verdict.reliabilityClassCount
        let prior = fitted.prior
        var probabilities = fitted.bandConfusion[cell(model: index, band: band, said: said)]
        // The model's overall row for the marked truth, less this vote; then its band's row, less it too.
        let row = (0..<classes).reduce(0) { $0 + fitted.pooled[index * classes + $1][marked] }
        let expected = FittedReliability.expected(said: said, accuracy: fitted.overallAccuracy[index], mistakes: fitted.mistakes)[marked]
        let overall = (max(0, fitted.pooled[index * classes + said][marked] - 1) + prior.rowStrength * expected) / (max(0, row - 1) + prior.rowStrength)
        let bandRow = (0..<classes).reduce(0) { $0 + fitted.counts.votes[cell(model: index, band: band, said: $1)][marked] }
        let bandSaid = fitted.counts.votes[cell(model: index, band: band, said: said)][marked]
        let pull = fitted.bandStrengths[index]
        probabilities[marked] = (max(0, bandSaid - 1) + pull * overall) / (max(0, bandRow - 1) + pull)
        return probabilities
    }

    /// P(says | truth) for a model the history has not seen: its prior accuracy, its mistakes spread evenly.
    ///
    /// Evenly rather than the council's way, so that a weight of 0 (accuracy 1/4) makes its vote say nothing at all.
    static func priorProbabilities(of said: Int, model: String, prior: ReliabilityPrior) -> PerTruth {
        let accuracy = prior.accuracy(of: model)
        var probabilities = PerTruth(repeating: (1 - accuracy) / Double(Verdict.reliabilityClassCount - 1))
        probabilities[said] = accuracy
        return probabilities
    }

    private func cell(model: Int, band: Int, said: Int) -> Int { (model * fitted.bands.count + band) * Verdict.reliabilityClassCount + said }

    static func logOf(_ values: PerTruth) -> PerTruth { PerTruth(log(values[0]), log(values[1]), log(values[2]), log(values[3])) }
}

/// One model's learned record.
public struct ModelReliability: Sendable, Hashable {
    public var model: String
    /// Verdicts it gave in the history; 0 means the figures are its prior.
    public var votes: Int
    /// P(it says column | the truth is row), rows and columns in `Verdict.allCases` order.
    public var confusion: [[Double]]
    /// The chance its verdict is right, over the learned mix of true, false, partly and unverifiable claims.
    public var accuracy: Double
    /// What its verdict tells about the truth (mutual information, bits): the expected weight of its vote; 0 for a model that always says the same.
    public var information: Double
    /// How sure the accuracy is: its standard deviation over the fits to resampled histories (0 when there were none).
    public var spread = 0.0

    init(model: String, votes: Int, confusion: [[Double]], classFrequencies: [Double]) {
        self.model = model
        self.votes = votes
        self.confusion = confusion
        let classes = classFrequencies.indices
        accuracy = classes.reduce(0) { $0 + classFrequencies[$1] * confusion[$1][$1] }
        let said = classes.map { column in classes.reduce(0) { $0 + classFrequencies[$1] * confusion[$1][column] } }
        var information = 0.0
        for truth in classes {
            for column in classes where confusion[truth][column] > 0 && said[column] > 0 {
                information += classFrequencies[truth] * confusion[truth][column] * log2(confusion[truth][column] / said[column])
            }
        }
        self.information = max(0, information)
    }

    /// P(it says `said` | the truth is `truth`).
    public func probability(of said: Verdict, given truth: Verdict) -> Double {
        confusion[truth.reliabilityIndex][said.reliabilityIndex]
    }
}

/// The distribution of a claim's truth over the verdicts, given its votes.
public struct VerdictPosterior: Sendable, Hashable {
    /// P(truth), in `Verdict.allCases` order.
    public var probabilities: [Double]
    /// The most probable verdict; nil when no model gave one.
    public var verdict: Verdict?
    /// The probability that `verdict` is right (uncalibrated: see `ScoreCalibrator`).
    public var score: Double

    init(logOdds: PerTruth, answered: Bool) {
        let odds = (0..<Verdict.reliabilityClassCount).map { exp(logOdds[$0] - logOdds.max()) }
        let total = odds.reduce(0, +)
        let probabilities = odds.map { $0 / total }
        self.probabilities = probabilities
        // Ties go the way Agreement breaks them: true › partly › false › unverifiable.
        let order: [Verdict] = [.true, .partly, .false, .unverifiable]
        let best = order.max { probabilities[$0.reliabilityIndex] < probabilities[$1.reliabilityIndex] }!
        verdict = answered ? best : nil
        score = answered ? probabilities[best.reliabilityIndex] : 0
    }

    /// P(the truth is `verdict`).
    public func probability(of verdict: Verdict) -> Double { probabilities[verdict.reliabilityIndex] }
}
