import RelayCore
public import RelayTribunal

// The simulated world. Its assumptions, stated so the figures can be judged:
//
// - Truth: each claim is true 45 %, false 30 %, partly 20 %, unverifiable 5 % of the time.
// - A judge is right with its accuracy, the same on every kind of claim. When wrong it picks a
//   near verdict more often than a far one (`World.wrongVerdicts`: true ↔ partly ↔ false,
//   unverifiable rarely), the same way for every judge, so wrong judges agree with each other
//   more often than uniform noise would and majorities are harder to trust.
// - 3 % of answers carry no readable verdict, independently of the truth.
// - Judges err independently given the truth (the estimator's own assumption, which flatters it),
//   except in three panels. "Shared mistakes": 20 % of claims are hard, every judge is 0.30 less
//   accurate on them (more on the rest, so its overall accuracy is unchanged) and a wrong judge
//   falls for the claim's one plausible wrong verdict 60 % of the time. "Two share mistakes": one
//   judge repeats another's verdict on 60 % of claims (same accuracy; its mistakes are the
//   other's). A contrarian, when wrong, says the opposite (true ↔ false; partly and unverifiable
//   turn into true or false).
// - Confidence styles: overconfident judges state 0.80–0.98 whatever their accuracy and whether
//   right or wrong; a calibrated judge states c within ±0.12 of its accuracy and is right with
//   probability c; the confident liar and contrarians state 0.92–0.99; the always-true judge says
//   true at 0.85–0.95 whatever the claim.
// - No judge sees the truth. People's marks (the truth, only for true, false and partly claims)
//   reach the ledger on 10 % of claims in the one "+ marks" panel, after the council answered.
// - `--verdicts 2`: claims only true (55 %) or false, and a wrong judge says the other: the world
//   where a majority of weak judges falls below its best judge.

/// RelayCore's `SplitMix64`, with the simulation's draws: the same on every platform, so every
/// figure here can be reproduced.
public struct SimulationGenerator: RandomNumberGenerator, Sendable {
    var generator: SplitMix64

    public init(seed: UInt64) { generator = SplitMix64(seed: seed) }

    public mutating func next() -> UInt64 { generator.next() }

    /// Uniform in [0, 1).
    public mutating func unit() -> Double { generator.unit() }

    mutating func uniform(_ range: ClosedRange<Double>) -> Double { range.lowerBound + unit() * (range.upperBound - range.lowerBound) }

    /// An index drawn with the given weights.
    public mutating func pick(_ weights: [Double]) -> Int {
        var remaining = unit() * weights.reduce(0, +)
        for (index, weight) in weights.enumerated() {
            remaining -= weight
            if remaining < 0 && weight > 0 { return index }
        }
        return weights.lastIndex { $0 > 0 } ?? 0
    }
}

/// How claims and mistakes are drawn.
public struct World: Sendable {
    /// P(truth), in `Verdict.allCases` order: true, false, partly, unverifiable.
    var truthFrequencies = [0.45, 0.30, 0.20, 0.05]
    /// P(a wrong judge says column | truth is row): near verdicts first.
    var wrongVerdicts: [[Double]] = [
        [0, 0.3, 0.5, 0.2],
        [0.3, 0, 0.5, 0.2],
        [0.4, 0.4, 0, 0.2],
        [0.4, 0.3, 0.3, 0],
    ]
    static let silentShare = 0.03

    public init() {}

    /// Claims only true (55 %) or false, and a wrong judge says the other.
    public static let twoVerdicts: World = {
        var world = World()
        world.truthFrequencies = [0.55, 0.45, 0, 0]
        world.wrongVerdicts = [[0, 1, 0, 0], [1, 0, 0, 0], [0.5, 0.5, 0, 0], [0.5, 0.5, 0, 0]]
        return world
    }()

    /// Share of hard claims, on which every judge errs more and towards the same trap.
    var hardShare = 0.0
    var hardDrop = 0.30
    var trapShare = 0.60
    /// Share of claims a person marks, after the council answered.
    public var markShare = 0.0
}

/// One claim as drawn: its truth, whether it is hard, and the wrong verdict that tempts on it.
public struct SimClaim: Sendable {
    public var truth: Int
    var hard: Bool
    var trap: Int
}

/// A simulated judge with a known accuracy and a style of stating confidence.
public struct SimJudge: Sendable {
    public enum Style: Sendable {
        /// Confidence drawn from the range whether right or wrong.
        case overconfident(ClosedRange<Double>)
        /// Confidence within ±0.12 of the accuracy, and right with exactly that probability.
        case calibrated
        /// Says true whatever the claim, with confidence from the range.
        case alwaysTrue(ClosedRange<Double>)
    }

