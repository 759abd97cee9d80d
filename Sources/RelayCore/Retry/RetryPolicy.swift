/// How often and how patiently a failed request is tried again: exponential backoff with jitter
/// and a bound. Used for backend calls (the Rhea client retries transport failures and 5xx, not
/// timeouts, because the user has already waited the whole deadline once) and outbox delivery.
public struct RetryPolicy: Sendable, Hashable {
    /// Total tries, the first one included (1 = no retry).
    public var attempts: Int
    /// Delay before the first retry; each later retry doubles it.
    public var baseDelay: Duration
    /// Upper bound of one delay.
    public var maxDelay: Duration

    /// Creates a policy; tests pass tiny delays to keep the suite fast.
    public init(attempts: Int = 3, baseDelay: Duration = .milliseconds(250), maxDelay: Duration = .seconds(8)) {
        self.attempts = max(1, attempts)
        self.baseDelay = max(.zero, baseDelay)
        self.maxDelay = max(.zero, maxDelay)
    }

    /// No retries at all.
    public static let none = RetryPolicy(attempts: 1)

    /// The wait after failed attempt number `attempt` (1-based).
    ///
    /// Exponential with "equal jitter": half the step is fixed, half random, so clients that
    /// failed together do not come back together.
    public func delay(afterAttempt attempt: Int, random: Double = Double.random(in: 0...1)) -> Duration {
        var backoff = Backoff(initial: baseDelay, multiplier: 2, maximum: maxDelay, jitter: 0.5)
        backoff.skip(min(max(0, attempt - 1), 64))
        return backoff.next(unitRandom: random)
    }
}
