/// A small seeded random number generator (SplitMix64): tiny, fast, well mixed and the same on
/// every platform, so whatever is drawn from a seed — a fuzz run's inputs, a test's cases,
/// tribunal-sim's panels — is drawn again from it anywhere. Each `next()` adds the golden-ratio
/// increment to the state and mixes the result. The one copy: the fuzzer, the tests and the
/// simulation add their own draws on top.
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

    /// Uniform in [0, 1), from the top 53 bits of one `next()`.
    public mutating func unit() -> Double { Double(next() >> 11) * 0x1p-53 }
}
