public import Logging
public import RelayCore
public import RelayPlatform
import Synchronization

/// Receives Slack events, slash commands and interactions over Socket Mode (no public URL).
///
/// Carries out `SocketModeStateMachine`'s actions: asks `apps.connections.open` for a URL,
/// holds the websocket (WSClient, with pings), hands each envelope to `handler` once and
/// acknowledges it when the handler says what it asked for is stored (a few milliseconds: well
/// within Slack's 3 s), refreshes connections without a gap when Slack asks, and reconnects with
/// backoff when one drops.
///
/// ```swift
/// let socketMode = SocketModeClient(appToken: appToken, web: webClient, logger: logger) { envelope in
///     await relay.store(envelope)   // decode and store envelope.payload; answer later, not here
/// }
/// try await socketMode.run()   // until cancelled or `stop()`
/// ```
///
/// Handlers run concurrently, each in its own child task, so a slow one delays nothing else
/// (only its own acknowledgement);
/// `stop()` lets those under way finish, cancellation cancels them. The app token, the
/// connection URLs (they carry a ticket) and payloads are never logged.
public final class SocketModeClient: Sendable {
    /// Receives each envelope once, before it is acknowledged; returns whether to acknowledge it:
    /// true once what it asks for is stored (or can never be: an unreadable payload), false when
    /// it could not be stored and Slack should send it again.
    public typealias Handler = @Sendable (SocketModeEnvelope) async -> Bool

    let appToken: String
    let web: any SlackWebAPI
    /// Timings and limits.
    public let configuration: Configuration
    let logger: Logger
    /// What reconnection delays and the hello timeout are waited on.
    let clock: any RelayClock
    /// Told when Slack refuses the app token (`invalid_auth` from `apps.connections.open`) and
    /// when it takes it again.
    let credentials: CredentialReporter
    let handler: Handler
    private let shared = Mutex(Shared())

    struct Shared {
        var input: AsyncStream<SocketModeStateMachine.Event>.Continuation?
        var running = false
        var stopRequested = false
        var state: SocketModeStateMachine.State = .idle
    }

    /// Creates a client; nothing happens until `run()`.
    ///
    /// - Parameters:
    ///   - appToken: the app-level token (`xapp-…`) for `apps.connections.open`.
    ///   - web: the Web API client that opens connections.
    ///   - clock: what reconnection delays and the hello timeout are waited on.
    ///   - handler: called once per envelope; its answer decides the acknowledgement.
    public init(
        appToken: String, web: any SlackWebAPI, configuration: Configuration = Configuration(), clock: any RelayClock = SystemClock(),
        credentials: CredentialReporter? = nil, logger: Logger, handler: @escaping Handler
    ) {
        self.appToken = appToken
        self.web = web
        self.configuration = configuration
        self.clock = clock
        var logger = logger
        logger[metadataKey: "platform"] = "slack"
        self.logger = logger
        self.credentials = credentials ?? .detached(platform: "slack", clock: clock, logger: logger)
        self.handler = handler
    }

    /// Where the connection lifecycle is (for health checks and tests).
    public var state: SocketModeStateMachine.State { shared.withLock { $0.state } }

    /// Whether a connection is ready to receive.
    public var isConnected: Bool {
        if case .connected = state { return true }
        return false
    }

    /// Asks `run()` to close its connections, let running handlers finish, and return.
    /// A client once stopped stays stopped: a later `run()` returns at once.
    public func stop() {
        let input = shared.withLock { shared in
            shared.stopRequested = true
            return shared.input
        }
        input?.yield(.stop)
    }

    /// Connects and keeps connected until the task is cancelled or `stop()` is called.
    ///
    /// Failures to connect are retried with backoff for as long as it runs (a refused token
    /// is logged at error level each time), so this returns only when asked to.
    ///
    /// - Throws: `SocketModeClientError.alreadyRunning` when called while it runs.
    public func run() async throws {
        let (events, input) = AsyncStream.makeStream(of: SocketModeStateMachine.Event.self)
        let start = shared.withLock { shared -> Bool? in
            if shared.running { return nil }
            if shared.stopRequested { return false }
            shared.running = true
            shared.input = input
            return true
        }
        guard let start else { throw SocketModeClientError.alreadyRunning }
        guard start else { return }
        defer {
            input.finish()
            shared.withLock {
                $0.running = false
                $0.input = nil
                // Also after a cancellation, which leaves the machine where it was.
                $0.state = .stopped
            }
        }

        var machine = SocketModeStateMachine(
            backoff: configuration.backoff, healthyUptime: configuration.healthyUptime,
            deduplicationCapacity: configuration.deduplicationCapacity)
        var outboxes: [SocketModeStateMachine.ConnectionID: AsyncStream<Outgoing>.Continuation] = [:]
        input.yield(.start)
        logger.info("Socket Mode starting")

        // Handlers live in the outer group so that a stop can end the connections and timers
        // (inner group) while the handlers already under way finish.
        await withDiscardingTaskGroup { deliveries in
            await withDiscardingTaskGroup { io in
                for await event in events {
                    let actions = machine.handle(event)
                    let state = machine.state
                    shared.withLock { $0.state = state }
                    note(event, actions: actions)
                    for action in actions {
                        perform(action, input: input, io: &io, deliveries: &deliveries, outboxes: &outboxes)
                    }
                    if case .closed(let id, _) = event {
                        outboxes.removeValue(forKey: id)?.finish()
                    }
                    if machine.isFinished { break }
                }
                // Stopped, or cancelled: end the URL request, timers and any socket left.
                io.cancelAll()
            }
        }
        for outbox in outboxes.values { outbox.finish() }
        logger.info("Socket Mode stopped")
    }
}

/// Why `SocketModeClient.run()` refused to start.
public enum SocketModeClientError: Error, Sendable, Hashable {
    /// `run()` is already running on this client.
    case alreadyRunning
}

extension SocketModeClient {
    /// Timings and limits of a `SocketModeClient`; the defaults suit Slack.
    public struct Configuration: Sendable, Hashable {
        /// Delays between reconnection attempts.
        public var backoff: Backoff
        /// Seconds a connection must stay up for `backoff` to start over after it closes.
        public var healthyUptime: Duration
        /// Seconds a new connection has to say `hello` before it is dropped and retried.
        public var helloTimeout: Duration
        /// Seconds between websocket pings; a ping unanswered by the next one closes the
        /// connection, which then reconnects (slack_sdk pings every 5 s).
        public var pingInterval: Duration
        /// Seconds to wait for the server's close frame after sending ours.
        public var closeTimeout: Duration
        /// Largest message (and frame) accepted; envelopes carry whole events.
        public var maxMessageBytes: Int
        /// How many envelope and event ids are remembered to drop duplicates.
        public var deduplicationCapacity: Int

        /// A configuration; every default suits Slack.
        public init(
            backoff: Backoff = Backoff(initial: .seconds(1), multiplier: 2, maximum: .seconds(30), jitter: 0.5),
            healthyUptime: Duration = .seconds(30),
            helloTimeout: Duration = .seconds(10),
            pingInterval: Duration = .seconds(10),
            closeTimeout: Duration = .seconds(5),
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
