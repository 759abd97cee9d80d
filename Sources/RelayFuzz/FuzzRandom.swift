import RelayCore

/// A small deterministic random number generator (RelayCore's `SplitMix64`): the same seed gives the same
/// inputs on every machine, so a crash found once is found again with the same command.
public struct FuzzRandom: RandomNumberGenerator, Sendable {
    private var generator: SplitMix64

    public init(seed: UInt64) {
        generator = SplitMix64(seed: seed)
    }

    public mutating func next() -> UInt64 { generator.next() }

    /// A number in `0..<bound` (0 when `bound` is not positive).
    public mutating func below(_ bound: Int) -> Int {
        bound > 0 ? Int(next() % UInt64(bound)) : 0
    }

    /// True with probability 1 in `n`.
    public mutating func oneIn(_ n: Int) -> Bool {
        below(n) == 0
    }

    /// A seed for one target, derived from the run's seed and the target's name, so adding a
    /// target does not change the inputs of the others.
    public static func seed(_ seed: UInt64, for name: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in name.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3
        }
        return seed ^ hash
    }
}
