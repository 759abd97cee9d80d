import RelayCore

// Label switching (issue 29). The votes' likelihood does not change when the truths are relabelled
// (on true/false claims: read every "true" as "false" and every judge as a contrarian), so neither
// EM's choice between a fresh and a resumed fit nor the held-out weight of the panel view can tell
// a fit from its mirror image. On weak true/false panels a resumed fit of the panel view drifted into
// the mirror image and, weighed in at 57 %, turned unanimous "false" into "true" 81 % likely
// (tribunal-sim, weak + contrarian, seed 8, from claim 100 on; the council fell to 0.495 against a
// majority of 0.665). Judges are taken to be right more often than not together, so between a fresh
// and a resumed fit the one whose verdicts side with the plain majority on most claims is kept. (A
// fresh fit that does not was tried again from the majority's verdicts, Dawid and Skene's own start:
// on every such case in tribunal-sim it came back to the same fit, so that retry is not made.)

extension VoteTable {
    /// Whether `fitted` makes the plain majority's verdict the most probable on at least half the claims.
    func sidesWithMajority(_ fitted: FittedReliability) -> Bool {
        let agreement = majorityAgreement(under: fitted)
        return agreement.agreeing * 2 >= agreement.claims
    }

    /// Of the claims with a verdict, how many `fitted` makes the plain majority's verdict the most probable on (ties as
    /// `Agreement` breaks them).
    func majorityAgreement(under fitted: FittedReliability) -> (agreeing: Int, claims: Int) {
        let classes = Verdict.reliabilityClassCount
        // true, partly, false, unverifiable: the order ties go in, as indices.
        let order = [0, 2, 1, 3]
        let logClass = ReliabilityEstimate.logOf(fitted.classFrequencies)
        var agreeing = 0
        var answered = 0
        for claim in marks.indices {
            let range = claimStart[claim]..<claimStart[claim + 1]
            guard !range.isEmpty else { continue }
            answered += 1
            var counts = [Int](repeating: 0, count: classes)
            var logp = logClass
            for vote in range {
                counts[cells[vote] % classes] += 1
                logp += fitted.logBandConfusion[cells[vote]]
            }
            let majority = order.max { counts[$0] != counts[$1] ? counts[$0] < counts[$1] : order.firstIndex(of: $0)! > order.firstIndex(of: $1)! }!
            let truth = (0..<classes).max { logp[$0] < logp[$1] }!
            if truth == majority { agreeing += 1 }
        }
        return (agreeing, answered)
    }
}
