/// A small seeded random number generator (SplitMix64), for tests that draw many cases at random.
///
/// Seeded, not the system generator, so a test draws the same strings and sequences on every run
/// and every platform, and a failing case can be replayed from its seed. SplitMix64 because it is
/// tiny, fast and well mixed: each `next()` adds the golden-ratio increment to the state and mixes
/// the result.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

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
}