    public var name: String
    public var accuracy: Double
    public var style: Style
    /// When wrong, says the opposite verdict (true ↔ false) instead of erring the world's way.
    public var contrarian = false
    /// Repeats the verdict of the judge at this index (earlier in the panel) on this share of claims.
    public var repeats: (judge: Int, share: Double)?

    public init(name: String, accuracy: Double, style: Style, contrarian: Bool = false, repeats: (judge: Int, share: Double)? = nil) {
        self.name = name
        self.accuracy = accuracy
        self.style = style
        self.contrarian = contrarian
        self.repeats = repeats
    }

    static let opposite: [[Double]] = [[0, 1, 0, 0], [1, 0, 0, 0], [0.5, 0.5, 0, 0], [0.5, 0.5, 0, 0]]

    /// Accuracy on this claim: lower on hard claims, higher on easy ones, the same on average.
    func accuracy(on claim: SimClaim, in world: World) -> Double {
        guard world.hardShare > 0 else { return accuracy }
        return claim.hard ? max(0, accuracy - world.hardDrop) : min(0.99, accuracy + world.hardDrop * world.hardShare / (1 - world.hardShare))
    }

    func vote(on claim: SimClaim, in world: World, after earlier: [JudgedClaim.Vote], using rng: inout SimulationGenerator) -> JudgedClaim.Vote {
        let silent = rng.unit() < World.silentShare
        let copies = repeats.map { rng.unit() < $0.share } ?? false
        let verdict: Int
        let confidence: Double
        switch style {
        case .alwaysTrue(let range):
            verdict = 0
            confidence = rng.uniform(range)
        case .overconfident(let range):
            verdict = rng.unit() < accuracy(on: claim, in: world) ? claim.truth : wrongVerdict(on: claim, in: world, using: &rng)
            confidence = rng.uniform(range)
        case .calibrated:
            confidence = min(0.99, max(0.3, rng.uniform(accuracy - 0.12...accuracy + 0.12)))
            verdict = rng.unit() < confidence ? claim.truth : wrongVerdict(on: claim, in: world, using: &rng)
        }
        if silent { return JudgedClaim.Vote(model: name, verdict: nil, confidence: nil) }
        if copies, let source = repeats.map({ earlier[$0.judge] }), let said = source.verdict {
            return JudgedClaim.Vote(model: name, verdict: said, confidence: confidence)
        }
        return JudgedClaim.Vote(model: name, verdict: Verdict.allCases[verdict], confidence: confidence)
    }

    private func wrongVerdict(on claim: SimClaim, in world: World, using rng: inout SimulationGenerator) -> Int {
        if contrarian { return rng.pick(Self.opposite[claim.truth]) }
        if claim.hard && rng.unit() < world.trapShare { return claim.trap }
        return rng.pick(world.wrongVerdicts[claim.truth])
    }

    /// P(this vote | truth, hardness, trap, the earlier votes) with the true parameters: the Bayes-optimal combiner's likelihood.
    func likelihood(of vote: JudgedClaim.Vote, truth: Int, hard: Bool, trap: Int, in world: World, after earlier: [JudgedClaim.Vote]) -> Double {
        guard let said = vote.verdict.flatMap({ Verdict.allCases.firstIndex(of: $0) }) else { return 1 }
        let own = ownLikelihood(of: said, confidence: vote.confidence, truth: truth, hard: hard, trap: trap, in: world)
        guard let repeats, let source = earlier[repeats.judge].verdict else { return own }
        return repeats.share * (source == vote.verdict ? 1 : 0) + (1 - repeats.share) * own
    }

    private func ownLikelihood(of said: Int, confidence: Double?, truth: Int, hard: Bool, trap: Int, in world: World) -> Double {
        let right: Double
        switch style {
        case .alwaysTrue: return said == 0 ? 1 : 0
        case .overconfident: right = accuracy(on: SimClaim(truth: truth, hard: hard, trap: trap), in: world)
        case .calibrated: right = confidence ?? accuracy
        }
        if said == truth { return right }
        if contrarian { return (1 - right) * Self.opposite[truth][said] }
        let spread = world.wrongVerdicts[truth][said]
        guard hard else { return (1 - right) * spread }
        return (1 - right) * ((said == trap ? world.trapShare : 0) + (1 - world.trapShare) * spread)
    }
}

/// A panel of judges in a world: one row of the benchmark.
public struct Panel: Sendable {
    public var name: String
    public var judges: [SimJudge]
    public var world = World()

    public init(name: String, judges: [SimJudge], world: World = World()) {
        self.name = name
        self.judges = judges
        self.world = world
    }

    public func drawClaim(using rng: inout SimulationGenerator) -> SimClaim {
        let truth = rng.pick(world.truthFrequencies)
        let hard = rng.unit() < world.hardShare
        let trap = rng.pick(world.wrongVerdicts[truth])
        return SimClaim(truth: truth, hard: hard, trap: trap)
    }

