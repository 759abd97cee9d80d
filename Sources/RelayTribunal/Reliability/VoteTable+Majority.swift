import RelayCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

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
    /// Whether `fitted` makes the plurality verdict the most probable on at least half the claims that have one.
    func sidesWithMajority(_ fitted: FittedReliability) -> Bool { majorityAgreement(under: fitted) >= 0.5 }

    /// Of the claims with a strict plurality of verdicts, the share on which `fitted` makes that verdict the most probable.
    func majorityAgreement(under fitted: FittedReliability) -> Double {
        let classes = Verdict.reliabilityClassCount
        let logClass = PerTruth(fitted.classFrequencies.indices.map { log(fitted.classFrequencies[$0]) })
        var agreeing = 0.0
        var decided = 0.0
        for claim in marks.indices {
            let range = claimStart[claim]..<claimStart[claim + 1]
            var said = PerTruth()
            var logp = logClass
            for vote in range {
                said[cells[vote] % classes] += 1
                logp += fitted.logBandConfusion[cells[vote]]
            }
            let top = said.max()
            guard top > 0, (0..<classes).count(where: { said[$0] == top }) == 1 else { continue }
            let weight = weights?[claim] ?? 1
            decided += weight
            let plurality = (0..<classes).first { said[$0] == top }!
            if (0..<classes).allSatisfy({ logp[$0] <= logp[plurality] }) { agreeing += weight }
        }
        return decided > 0 ? agreeing / decided : 1
    }
}
