import RelayCore
import Testing

@Suite("Backoff")
struct BackoffTests {
    @Test func growsExponentiallyUpToTheCap() {
        var backoff = Backoff(initial: 0.5, multiplier: 3, maximum: 10, jitter: 0)
        let delays = (0..<6).map { _ in backoff.next(unitRandom: 0.3) }
        #expect(delays == [0.5, 1.5, 4.5, 10, 10, 10])
        #expect(backoff.attempts == 6)
    }

    @Test func jitterStaysWithinTheRangeAndNeverAboveTheDelay() {
        var backoff = Backoff(initial: 4, multiplier: 2, maximum: 30, jitter: 0.5)
        #expect(backoff.next(unitRandom: 0) == 2)
        #expect(backoff.next(unitRandom: 1) == 8)
        #expect(backoff.next(unitRandom: 0.5) == 12)
        // Out-of-range randomness is clamped.
        #expect(backoff.next(unitRandom: 7) == 30)
        #expect(backoff.next(unitRandom: -1) == 15)

        var random = Backoff(initial: 1, multiplier: 2, maximum: 30, jitter: 0.5)
        for _ in 0..<200 {
            let base = random.nextBase
            let delay = random.next()
            #expect(delay >= base * 0.5 && delay <= base)
            #expect(delay <= 30)
        }
    }

    @Test func resetStartsOver() {
        var backoff = Backoff(initial: 1, multiplier: 2, maximum: 60, jitter: 0)
        _ = backoff.next()
        _ = backoff.next()
        #expect(backoff.nextBase == 4)
        backoff.reset()
        #expect(backoff.attempts == 0)
        #expect(backoff.next() == 1)
    }

    @Test func aLongOutageDoesNotOverflow() {
        var backoff = Backoff(initial: 1, multiplier: 10, maximum: 300, jitter: 0)
        for _ in 0..<10_000 { _ = backoff.next() }
        #expect(backoff.next() == 300)
    }

    @Test func nonsenseSettingsAreMadeSafe() {
        var backoff = Backoff(initial: -1, multiplier: 0.5, maximum: 5, jitter: 3)
        #expect(backoff.initial == 0)
        #expect(backoff.multiplier == 1)
        #expect(backoff.jitter == 1)
        #expect(backoff.next(unitRandom: 1) == 0)
    }
}
