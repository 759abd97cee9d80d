public import RelayCore

extension SocketModeClient {
    /// Timings and limits of a `SocketModeClient`; the defaults suit Slack.
    public struct Configuration: Sendable, Hashable {
        /// Delays between reconnection attempts.
        public var backoff: Backoff
        /// Seconds a connection must stay up for `backoff` to start over after it closes.
        public var healthyUptime: Double
        /// Seconds a new connection has to say `hello` before it is dropped and retried.
        public var helloTimeout: Double
        /// Seconds between websocket pings; a ping unanswered by the next one closes the
        /// connection, which then reconnects (slack_sdk pings every 5 s).
        public var pingInterval: Double
        /// Seconds to wait for the server's close frame after sending ours.
        public var closeTimeout: Double
        /// Largest message (and frame) accepted; envelopes carry whole events.
        public var maxMessageBytes: Int
        /// How many envelope and event ids are remembered to drop duplicates.
        public var deduplicationCapacity: Int

        /// A configuration; every default suits Slack.
        public init(
            backoff: Backoff = Backoff(initial: 1, multiplier: 2, maximum: 30, jitter: 0.5),
            healthyUptime: Double = 30,
            helloTimeout: Double = 10,
            pingInterval: Double = 10,
            closeTimeout: Double = 5,
            maxMessageBytes: Int = 4 * 1024 * 1024,
            deduplicationCapacity: Int = 4096
        ) {
            self.backoff = backoff
            self.healthyUptime = healthyUptime
            self.helloTimeout = helloTimeout
            self.pingInterval = pingInterval
            self.closeTimeout = closeTimeout
            self.maxMessageBytes = maxMessageBytes
            self.deduplicationCapacity = deduplicationCapacity
        }
    }
}
