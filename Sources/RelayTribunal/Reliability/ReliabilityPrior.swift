public import RelayCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the estimator believes before any history: the prior a model with few claims falls back to.
public struct ReliabilityPrior: Sendable, Hashable {
    /// Accuracy assumed for a model with no history and weight 1 (chance is 0.25).
    public var accuracy: Double
    /// Verdicts the prior accuracy is worth: a model's own record outweighs it after about this many.
    public var strength: Double
    /// Claims by which each row of a model's matrix (one true verdict) is pulled towards the model's overall accuracy and the council's way of erring.
    public var rowStrength: Double
    /// Hand-set weights by model name (default 1): a weight multiplies the prior's log-odds, so 2 trusts a new model more and 0 not at all.
    public var weights: [String: Double]
    /// How often each verdict is assumed to be the truth before the ledger says otherwise.
    public var classFrequencies: [Verdict: Double]
    /// Claims the assumed class frequencies are worth.
    public var classStrength: Double
    /// Whether a model's stated confidence is learned from: each confidence band gets its own record, pulled towards the model's overall one.
    public var learnsConfidence: Bool
    /// Votes by which a confidence band's record is pulled towards the model's overall record (at least).
    public var bandStrength: Double
    /// Whether a model's bands are pulled together further when their accuracies differ by no more than
    /// noise (see `FittedReliability.bandStrength`); false: always by `bandStrength`, as before issue 48.
    public var poolsQuietBands = true

    public init(
        accuracy: Double = 0.7, strength: Double = 10, rowStrength: Double = 30, weights: [String: Double] = [:],
        classFrequencies: [Verdict: Double] = [.true: 0.4, .false: 0.3, .partly: 0.2, .unverifiable: 0.1], classStrength: Double = 10,
        learnsConfidence: Bool = true, bandStrength: Double = 200
    ) {
        self.accuracy = accuracy
        self.strength = strength
        self.rowStrength = rowStrength
        self.weights = weights
        self.classFrequencies = classFrequencies
        self.classStrength = classStrength
        self.learnsConfidence = learnsConfidence
        self.bandStrength = bandStrength
    }

    /// The prior accuracy of `model`: its weight scales the log-odds of the default accuracy.
    public func accuracy(of model: String) -> Double {
        let classes = Double(Verdict.reliabilityClassCount)
        let base = min(max(accuracy, 1 / classes), 0.999)
        // Log-odds of "right" against one particular wrong verdict, which is what a vote adds.
        let logOdds = log(base * (classes - 1) / (1 - base)) * max(0, weights[model] ?? 1)
        let odds = exp(min(logOdds, 50))
        return odds / (odds + classes - 1)
    }

    /// Assumed class frequencies in `Verdict.allCases` order, normalised.
    var frequencies: [Double] {
        let raw = Verdict.allCases.map { max(0, classFrequencies[$0] ?? 0) }
        let total = raw.reduce(0, +)
        return total > 0 ? raw.map { $0 / total } : raw.map { _ in 1 / Double(raw.count) }
    }
}
