/// How often and how patiently a failed request is tried again: exponential backoff with jitter
/// and a bound. Used for backend calls (the Rhea client retries transport failures and 5xx, not
/// timeouts, because the user has already waited the whole deadline once) and outbox delivery.
public struct RetryPolicy: Sendable, Hashable {
    /// Total tries, the first one included (1 = no retry).
    public var attempts: Int
    /// Delay before the first retry, in seconds; each later retry doubles it.
    public var baseDelay: Double
    /// Upper bound of one delay, in seconds.
    public var maxDelay: Double

    /// Creates a policy; tests pass tiny delays to keep the suite fast.
    public init(attempts: Int = 3, baseDelay: Double = 0.25, maxDelay: Double = 8) {
        self.attempts = max(1, attempts)
        self.baseDelay = max(0, baseDelay)
        self.maxDelay = max(0, maxDelay)
    }

    /// No retries at all.
    public static let none = RetryPolicy(attempts: 1)

    /// Seconds to wait after failed attempt number `attempt` (1-based).
    ///
    /// Exponential with "equal jitter": half the step is fixed, half random, so clients that
    /// failed together do not come back together.
    public func delay(afterAttempt attempt: Int, random: Double = Double.random(in: 0...1)) -> Double {
        var backoff = Backoff(initial: baseDelay, multiplier: 2, maximum: maxDelay, jitter: 0.5)
        backoff.skip(min(max(0, attempt - 1), 64))
        return backoff.next(unitRandom: random)
    }
}
