public import RelayCore

/// The Socket Mode connection lifecycle, without any I/O: events in, actions out.
///
/// ```
/// idle ─start→ requestingURL ─urlOpened→ connecting ─hello→ connected
///                  ↑  │urlFailed              │closed/hello timeout   │closed (unexpected)
///                  │  ↓                       ↓                       ↓
///                  └─ waitingToRetry ←──── (backoff) ←────────────────┘
/// connected ─disconnect→ requestingURL(replacing: old) → connecting(new, replacing: old)
///           ─hello on new→ connected(new) + close(old)
/// ```
///
/// - A new envelope is handed on, and acknowledged on the connection it came on once the relay
///   has stored what it asked for (`.handled`): an acknowledged envelope is never lost, and one
///   the relay could not store is not acknowledged, so Slack sends it again. A repeat (same
///   `envelope_id`, or a retry of the same Events API `event_id`) is not handed on again: it is
///   acknowledged at once when the first was handled, or with it when that is still under way.
/// - On `disconnect` (Slack recycles connections every few hours, or warns before it does) the
///   old connection stays open until the new one has said `hello`, so nothing sent in between
///   is lost; envelopes that still arrive on the old one are acknowledged and handed on.
/// - Unexpected closes and failed attempts wait with `Backoff`, which starts over once a
///   connection is healthy: it stayed up `healthyUptime`, or handed on an envelope.
/// - A `disconnect` refreshes at once only when the connection was healthy, or for the first
///   one since the backoff last started over; a server that sends `disconnect` after every
///   `hello` therefore gets one prompt refresh, then reconnections spaced by the growing,
///   jittered backoff — never a tight loop.
/// - `stop` closes every connection; `isFinished` says when all have closed.
public struct SocketModeStateMachine: Sendable {
    /// Numbers the connections, from 1, in the order they are opened.
    public typealias ConnectionID = Int

    public enum State: Sendable, Hashable {
        /// Not started.
        case idle
        /// Waiting for `apps.connections.open`. `replacing` is a connection that is still up
        /// and will be closed once the new one is ready.
        case requestingURL(replacing: ConnectionID?)
        /// Waiting for the retry timer before asking for a URL again.
        case waitingToRetry(replacing: ConnectionID?)
        /// The socket is opening, or open without a `hello` yet.
        case connecting(ConnectionID, replacing: ConnectionID?)
        /// Ready: `hello` received.
        case connected(ConnectionID)
        /// Stopped; connections may still be closing (see `isFinished`).
        case stopped
    }

    public enum Event: Sendable, Hashable {
        /// Begin.
        case start
        /// `apps.connections.open` answered this URL.
        case urlOpened(String)
        /// `apps.connections.open` failed; `retryAfter` when Slack rate-limited it.
        case urlFailed(retryAfter: Duration?)
        /// The delay asked for by `.retry(after:)` has passed.
        case retryTimerFired
        /// A frame arrived on a connection.
        case received(SocketModeMessage, on: ConnectionID)
        /// A connection did not say `hello` in time.
        case helloTimedOut(ConnectionID)
        /// A connection ended (closed by either side, or never opened); `uptime` is how long
        /// from the connection attempt.
        case closed(ConnectionID, uptime: Duration)
        /// `healthyUptime` has passed since the connection attempt (the driver's timer).
        case uptimeReached(ConnectionID)
        /// Stop: close everything.
        case stop
        /// The relay is done with an envelope handed on: `acknowledge` when what it asked for is
        /// stored (or can never be), false when it could not be stored and should come again.
        case handled(SocketModeEnvelope, acknowledge: Bool)
    }

    public enum Action: Sendable, Hashable {
        /// Call `apps.connections.open`, then report `.urlOpened` or `.urlFailed`.
        case requestURL
        /// Open a websocket to `url` for connection `id`; report frames, then `.closed`.
        case connect(ConnectionID, url: String)
        /// Send `{"envelope_id":…}` for `envelope` on that connection, now.
        case acknowledge(SocketModeEnvelope, on: ConnectionID)
        /// Hand `envelope` to the relay.
        case deliver(SocketModeEnvelope)
        /// Close the connection; report `.closed` when it has.
        case close(ConnectionID)
        /// Report `.retryTimerFired` after this long.
        case retry(after: Duration)
    }

