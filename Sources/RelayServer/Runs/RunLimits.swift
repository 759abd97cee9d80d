import NIOCore

/// How much runs at once, and how much may wait (`runs.*` in configuration).
public struct RunLimits: Sendable, Hashable {
    /// Runs in flight at most; more wait in the inbox (in the store, not in memory). Runs mostly
    /// wait on the backend, so the default allows 256 per core: enough for 200 people with a
    /// backend that takes 200 ms, small enough that memory stays bounded.
    public var maxInFlight: Int
    /// Commands waiting in the inbox beyond which new ones are refused with a "busy" answer
    /// rather than queued for longer than anyone would wait.
    public var busyDepth: Int

    public init(maxInFlight: Int = RunLimits.defaultMaxInFlight, busyDepth: Int = 5000) {
        self.maxInFlight = maxInFlight
        self.busyDepth = busyDepth
    }

    public static var defaultMaxInFlight: Int { 256 * max(1, System.coreCount) }
}
