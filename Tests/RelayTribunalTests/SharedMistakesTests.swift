import RelayCore
import RelayTestSupport
import RelayTribunal
import Testing
import TribunalSimulation

/// Issue 29: judges that share their mistakes, and the cold start, on tribunal-sim's seeded panels.
@Suite("Council: judges that share mistakes, and the plain majority at the cold start")
struct SharedMistakesTests {
    /// `count` claims of `panel` from `rng`: the judged claims and their truths.
    func draw(_ panel: Panel, _ count: Int, _ rng: inout SimulationGenerator) -> [(claim: JudgedClaim, truth: Verdict)] {
        (0..<count).map { _ in
            let claim = panel.drawClaim(using: &rng)
            return (JudgedClaim(votes: panel.votes(on: claim, using: &rng)), Verdict.allCases[claim.truth])
        }
    }

    /// Share of `claims` on which `verdict` gives the truth.
    func accuracy(_ claims: [(claim: JudgedClaim, truth: Verdict)], _ verdict: (JudgedClaim) -> Verdict?) -> Double {
        Double(claims.count { verdict($0.claim) == $0.truth }) / Double(claims.count)
    }

    /// The plain majority as tribunal-sim counts it: every answer once, ties as `Agreement` breaks them.
    func majority(_ claim: JudgedClaim) -> Verdict? {
        Agreement.compute(claim.votes.map { Ballot(model: $0.model, weight: 1, parsed: ParsedVerdict(verdict: $0.verdict, confidence: 1, answer: "")) }).verdict
    }

