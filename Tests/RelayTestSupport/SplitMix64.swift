public import RelayCore

/// Draws for tests that pick many cases at random, from RelayCore's seeded `SplitMix64`:
/// seeded, not the system generator, so a test draws the same strings and sequences on every run
/// and every platform, and a failing case can be replayed from its seed.
extension SplitMix64 {
    /// A number in `0..<bound`, from one `next()` (by remainder: the slight bias does not matter
    /// here, and the sequence stays the one the tests were written against). `bound` must be positive.
    public mutating func below(_ bound: Int) -> Int {
        precondition(bound > 0, "below(\(bound)): the bound must be positive")
        return Int(next() % UInt64(bound))
    }

    /// `1 + below(tokens)` tokens drawn from `alphabet`, joined: at least one, at most `tokens`.
    public mutating func text(from alphabet: [String], tokens: Int) -> String {
        var text = ""
        for _ in 0..<(1 + below(tokens)) { text += alphabet[below(alphabet.count)] }
        return text
    }

    /// A consensus footer over `answer`: partly true, two of three models answering, one of them
    /// dissenting, its name (`modelTokens`) and its reason (`reasonTokens`) drawn from `alphabet` in
    /// that order — hostile model text where a renderer puts its footer.
    public mutating func dissentingFooter(answer: String, from alphabet: [String], modelTokens: Int = 2, reasonTokens: Int = 8) -> AgreementFooter {
        let model = text(from: alphabet, tokens: modelTokens)
        let reason = text(from: alphabet, tokens: reasonTokens)
        return AgreementFooter(
            ConsensusResult(
                answer: answer, verdict: .partly, agreement: 0.5, answered: 2, asked: 3,
                dissent: [Dissent(model: model, verdict: .false, reason: reason)], elapsed: .seconds(1)))
    }
}