    /// Every judge's vote on `claim`, in panel order (a judge that repeats another sees the earlier votes).
    public func votes(on claim: SimClaim, using rng: inout SimulationGenerator) -> [JudgedClaim.Vote] {
        var votes: [JudgedClaim.Vote] = []
        for judge in judges { votes.append(judge.vote(on: claim, in: world, after: votes, using: &rng)) }
        return votes
    }

    /// The Bayes-optimal posterior with the true parameters: what no learned combiner can beat on average.
    public func oracle(_ votes: [JudgedClaim.Vote]) -> [Double] {
        var posterior = [Double](repeating: 0, count: 4)
        for truth in 0..<4 {
            var total = 0.0
            for hard in world.hardShare > 0 ? [false, true] : [false] {
                let hardness = world.hardShare > 0 ? (hard ? world.hardShare : 1 - world.hardShare) : 1
                // Easy claims ignore the trap; hard ones average over it.
                let traps = hard ? (0..<4).filter { $0 != truth } : [truth == 0 ? 1 : 0]
                for trap in traps {
                    let trapChance = hard ? world.wrongVerdicts[truth][trap] : 1
                    var product = hardness * trapChance
                    for (index, judge) in judges.enumerated() {
                        product *= judge.likelihood(of: votes[index], truth: truth, hard: hard, trap: trap, in: world, after: Array(votes[..<index]))
                    }
                    total += product
                }
            }
            posterior[truth] = world.truthFrequencies[truth] * total
        }
        let sum = posterior.reduce(0, +)
        return sum > 0 ? posterior.map { $0 / sum } : world.truthFrequencies
    }

    static let overconfident = 0.80...0.98
    static let confident = 0.92...0.99

    static func judges(_ accuracies: [Double], names: String = "j") -> [SimJudge] {
        accuracies.enumerated().map { SimJudge(name: "\(names)\($0 + 1)", accuracy: $1, style: .overconfident(overconfident)) }
    }

    /// Every panel of the benchmark, in `world`: the issue 14 panels, then issue 29's small, weak and adversarial ones.
    public static func all(in world: World) -> [Panel] {
        let five = judges([0.85, 0.75, 0.70, 0.65, 0.60])
        let four = Array(five.prefix(4))
        var shared = Panel(name: "shared mistakes", judges: five, world: world)
        shared.world.hardShare = 0.2
        var marked = shared
        marked.name = "shared + 10% marks"
        marked.world.markShare = 0.1
        let weakFour = judges([0.70, 0.60, 0.59, 0.59])
        var twins = judges([0.85, 0.75, 0.65, 0.65, 0.60])
        twins[3].repeats = (judge: 2, share: 0.6)
        var threeCalibrated = judges([0.70, 0.65, 0.60])
        threeCalibrated[1].style = .calibrated
        return [
            Panel(name: "overconfident", judges: five, world: world),
            Panel(
                name: "calibrated", judges: [0.85, 0.75, 0.70, 0.65, 0.60].enumerated().map { SimJudge(name: "j\($0 + 1)", accuracy: $1, style: .calibrated) },
                world: world),
            Panel(name: "confident liar", judges: four + [SimJudge(name: "liar", accuracy: 0.40, style: .overconfident(confident))], world: world),
            Panel(name: "always true", judges: four + [SimJudge(name: "yes-man", accuracy: 0, style: .alwaysTrue(0.85...0.95))], world: world),
            shared,
            marked,
            Panel(name: "weak (best 0.70)", judges: judges([0.70, 0.65, 0.62, 0.60, 0.58]), world: world),
            Panel(
                name: "weak + contrarian", judges: weakFour + [SimJudge(name: "contra", accuracy: 0.39, style: .overconfident(confident), contrarian: true)],
                world: world),
            Panel(
                name: "contrarian 0.35", judges: four + [SimJudge(name: "contra", accuracy: 0.35, style: .overconfident(confident), contrarian: true)],
                world: world),
            Panel(name: "two share mistakes", judges: twins, world: world),
            Panel(name: "three .70/.65c/.60", judges: threeCalibrated, world: world),
            Panel(name: "three .85/.75/.70", judges: judges([0.85, 0.75, 0.70]), world: world),
            Panel(
                name: "three with a liar", judges: judges([0.85, 0.75]) + [SimJudge(name: "liar", accuracy: 0.35, style: .overconfident(confident))],
                world: world),
            // Issue 48: one judge far better than the rest (at least 0.25 above the others' median).
            Panel(name: "stand-out among five", judges: judges([0.90, 0.62, 0.60, 0.58, 0.55]), world: world),
            Panel(name: "stand-out among three", judges: judges([0.90, 0.62, 0.58]), world: world),
        ]
    }
}