    @Test("two judges that repeat each other count for less, and do not drag the council below the majority")
    func twoJudgesSharingMistakes() {
        let panel = Panel.all(in: World()).first { $0.name == "two share mistakes" }!
        var rng = SimulationGenerator(seed: 12)
        let history = draw(panel, 300, &rng)
        let fresh = draw(panel, 300, &rng)
        let estimate = ReliabilityEstimator().estimate(history.map(\.claim))
        // j4 repeats j3 on 60 % of claims; the others err independently.
        // The independent judges may count for a little less too: the check of all pairs together reads the
        // chance excess of their agreement as a little shared mistake (j1 or j2 below 0.9 on 28 of 40
        // histories in tribunal-sim, seeds 1–20, before and after issue 48's pooled bands), so they are held
        // to counting clearly more than the pair.
        for name in ["j3", "j4"] { #expect(estimate.judgeWeights[name]! < 0.8, "\(name): \(estimate.judgeWeights)") }
        let pair = max(estimate.judgeWeights["j3"]!, estimate.judgeWeights["j4"]!)
        for name in ["j1", "j2"] { #expect(estimate.judgeWeights[name]! > pair + 0.1, "\(name): \(estimate.judgeWeights)") }
        #expect(estimate.reliability(of: "j3").accuracy < 0.75, "true accuracy 0.65: \(estimate.reliability(of: "j3").accuracy)")

        // Without the check, Dawid–Skene takes the pair for two accurate judges and follows them.
        var independent = ReliabilityEstimator(dependenceRounds: 0)
        independent.overrule = nil
        let naive = independent.estimate(history.map(\.claim))
        let council = accuracy(fresh) { estimate.posterior($0.votes).verdict }
        let plain = accuracy(fresh, majority)
        let before = accuracy(fresh) { naive.posterior($0.votes).verdict }
        #expect(council >= plain, "council \(council), majority \(plain)")
        #expect(council > before, "council \(council), without the check \(before)")
    }

    @Test("judges that err independently keep their full votes")
    func independentJudgesKeepFullVotes() {
        let panel = Panel.all(in: World()).first { $0.name == "overconfident" }!
        var rng = SimulationGenerator(seed: 3)
        let estimate = ReliabilityEstimator().estimate(draw(panel, 300, &rng).map(\.claim))
        #expect(estimate.judgeWeights.values.allSatisfy { $0 > 0.9 }, "\(estimate.judgeWeights)")
    }

    @Test("two good judges beside a liar keep their full votes: one other judge is too little truth to check a pair against")
    func honestPairBesideALiarKeepsFullVotes() {
        let panel = Panel.all(in: World()).first { $0.name == "three with a liar" }!
        for seed: UInt64 in [2, 3, 5] {
            var rng = SimulationGenerator(seed: seed)
            let estimate = ReliabilityEstimator().estimate(draw(panel, 400, &rng).map(\.claim))
            #expect(estimate.judgeWeights.values.allSatisfy { $0 > 0.95 }, "seed \(seed): \(estimate.judgeWeights)")
        }
    }

    @Test("with a short history the verdict is the plain majority's, never below it")
    func coldStartIsTheMajority() {
        let panel = Panel.all(in: World()).first { $0.name == "three with a liar" }!
        var rng = SimulationGenerator(seed: 5)
        let history = draw(panel, 30, &rng)
        let fresh = draw(panel, 200, &rng)
        let estimate = ReliabilityEstimator().estimate(history.map(\.claim))
        for (claim, _) in fresh { #expect(estimate.posterior(claim.votes).verdict == majority(claim)) }
        // Its probability is still the probability of that verdict, not a figure for another one.
        for (claim, _) in fresh where claim.votes.contains(where: { $0.verdict != nil }) {
            let posterior = estimate.posterior(claim.votes)
            #expect(abs(posterior.score - posterior.probability(of: posterior.verdict!)) < 1e-9)
        }
    }

    @Test("a judge that repeats another adds little where the two agree, and a full vote where they do not")
    func repeatedVerdictsWeighedClaimByClaim() async throws {
        // j4 repeats j3 on 60 % of claims. Counted for a fixed 0.68 of a vote each, the pair still
        // outweighed j1 and j2 where the two agreed, and was discounted where j4 disagreed (and so had
        // not repeated): on seed 16 the council was right on 0.850 of the last 200 claims against a plain
        // majority's 0.865 (ECE 0.079). Weighed under the model that sees repeating: 0.870 (ECE 0.022).
        // Over seeds 14–18 (one seed's ECE over 200 claims moves by ±0.01 with any change): council 0.887
        // against a majority of 0.874, ECE 0.039 (issue 48; 0.041 before it).
        let panel = Panel.all(in: World()).first { $0.name == "two share mistakes" }!
        let scores = try await offThePool { (14...18).map { PanelRun(panel: panel, claims: 400, recent: 200).run(seed: $0) } }
        let mean = { (value: KeyPath<PanelScore, Double>) in scores.reduce(0) { $0 + $1[keyPath: value] } / Double(scores.count) }
        #expect(mean(\.learned) >= mean(\.majority), "council \(mean(\.learned)), majority \(mean(\.majority))")
        #expect(mean(\.learnedECE) <= 0.045, "ECE \(mean(\.learnedECE))")
    }

    @Test("three judges: the panel view is resampled too, so one loose fit of it does not overrule the majority")
    func panelViewResampledOnThreeJudges() async throws {
        // With three judges the panel view's one record is loosely fixed on the rarer verdicts (one fit
        // read P(says true | partly) as 0.05, about 0.13 in truth), and it was the one part of the
        // estimate taken as known: mixed into every resampled fit alike, it let one "true" overrule two
        // "partly" votes where the records backed the majority. On seed 17 the council was right on
        // 0.755 of the last 200 claims against a plain majority's 0.775; with the panel view refitted
        // to each resampled history, 0.785. Any change to the records moves one seed by a few claims (with
        // issue 48's pooled bands seed 17 reads 0.765 against 0.775, and seed 16 0.815 against 0.800), so
        // the seeds around it are held together to the majority.
        let panel = Panel.all(in: World()).first { $0.name.hasPrefix("three .70") }!
        async let first = offThePool { PanelRun(panel: panel, claims: 400, recent: 200).run(seed: 16) }
        async let second = offThePool { PanelRun(panel: panel, claims: 400, recent: 200).run(seed: 17) }
        async let third = offThePool { PanelRun(panel: panel, claims: 400, recent: 200).run(seed: 18) }
        let scores = try await [first, second, third]
        let mean = { (value: KeyPath<PanelScore, Double>) in scores.reduce(0) { $0 + $1[keyPath: value] } / Double(scores.count) }
        #expect(mean(\.learned) >= mean(\.majority), "council \(scores.map(\.learned)), majority \(scores.map(\.majority))")
        #expect(mean(\.learnedECE) <= 0.10, "ECE \(mean(\.learnedECE))")
    }

    @Test("a weak true/false panel never reads the truths mirrored (unanimous false as true)")
    func weakTrueFalsePanelKeepsItsLabels() async throws {
        // On seed 8 the panel view's fit, resumed from the last estimate, drifted into the mirror image
        // (every judge a contrarian, "false" read as "true"): the votes' likelihood cannot tell the two
        // apart. Over claims 100–199 the council was right on 0.40 of them (ECE 0.28) against a plain
        // majority's 0.66; now 0.67 (ECE 0.09).
        let panel = Panel.all(in: .twoVerdicts).first { $0.name == "weak + contrarian" }!
        let score = try await offThePool { PanelRun(panel: panel, claims: 200, recent: 100).run(seed: 8) }
        #expect(score.learned >= score.majority, "council \(score.learned), majority \(score.majority)")
        #expect(score.learnedECE < 0.15, "ECE \(score.learnedECE)")
    }

    @Test("fits to resampled histories that land in another optimum are not averaged in")
    func resampledFitsStayWithTheEstimate() async throws {
        // On true/false claims with a judge that always says true, a fit to a resampled history can
        // land in another optimum altogether: "every claim is true, the always-true judge is never
        // wrong, the other four are coin flips". Averaged in, such fits called four judges' "false"
        // against the yes-man's "true" true: over claims 150–249 of seed 8 the council was right on
        // 0.68 (ECE 0.37) against a plain majority's 0.86; now 0.84 (ECE 0.08).
        let panel = Panel.all(in: .twoVerdicts).first { $0.name == "always true" }!
        let score = try await offThePool { PanelRun(panel: panel, claims: 250, recent: 100).run(seed: 8) }
        #expect(score.learned >= score.majority - 0.03, "council \(score.learned), majority \(score.majority)")
        #expect(score.learnedECE < 0.15, "ECE \(score.learnedECE)")
    }
}
