import RelayCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// The cold start's probability (issue 29). With a few dozen claims, Dawid–Skene and even the panel
// view (one 4×4 record per confidence band) have more parameters than the history can fix, and EM
// finds readings such as "partly is what judges say when a claim is true": a plain majority for
// partly then reads 3 % likely (tribunal-sim, weak panel, claim 27 of seed 11). The one-coin panel
// has a single number to learn, how often a verdict is right, and the verdicts' frequencies (wrong
// verdicts go to the others in proportion to them): the probability of the majority's verdict follows from how many judges
// back it, and a few claims fix it. It gives the probability while the majority stands because the
// records may not overrule it yet, or because they were too unsure to.

/// Every vote right with one learned probability, wrong ones spread over the other verdicts as often as each is the truth.
struct OneCoinPanel: Sendable {
    /// P(a verdict is right), learned.
    var accuracy: Double
    /// P(truth), in `Verdict.allCases` order, learned.
    var classFrequencies: PerTruth

    /// The prior alone: every vote right with the prior's accuracy.
    init(prior: ReliabilityPrior) {
        accuracy = prior.accuracy
        classFrequencies = PerTruth(prior.frequencies)
    }

    /// Learned from `claims` by EM, each vote counted once (those of models whose hand-set weight is 0 not at all), the prior's accuracy
    /// worth `prior.strength` verdicts and its class frequencies `prior.classStrength` claims.
    init(learning claims: [JudgedClaim], prior: ReliabilityPrior, rounds: Int = 30) {
        self.init(prior: prior)
        let said = claims.map { claim in
            claim.votes.compactMap { vote in prior.weights[vote.model] == 0 ? nil : vote.verdict?.reliabilityIndex }
        }
        let marks = claims.map { $0.mark?.reliabilityIndex }
        for _ in 0..<rounds {
            var right = prior.strength * prior.accuracy
            var votes = prior.strength
            var classes = prior.classStrength * PerTruth(prior.frequencies)
            for (index, verdicts) in said.enumerated() {
                let truth = marks[index].map { mark in PerTruth((0..<4).map { $0 == mark ? 1.0 : 0 }) } ?? posterior(verdicts)
                classes += truth
                for verdict in verdicts { right += truth[verdict] }
                votes += Double(verdicts.count)
            }
            let next = right / votes
            classFrequencies = classes / classes.sum()
            let moved = abs(next - accuracy)
            accuracy = next
            if moved < 1e-5 { break }
        }
    }

    /// P(truth | verdicts said), in `Verdict.allCases` order.
    func posterior(_ verdicts: [Int]) -> PerTruth {
        let classes = Verdict.reliabilityClassCount
        let right = min(max(accuracy, 1e-3), 1 - 1e-6)
        var logp = ReliabilityEstimate.logOf(classFrequencies)
        for truth in 0..<classes {
            // Wrong verdicts go where verdicts usually go: on true/false claims, all of them to the other one.
            let others = max(1 - classFrequencies[truth], 1e-9)
            for verdict in verdicts {
                logp[truth] += verdict == truth ? log(right) : log((1 - right) * max(classFrequencies[verdict], 1e-9) / others)
            }
        }
        let top = logp.max()
        let odds = PerTruth(exp(logp[0] - top), exp(logp[1] - top), exp(logp[2] - top), exp(logp[3] - top))
        return odds / odds.sum()
    }

    /// P(truth | votes), as a posterior whose verdict is the majority's when the votes give one.
    func posterior(_ votes: [JudgedClaim.Vote], prior: ReliabilityPrior) -> PerTruth {
        posterior(votes.compactMap { vote in prior.weights[vote.model] == 0 ? nil : vote.verdict?.reliabilityIndex })
    }
}
