import RelayCore
import RelayTribunal
import Testing
import TribunalSimulation

@Suite("Council: a model's stated confidence counts only as far as its record backs it")
struct ConfidenceBandsTests {
    /// `count` claims (true 40 %, false 30 %, partly 20 %, unverifiable 10 %) judged by models of these
    /// accuracies, each stating 0.55 or 0.95 at random. `calibrated`: right with the stated confidence
    /// (so the two bands' accuracies are 0.55 and 0.95 whatever the model's accuracy); otherwise right
    /// with its accuracy whatever it states.
    func ledger(_ accuracies: [Double], calibrated: Bool, count: Int, seed: UInt64) -> [JudgedClaim] {
        var rng = SimulationGenerator(seed: seed)
        return (0..<count).map { _ in
            let truth = rng.pick([0.4, 0.3, 0.2, 0.1])
            let votes = accuracies.enumerated().map { index, accuracy in
                let confidence = rng.unit() < 0.5 ? 0.55 : 0.95
                let right = rng.unit() < (calibrated ? confidence : accuracy)
                let said = right ? truth : rng.pick((0..<4).map { $0 == truth ? 0 : 1 })
                return JudgedClaim.Vote(model: "m\(index + 1)", verdict: Verdict.allCases[said], confidence: confidence)
            }
            return JudgedClaim(votes: votes)
        }
    }

    /// The council's reading, learned from `ledger(accuracies, calibrated:)` by a single fit, of m1 saying true and m2
    /// saying false: `sure` with m1 at 0.95 and m2 at 0.55, `unsure` the other way round; the rest silent.
    func readings(_ accuracies: [Double], calibrated: Bool) -> (sure: VerdictPosterior, unsure: VerdictPosterior) {
        var estimator = ReliabilityEstimator(resamples: 0, folds: 0, dependenceRounds: 0)
        estimator.overrule = nil
        let estimate = estimator.estimate(ledger(accuracies, calibrated: calibrated, count: 600, seed: 48))
        let split = { (first: Double, second: Double) in
            estimate.posterior([
                JudgedClaim.Vote(model: "m1", verdict: .true, confidence: first), JudgedClaim.Vote(model: "m2", verdict: .false, confidence: second),
            ])
        }
        return (split(0.95, 0.55), split(0.55, 0.95))
    }

    @Test("a confidence that says nothing changes nothing: the same two votes read alike whoever states 0.95")
    func quietConfidence() {
        let (sure, unsure) = readings([0.85, 0.75, 0.70, 0.65, 0.60], calibrated: false)
        #expect(sure.verdict == .true && unsure.verdict == .true)
        #expect(abs(sure.score - unsure.score) < 0.01, "m1 at 0.95 against m2 at 0.55: \(sure.score); the other way round: \(unsure.score)")
    }

    @Test("a confidence its record backs still counts: a calibrated model's 0.95 outweighs its 0.55")
    func calibratedConfidence() {
        let (sure, unsure) = readings([0.75, 0.75, 0.75, 0.75, 0.75], calibrated: true)
        // Each band is still pulled towards the model's overall record by at least 200 votes, so 0.95 and 0.55
        // read about 0.87 and 0.63 after 600 claims: the confident vote decides, short of its full 0.95. With
        // the bands pooled the two models would read alike, and true (the likelier verdict) would win both.
        #expect(sure.verdict == .true && sure.score > 0.55, "m1 at 0.95 against m2 at 0.55: \(String(describing: sure.verdict)) \(sure.score)")
        #expect(unsure.verdict == .false && unsure.score > 0.55, "the other way round: \(String(describing: unsure.verdict)) \(unsure.score)")
    }
}
