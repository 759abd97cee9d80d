import RelayCore

// The model that sees repeating (issue 29). Where the check for shared mistakes found that a pair of
// judges agrees more than their records explain, it reads the excess as a share s of verdicts one
// repeats of the other (see `ReliabilityEstimator+Dependence.swift`). A vote is then
//   P(vote | truth, the claim's earlier votes) = Σ s · [it says what that earlier judge said]
//                                               + (1 − Σ s) · its record's P(vote | truth),
// the sum over the earlier judges it shares mistakes with. Two readings of who shares mistakes are
// compared by the votes' likelihood under it, and a claim's votes are weighed under it too. Counting
// a sharing judge's vote for a fixed part of a vote, which the fit does, is right on average but
// wrong on each claim: where it agrees with its partner its vote adds little (likely repeated), and
// where it disagrees it adds as much as any judge's (it did not repeat). tribunal-sim, "two share
// mistakes", seeds 11–20: weighed under this model (the judges' own records and the panel view
// alike) the council gained 0.6 points and ECE 0.049 → 0.039 on 4 verdicts, and ECE 0.111 → 0.089
// on true/false claims; every other panel moved by at most 0.004.

/// Which judges repeat each other's verdicts, and by how much: what a vote is worth given the votes before it.
struct RepeatedVerdicts: Sendable {
    /// The judges, in the order `shares` is indexed by.
    let models: [String]
    /// (model, model): the share of verdicts one repeats of the other; symmetric, 0 where the pair shares nothing.
    let shares: [Double]

    /// Repeating as `shares` (indexed by `models`) has it; nil when no pair shares anything.
    init?(models: [String], shares: [Double]) {
        guard shares.contains(where: { $0 > 0 }) else { return nil }
        self.models = models
        self.shares = shares
    }

    /// The share of `model`'s verdicts that repeat each other judge's, for the judges it shares any with.
    func shares(of model: String) -> [String: Double] {
        guard let judge = models.firstIndex(of: model) else { return [:] }
        var found: [String: Double] = [:]
        for (other, name) in models.enumerated() where shares[judge * models.count + other] > 0 { found[name] = shares[judge * models.count + other] }
        return found
    }

    /// P(`said` | truth, the claim's `earlier` votes) for `judge`, whose record gives P(`said` | truth) as `record`.
    /// The shares that apply are scaled down to 0.95 at most, so a vote always keeps some weight of its own.
    func likelihood(_ record: PerTruth, judge: Int, said: Int, after earlier: some Sequence<(judge: Int, said: Int)>) -> PerTruth {
        var share = 0.0
        var repeated = 0.0
        for other in earlier {
            let pair = shares[judge * models.count + other.judge]
            guard pair > 0 else { continue }
            share += pair
            if other.said == said { repeated += pair }
        }
        guard share > 0 else { return record }
        let scale = share > 0.95 ? 0.95 / share : 1
        return record * (1 - share * scale) + PerTruth(repeating: repeated * scale)
    }
}