    /// Where the lifecycle is.
    public private(set) var state: State = .idle
    /// Connections asked for (`.connect`) and not yet reported closed.
    public private(set) var openConnections: Set<ConnectionID> = []
    /// The delays for the next retries.
    public private(set) var backoff: Backoff
    /// Seconds a connection must stay up for the backoff to start over after it closes.
    public let healthyUptime: Duration
    /// Connections asked to close: their end is expected, not a failure.
    private var closing: Set<ConnectionID> = []
    /// Connections that proved healthy (see `uptimeReached` and envelopes).
    private var healthy: Set<ConnectionID> = []
    /// Whether the next `disconnect` of an unproven connection may refresh without waiting.
    private var promptRefreshAllowed = true
    private var deduplicator: SocketModeDeduplicator
    /// Envelopes handed on and not handled yet, by `envelope_id`, with the acknowledgements that
    /// wait for them: the envelope's own, and its repeats' (each on the connection it came on).
    private var awaitingAcks: [String: [(envelope: SocketModeEnvelope, connection: ConnectionID)]] = [:]
    /// The `envelope_id` being handled for an Events API `event_id`.
    private var handlingEvents: [String: String] = [:]
    private let unitRandom: @Sendable () -> Double
    private var nextID: ConnectionID = 1

    /// A machine in `.idle`.
    ///
    /// - Parameters:
    ///   - unitRandom: a number in `0...1` for each backoff's jitter; tests pass a constant.
    public init(
        backoff: Backoff = Backoff(),
        healthyUptime: Duration = .seconds(30),
        deduplicationCapacity: Int = 4096,
        unitRandom: @escaping @Sendable () -> Double = { Double.random(in: 0...1) }
    ) {
        self.backoff = backoff
        self.healthyUptime = healthyUptime
        self.deduplicator = SocketModeDeduplicator(capacity: deduplicationCapacity)
        self.unitRandom = unitRandom
    }

    /// Stopped, with every connection closed.
    public var isFinished: Bool { state == .stopped && openConnections.isEmpty }

    /// Advances on `event` and returns what to do, in order.
    public mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .start:
            guard state == .idle else { return [] }
            state = .requestingURL(replacing: nil)
            return [.requestURL]

        case .urlOpened(let url):
            // Stale after a stop: nothing to connect.
            guard case .requestingURL(let replacing) = state else { return [] }
            let id = nextID
            nextID += 1
            openConnections.insert(id)
            state = .connecting(id, replacing: replacing)
            return [.connect(id, url: url)]

        case .urlFailed(let retryAfter):
            guard case .requestingURL(let replacing) = state else { return [] }
            return waitToRetry(replacing: replacing, atLeast: retryAfter ?? .zero)

        case .retryTimerFired:
            guard case .waitingToRetry(let replacing) = state else { return [] }
            state = .requestingURL(replacing: replacing)
            return [.requestURL]

        case .received(let message, let id):
            return receive(message, on: id)

        case .helloTimedOut(let id):
            guard case .connecting(id, let replacing) = state else { return [] }
            closing.insert(id)
            return [.close(id)] + waitToRetry(replacing: replacing, atLeast: .zero)

        case .closed(let id, let uptime):
            return closed(id, uptime: uptime)

        case .handled(let envelope, let acknowledge):
            let waiting = awaitingAcks.removeValue(forKey: envelope.envelopeID) ?? []
            if let eventID = envelope.eventID, handlingEvents[eventID] == envelope.envelopeID { handlingEvents[eventID] = nil }
            guard acknowledge else {
                // Not stored: when Slack sends it again, it is handed on again.
                deduplicator.forget(envelope)
                return []
            }
            // A connection closed meanwhile cannot carry the acknowledgement; Slack then sends the
            // envelope again on another, and it is acknowledged there as a repeat.
            return waiting.filter { openConnections.contains($0.connection) }.map { .acknowledge($0.envelope, on: $0.connection) }

        case .uptimeReached(let id):
            guard openConnections.contains(id), !closing.contains(id), case .connected(id) = state else { return [] }
            markHealthy(id)
            return []

