public import RelayCore

/// How the outbox worker claims, paces and retries deliveries.
public struct DeliveryPolicy: Sendable, Hashable {
    /// Tries per entry, 429s included; then the entry is marked failed, logged and counted.
    public var maxAttempts: Int
    /// Backoff between tries that failed for a reason that may pass (5xx, timeouts).
    public var retry: RetryPolicy
    /// How long a claimed entry stays invisible to other claims while it is being delivered.
    public var lease: Duration
    /// Time between looks at the outbox when nothing woke the worker.
    public var pollInterval: Duration
    /// Deliveries in flight at once (across conversations; one per conversation at a time).
    public var maxInFlight: Int
    /// How long delivered and failed entries are kept (they hold reply text) before purging.
    public var keepFinished: Duration
    /// How long a graceful shutdown spends delivering what is already due.
    public var drainTimeout: Duration

    public init(
        maxAttempts: Int = 10, retry: RetryPolicy = RetryPolicy(attempts: 10, baseDelay: .seconds(1), maxDelay: .seconds(60)),
        lease: Duration = .seconds(120), pollInterval: Duration = .seconds(1), maxInFlight: Int = 64,
        keepFinished: Duration = .seconds(86_400), drainTimeout: Duration = .seconds(10)
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
