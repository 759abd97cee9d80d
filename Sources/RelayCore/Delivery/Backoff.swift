/// Delays between attempts: exponential, capped, with jitter. The one backoff of the relay:
/// websocket reconnects keep one as state; `RetryPolicy` (backend calls, outbox delivery)
/// computes from it.
///
/// Attempt `n` (from 0) waits `min(maximum, initial × multiplierⁿ)` scaled by a random factor
/// in `[1 − jitter, 1]`, so delays never exceed the cap and many clients that lost the same
/// server do not come back in step. `reset()` after a healthy connection starts over.
public struct Backoff: Sendable, Hashable {
    /// Seconds before the first retry (before jitter).
    public var initial: Double
    /// Growth factor from one attempt to the next.
    public var multiplier: Double
    /// Largest delay in seconds.
    public var maximum: Double
    /// Fraction of each delay that is random, 0 (none) to 1 (anything from 0 to the delay).
    public var jitter: Double
    /// Delays handed out since the last reset.
    public private(set) var attempts = 0

    /// A backoff from `initial` seconds, growing by `multiplier`, capped at `maximum`.
    public init(initial: Double = 1, multiplier: Double = 2, maximum: Double = 30, jitter: Double = 0.5) {
        self.initial = max(0, initial)
        self.multiplier = max(1, multiplier)
        self.maximum = max(0, maximum)
        self.jitter = min(1, max(0, jitter))
    }

    /// The delay in seconds before the next attempt, before jitter.
    public var nextBase: Double {
        var delay = min(initial, maximum)
        var step = 0
        // Stops growing at the cap, so a long outage cannot overflow.
        while step < attempts, delay < maximum, multiplier > 1 {
            delay = min(maximum, delay * multiplier)
            step += 1
        }
        return delay
    }

    /// The delay in seconds before the next attempt; `unitRandom` in `0...1` picks where in
    /// the jitter range it falls (1 is the full delay). Counts an attempt.
    public mutating func next(unitRandom: Double) -> Double {
        let base = nextBase
        attempts += 1
        let random = unitRandom.isFinite ? min(1, max(0, unitRandom)) : 1
        return base * (1 - jitter + jitter * random)
    }

    /// The delay in seconds before the next attempt, with system randomness.
    public mutating func next() -> Double {
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
