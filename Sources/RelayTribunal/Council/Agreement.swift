public import RelayCore

/// One answering model's vote.
public struct Ballot: Sendable, Hashable {
    public var model: String
    public var weight: Double
    public var parsed: ParsedVerdict

    public init(model: String, weight: Double, parsed: ParsedVerdict) {
        self.model = model
        self.weight = weight
        self.parsed = parsed
    }

    /// Confidence used in the formula: the model's own, else 0.5.
    public var confidence: Double { parsed.confidence ?? Agreement.defaultConfidence }
    /// The ballot's mass: weight × confidence.
    public var mass: Double { weight * confidence }
}

/// The council's agreement formula (documented in docs/council.md):
///
///     mass(i)      = weight(i) × confidence(i)          (confidence 0.5 when the model gave none)
///     S(v)         = Σ mass(i) over answering models whose verdict is v
///     plurality    = the verdict with the largest S(v)  (ties: more votes, then true › partly › false › unverifiable)
///     agreement    = S(plurality) / Σ mass(i) over all answering models
///
/// Models that answered without a readable verdict count in the denominator only, so unreadable
/// answers lower agreement instead of being ignored. No verdict at all → no plurality, agreement 0.
public enum Agreement {
    public static let defaultConfidence = 0.5

    public struct Outcome: Sendable, Hashable {
        public var verdict: Verdict?
        public var agreement: Double
        /// Ballots whose verdict differs from the plurality (no-verdict ballots are not dissent).
        public var dissenters: [Ballot]
        /// Plurality ballots, most massive first.
        public var supporters: [Ballot]
    }

    static let tieOrder: [Verdict] = [.true, .partly, .false, .unverifiable]

    public static func compute(_ ballots: [Ballot]) -> Outcome {
        let total = ballots.reduce(0) { $0 + $1.mass }
        var score: [Verdict: Double] = [:]
        var votes: [Verdict: Int] = [:]
        for ballot in ballots {
            guard let verdict = ballot.parsed.verdict else { continue }
            score[verdict, default: 0] += ballot.mass
            votes[verdict, default: 0] += 1
        }
        let plurality = score.keys.max { a, b in
            if score[a]! != score[b]! { return score[a]! < score[b]! }
            if votes[a]! != votes[b]! { return votes[a]! < votes[b]! }
            return tieOrder.firstIndex(of: a)! > tieOrder.firstIndex(of: b)!
        }
        guard let plurality, total > 0 else {
            return Outcome(verdict: nil, agreement: 0, dissenters: [], supporters: [])
        }
        let supporters = ballots.filter { $0.parsed.verdict == plurality }.sorted { $0.mass > $1.mass }
        let dissenters = ballots.filter { $0.parsed.verdict != nil && $0.parsed.verdict != plurality }
        return Outcome(verdict: plurality, agreement: score[plurality]! / total, dissenters: dissenters, supporters: supporters)
    }
}
