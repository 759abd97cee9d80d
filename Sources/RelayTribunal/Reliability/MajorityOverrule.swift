import RelayCore

// When the learned records may overrule the plain majority (issue 29). The records are estimates:
// from a short history, or where the votes fit several readings of who is reliable, the verdict
// they make most probable can differ from the majority's for no better reason than noise, and a
// council that loses to its own majority is worse than none. So the verdict is the plain majority's
// (every answer counted once, ties as `Agreement` breaks them) unless the history is long enough (or
// people marked enough of it) and
// most of the fits to resampled histories, each mixed with the panel view, agree on the other
// verdict. Its probability is then the learned probability of the majority's verdict, so the
// figure stays the probability of what the council says. While the history is shorter than
// `minimumClaims` the one-coin panel gives that probability even when the records agree with the
// majority (see `OneCoinPanel.swift`). tribunal-sim's cold start is its first 50 claims and its
// scored window the last 200 of 400, so any minimum from 50 to 200 gives the same figures there;
// 50 is the shortest, so that a history as plain as "this judge is always contradicted" is used
// soon (LearnedCouncilTests: 60 claims of it make a 2-1 split 90 % likely, not one-coin's 57 %).

/// When the learned records may overrule a plain majority of the votes.
public struct MajorityOverrule: Sendable, Hashable {
    /// Claims of history before the records may overrule the majority at all (the cold start).
    public var minimumClaims: Int
    /// Claims people marked that also allow it before `minimumClaims`: a mark is the truth, not an inference from the votes.
    public var minimumMarks: Int
    /// Share of the resampled fits that must agree on the other verdict.
    public var agreeingShare: Double

    public init(minimumClaims: Int = 50, minimumMarks: Int = 10, agreeingShare: Double = 0.75) {
        self.minimumClaims = minimumClaims
        self.minimumMarks = minimumMarks
        self.agreeingShare = agreeingShare
    }

    /// Whether a history of `claims` claims, `marked` of them marked, is long enough to overrule the majority at all.
    func allows(claims: Int, marked: Int) -> Bool { claims >= minimumClaims || marked >= minimumMarks }

    /// The plain majority's verdict: every vote once, except those of models whose hand-set weight is 0; ties as `Agreement` breaks them.
    static func majority(_ votes: [JudgedClaim.Vote], prior: ReliabilityPrior) -> Verdict? {
        var counts: [Verdict: Int] = [:]
        for vote in votes where prior.weights[vote.model] != 0 {
            if let verdict = vote.verdict { counts[verdict, default: 0] += 1 }
        }
        let order: [Verdict] = [.true, .partly, .false, .unverifiable]
        return counts.keys.max { a, b in
            counts[a]! != counts[b]! ? counts[a]! < counts[b]! : order.firstIndex(of: a)! > order.firstIndex(of: b)!
        }
    }
}
