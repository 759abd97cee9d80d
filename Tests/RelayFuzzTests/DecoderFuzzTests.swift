import RelayCore
import RelayFuzz
import RelayTestSupport
import Testing

/// The short version of `rhea-fuzz`: every decoder of untrusted input on its seeds and a few
/// thousand mutations of at most 16 KB (fixed seed), sized to take seconds in a debug build. A
/// trap would end the test process, so passing means 0 crashes; the long run (1 000 000 inputs
/// of up to 64 KB per decoder, release) is the command in docs/benchmarks.md.
@Suite("Fuzzing the decoders of untrusted input")
struct DecoderFuzzTests {
    static let iterations = 3_000

    @Test(arguments: FuzzTargets.all.map(\.name))
    func aShortRunDoesNotTrap(name: String) async throws {
        let target = try #require(FuzzTargets.all.first { $0.name == name })
        let report = try await offThePool { Fuzzer.run(target, iterations: Self.iterations, seed: 1, mutator: Mutator(maxLength: 16 * 1024)) }
        print("FUZZTIME \(name) \(report.elapsed) accepted \(report.accepted) clamped \(report.clamped)")
        #expect(report.inputs == Self.iterations)
        // The seeds are real payloads: some must be accepted, or the run mutates nothing useful.
        let seedsAccepted = target.seeds.filter(target.run).count
        #expect(seedsAccepted > 0, "\(name): every seed is refused")
        // And the mutations must reach past the first check sometimes, and be refused sometimes.
        #expect(report.accepted > target.seeds.count, "\(name): no mutated input was accepted")
        #expect(report.accepted < report.inputs, "\(name): no mutated input was refused")
    }

    @Test func inputsAreTheSameForTheSameSeedAndDifferForAnother() throws {
        let target = try #require(FuzzTargets.all.first { $0.name == "rhea.tribunal" })
        let first = (0..<50).map { Fuzzer.input($0, of: target, seed: 7) }
        #expect(first == (0..<50).map { Fuzzer.input($0, of: target, seed: 7) })
        #expect(first != (0..<50).map { Fuzzer.input($0, of: target, seed: 8) })
    }

    @Test func theMutatorProducesTheHostileShapesItPromises() {
        var random = FuzzRandom(seed: 3)
        let seeds = [Array(#"{"agreement_score": 0.61, "models_responded": 3}"#.utf8)]
        var seen = Set<String>()
        for _ in 0..<5_000 {
            let text = String(decoding: Mutator().mutate(seeds, random: &random), as: UTF8.self)
            for needle in ["1e309", "9223372036854775808", "NaN", "-0", "[[[[", "{\"a\":{\"a\":"] where text.contains(needle) {
                seen.insert(needle)
            }
        }
        #expect(seen == ["1e309", "9223372036854775808", "NaN", "-0", "[[[[", "{\"a\":{\"a\":"])
    }
}
