import RelayCore
import Synchronization

/// Runs a target on its seeds and then on mutated inputs, in this process: a trap (overflow,
/// bad index, force unwrap, precondition) ends the process, which is the failure the fuzzer
/// looks for. Everything else — accepted or refused — is a pass.
public enum Fuzzer {
    /// Input `index` of `target` for `seed`: the seeds themselves first, then mutations. The
    /// same arguments give the same input, so a crash can be replayed (`rhea-fuzz --replay`).
    public static func input(_ index: Int, of target: FuzzTarget, seed: UInt64, mutator: Mutator = Mutator()) -> [UInt8] {
        var inputs = Inputs(target: target, seed: seed, mutator: mutator)
        var input: [UInt8] = []
        for _ in 0...index { input = inputs.next() }
        return input
    }

    /// Runs `iterations` inputs through `target`; `willRun` sees each one first (the executable
    /// keeps it where its crash handler can write it out).
    public static func run(
        _ target: FuzzTarget, iterations: Int, seed: UInt64, mutator: Mutator = Mutator(),
        willRun: (Int, [UInt8]) -> Void = { _, _ in }
    ) -> FuzzReport {
        let clamped = ClampCount()
        let started = ContinuousClock.now
        var accepted = 0
        var inputs = Inputs(target: target, seed: seed, mutator: mutator)
        // Replaced numbers are counted here instead of logged: millions of hostile inputs would
        // flood the log and the process-wide counter.
        UntrustedNumber.$observer.withValue(UntrustedNumber.Observer { _ in clamped.value.add(1, ordering: .relaxed) }) {
            for index in 0..<max(0, iterations) {
                let input = inputs.next()
                willRun(index, input)
                if target.run(input) { accepted += 1 }
            }
        }
        return FuzzReport(
            target: target.name, inputs: max(0, iterations), accepted: accepted, clamped: clamped.value.load(ordering: .relaxed),
            elapsed: started.duration(to: .now))
    }

    /// The input sequence of one target.
    struct Inputs {
        let target: FuzzTarget
        let mutator: Mutator
        var random: FuzzRandom
        var produced = 0

        init(target: FuzzTarget, seed: UInt64, mutator: Mutator) {
            self.target = target
            self.mutator = mutator
            random = FuzzRandom(seed: FuzzRandom.seed(seed, for: target.name))
        }

        mutating func next() -> [UInt8] {
            defer { produced += 1 }
            if produced < target.seeds.count { return target.seeds[produced] }
            return mutator.mutate(target.seeds, random: &random)
        }
    }
}

/// The count of replaced numbers, shared with the observer closure: a class, because the
/// closure outlives the call's frame in the task-local storage (an `Atomic` captured from the
/// stack crashed the release build).
private final class ClampCount: Sendable {
    let value = Atomic<Int>(0)
}
