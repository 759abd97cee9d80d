import RelayCore
import Testing

@Suite("Backoff")
struct BackoffTests {
    @Test func growsExponentiallyUpToTheCap() {
        var backoff = Backoff(initial: .milliseconds(500), multiplier: 3, maximum: .seconds(10), jitter: 0)
        let delays = (0..<6).map { _ in backoff.next(unitRandom: 0.3) }
        #expect(delays == [.milliseconds(500), .milliseconds(1500), .milliseconds(4500), .seconds(10), .seconds(10), .seconds(10)])
        #expect(backoff.attempts == 6)
    }

    @Test func jitterStaysWithinTheRangeAndNeverAboveTheDelay() {
        var backoff = Backoff(initial: .seconds(4), multiplier: 2, maximum: .seconds(30), jitter: 0.5)
        #expect(backoff.next(unitRandom: 0) == .seconds(2))
        #expect(backoff.next(unitRandom: 1) == .seconds(8))
        #expect(backoff.next(unitRandom: 0.5) == .seconds(12))
        // Out-of-range randomness is clamped.
        #expect(backoff.next(unitRandom: 7) == .seconds(30))
        #expect(backoff.next(unitRandom: -1) == .seconds(15))

        var random = Backoff(initial: .seconds(1), multiplier: 2, maximum: .seconds(30), jitter: 0.5)
        for _ in 0..<200 {
            let base = random.nextBase
            let delay = random.next()
            #expect(delay >= base * 0.5 && delay <= base)
            #expect(delay <= .seconds(30))
        }
    }

    @Test func resetStartsOver() {
        var backoff = Backoff(initial: .seconds(1), multiplier: 2, maximum: .seconds(60), jitter: 0)
        _ = backoff.next()
        _ = backoff.next()
        #expect(backoff.nextBase == .seconds(4))
        backoff.reset()
        #expect(backoff.attempts == 0)
        #expect(backoff.next() == .seconds(1))
    }

    @Test func aLongOutageDoesNotOverflow() {
        var backoff = Backoff(initial: .seconds(1), multiplier: 10, maximum: .seconds(300), jitter: 0)
        for _ in 0..<10_000 { _ = backoff.next() }
        #expect(backoff.next() == .seconds(300))
    }

    @Test func nonsenseSettingsAreMadeSafe() {
        var backoff = Backoff(initial: .seconds(-1), multiplier: 0.5, maximum: .seconds(5), jitter: 3)
        #expect(backoff.initial == .zero)
        #expect(backoff.multiplier == 1)
        #expect(backoff.jitter == 1)
        #expect(backoff.next(unitRandom: 1) == .zero)
    }
}
