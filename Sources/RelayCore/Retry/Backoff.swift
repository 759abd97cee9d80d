/// Delays between attempts: exponential, capped, with jitter. The one backoff of the relay:
/// websocket reconnects keep one as state; `RetryPolicy` (backend calls, outbox delivery)
/// computes from it.
///
/// Attempt `n` (from 0) waits `min(maximum, initial × multiplierⁿ)` scaled by a random factor
/// in `[1 − jitter, 1]`, so delays never exceed the cap and many clients that lost the same
/// server do not come back in step. `reset()` after a healthy connection starts over.
public struct Backoff: Sendable, Hashable {
    /// The first delay (before jitter).
    public var initial: Duration
    /// Growth factor from one attempt to the next.
    public var multiplier: Double
    /// The largest delay.
    public var maximum: Duration
    /// Fraction of each delay that is random, 0 (none) to 1 (anything from 0 to the delay).
    public var jitter: Double
    /// Delays handed out since the last reset.
    public private(set) var attempts = 0

    /// A backoff from `initial`, growing by `multiplier`, capped at `maximum`.
    public init(initial: Duration = .seconds(1), multiplier: Double = 2, maximum: Duration = .seconds(30), jitter: Double = 0.5) {
        self.initial = max(.zero, initial)
        self.multiplier = multiplier.isFinite ? max(1, multiplier) : 1
        self.maximum = max(.zero, maximum)
        self.jitter = jitter.isFinite ? min(1, max(0, jitter)) : 0
    }

    /// The delay before the next attempt, before jitter.
    public var nextBase: Duration {
        var delay = min(initial, maximum)
        var step = 0
        // Stops growing at the cap, so a long outage cannot overflow.
        while step < attempts, delay < maximum, multiplier > 1 {
            delay = min(maximum, delay * multiplier)
            step += 1
        }
        return delay
    }

    /// The delay before the next attempt; `unitRandom` in `0...1` picks where in the jitter
    /// range it falls (1 is the full delay). Counts an attempt.
    public mutating func next(unitRandom: Double) -> Duration {
        let base = nextBase
        attempts += 1
        let random = unitRandom.isFinite ? min(1, max(0, unitRandom)) : 1
        return base * (1 - jitter + jitter * random)
    }

    /// The delay before the next attempt, with system randomness.
    public mutating func next() -> Duration {
        next(unitRandom: Double.random(in: 0...1))
    }

    /// Counts `count` attempts as already made.
    public mutating func skip(_ count: Int) {
        attempts += max(0, count)
    }

    /// Starts over from `initial`: the last connection was healthy.
    public mutating func reset() {
        attempts = 0
    }
}