        case .stop:
            guard state != .stopped else { return [] }
            state = .stopped
            let toClose = openConnections.subtracting(closing).sorted()
            closing.formUnion(toClose)
            return toClose.map { .close($0) }
        }
    }

    private mutating func receive(_ message: SocketModeMessage, on id: ConnectionID) -> [Action] {
        switch message {
        case .hello:
            guard case .connecting(id, let replacing) = state else { return [] }
            state = .connected(id)
            // The new connection is ready: only now may the old one go.
            guard let old = replacing, closing.insert(old).inserted else { return [] }
            return [.close(old)]

        case .disconnect:
            switch state {
            case .connected(id):
                // Keep this one open until its successor says hello (or, when waiting first,
                // until Slack closes it).
                if takePromptRefresh(id) {
                    state = .requestingURL(replacing: id)
                    return [.requestURL]
                }
                return waitToRetry(replacing: id, atLeast: .zero)
            case .connecting(id, let replacing):
                // Going away before it was even ready: drop it and ask again.
                closing.insert(id)
                if takePromptRefresh(id) {
                    state = .requestingURL(replacing: replacing)
                    return [.close(id), .requestURL]
                }
                return [.close(id)] + waitToRetry(replacing: replacing, atLeast: .zero)
            default:
                // The old connection of a refresh under way, or one already closing.
                return []
            }

        case .envelope(let envelope):
            // Taken on every connection in every state: a closing connection may still carry one.
            if deduplicator.isFirstDelivery(of: envelope) {
                awaitingAcks[envelope.envelopeID] = [(envelope, id)]
                if let eventID = envelope.eventID { handlingEvents[eventID] = envelope.envelopeID }
                // A connection that delivers events works: its disconnect is a real refresh.
                if case .connected(id) = state { markHealthy(id) }
                return [.deliver(envelope)]
            }
            let first = awaitingAcks[envelope.envelopeID] != nil ? envelope.envelopeID : envelope.eventID.flatMap { handlingEvents[$0] }
            if let first, awaitingAcks[first] != nil {
                // The first is still being stored: this one is acknowledged with it.
                awaitingAcks[first]?.append((envelope, id))
                return []
            }
            return [.acknowledge(envelope, on: id)]

        case .other:
            return []
        }
    }

    private mutating func closed(_ id: ConnectionID, uptime: Duration) -> [Action] {
        openConnections.remove(id)
        let wasHealthy = healthy.remove(id) != nil
        if closing.remove(id) != nil {
            // Asked for: after a refresh, a hello timeout or a stop.
            return []
        }
        switch state {
        case .connected(id):
            if wasHealthy || uptime >= healthyUptime { backoff.reset() }
            return waitToRetry(replacing: nil, atLeast: .zero)
        case .connecting(id, let replacing):
            return waitToRetry(replacing: replacing, atLeast: .zero)
        case .connecting(let current, replacing: id):
            // The old connection of a refresh went first; the new one is on its way.
            state = .connecting(current, replacing: nil)
        case .requestingURL(replacing: id):
            state = .requestingURL(replacing: nil)
        case .waitingToRetry(replacing: id):
            state = .waitingToRetry(replacing: nil)
        default:
            break
        }
        return []
    }

    /// The connection works: later failures start the backoff over, and its disconnect (or
    /// the next one) may refresh at once.
    private mutating func markHealthy(_ id: ConnectionID) {
        guard healthy.insert(id).inserted else { return }
        backoff.reset()
        promptRefreshAllowed = true
    }

    /// Whether a `disconnect` of `id` may refresh without waiting: a healthy connection's may;
    /// otherwise only the first since the start or since the last healthy connection. Every
    /// other one waits for the backoff.
    private mutating func takePromptRefresh(_ id: ConnectionID) -> Bool {
        let allowed = healthy.contains(id) || promptRefreshAllowed
        promptRefreshAllowed = false
        return allowed
    }

    private mutating func waitToRetry(replacing: ConnectionID?, atLeast minimum: Duration) -> [Action] {
        state = .waitingToRetry(replacing: replacing)
        let delay = max(minimum, backoff.next(unitRandom: unitRandom()))
        return [.retry(after: delay)]
    }
}

/// Remembers the envelopes (and Events API events) recently handed on, so one delivered twice
/// is acknowledged again but not handed on again.
///
/// Slack sends an envelope again when its acknowledgement came late or was lost, for example
/// on a connection that was closing: with the same `envelope_id`, or as a retry
/// (`retry_attempt` > 0) under a new one that carries the same `event_id`. Memory is bounded:
/// the oldest keys are forgotten first.
public struct SocketModeDeduplicator: Sendable, Hashable {
    /// How many keys are remembered.
    public let capacity: Int
    private var keys: Set<String> = []
    private var order: [String] = []
    /// Where the next key goes in `order` once it is full (a ring).
    private var oldest = 0

    /// Remembers up to `capacity` keys (at least 1).
    public init(capacity: Int = 4096) {
        self.capacity = max(1, capacity)
    }

    /// Records `envelope` and returns whether it is new, i.e. should be handed on.
    public mutating func isFirstDelivery(of envelope: SocketModeEnvelope) -> Bool {
        let envelopeKey = "envelope:\(envelope.envelopeID)"
        let eventKey = envelope.eventID.map { "event:\($0)" }
        let seen = keys.contains(envelopeKey) || eventKey.map(keys.contains) == true
        remember(envelopeKey)
        if let eventKey { remember(eventKey) }
        return !seen
    }

    /// Forgets `envelope` (its `envelope_id` and `event_id`): it was not stored, and its next
    /// delivery must be handed on.
    public mutating func forget(_ envelope: SocketModeEnvelope) {
        keys.remove("envelope:\(envelope.envelopeID)")
        if let eventID = envelope.eventID { keys.remove("event:\(eventID)") }
    }

    private mutating func remember(_ key: String) {
        guard keys.insert(key).inserted else { return }
        if order.count < capacity {
            order.append(key)
        } else {
            keys.remove(order[oldest])
            order[oldest] = key
            oldest = (oldest + 1) % capacity
        }
    }
}
