public import RelayCore

/// How the outbox worker claims, paces and retries deliveries.
public struct DeliveryPolicy: Sendable, Hashable {
    /// Tries per entry, 429s included; then the entry is marked failed, logged and counted.
    public var maxAttempts: Int
    /// Backoff between tries that failed for a reason that may pass (5xx, timeouts).
    public var retry: RetryPolicy
    /// Seconds a claimed entry stays invisible to other claims while it is being delivered.
    public var lease: Double
    /// Seconds between looks at the outbox when nothing woke the worker.
    public var pollInterval: Double
    /// Deliveries in flight at once (across conversations; one per conversation at a time).
    public var maxInFlight: Int
    /// Seconds delivered and failed entries are kept (they hold reply text) before purging.
    public var keepFinished: Double
    /// Seconds a graceful shutdown spends delivering what is already due.
    public var drainTimeout: Double

    public init(
        maxAttempts: Int = 10, retry: RetryPolicy = RetryPolicy(attempts: 10, baseDelay: 1, maxDelay: 60),
        lease: Double = 120, pollInterval: Double = 1, maxInFlight: Int = 64, keepFinished: Double = 86_400,
        drainTimeout: Double = 10
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.retry = retry
        self.lease = lease
        self.pollInterval = pollInterval
        self.maxInFlight = max(1, maxInFlight)
        self.keepFinished = keepFinished
        self.drainTimeout = drainTimeout
    }
}
