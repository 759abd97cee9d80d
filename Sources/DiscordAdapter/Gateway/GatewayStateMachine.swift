public import RelayCore

/// The Discord gateway connection's lifecycle, without any I/O: events in, actions out.
///
/// ```
/// idle ─start→ connecting ─HELLO→ handshaking ─READY/RESUMED→ ready
///                 ↑            (IDENTIFY or RESUME sent,       │ close, op 7, op 9,
///                 │             first heartbeat jittered)      │ missed ACK, timeout
///                 └──── waitingToReconnect ←── (backoff) ←─────┘
/// any ─fatal close code (4004, 4010–4014)→ stopped(reason)      any ─stop→ stopped
/// ```
///
/// - A new connection RESUMEs (to READY's `resume_gateway_url`, with `session_id` and the last
///   sequence number) when a session exists, and IDENTIFYs to the gateway URL otherwise, so a
///   drop loses nothing: Discord replays what was missed (deduplicate on message ids).
/// - After HELLO the first heartbeat goes after `interval × random(0…1)` (the random injected),
///   then one per interval. A heartbeat due while the previous one is still unacknowledged means
///   a zombie connection: it is closed with 4000 (not 1000/1001, which would end the session)
///   and resumed.
/// - op 7 RECONNECT resumes; op 9 INVALID SESSION resumes when `d` is true, and otherwise
///   forgets the session and IDENTIFYs again after 1–5 s (random), as Discord asks.
/// - Close codes 4004 (authentication failed) and 4010–4014 (shard, version, intents) cannot
///   be fixed by reconnecting: the machine stops and says why (`GatewayStopReason`). 4007 and
///   4009 end the session (IDENTIFY next); every other close, with a code or without, resumes.
/// - Every reconnection waits for `Backoff`, which starts over only once a connection proved
///   healthy (ready, and two heartbeats acknowledged, so at least one full interval up), and a
///   new IDENTIFY never follows another within `identifySpacing`: a gateway that closes every
///   connection at once cannot drive a tight loop, nor burn the 1000 IDENTIFYs a day a token has.
/// - `stop` closes with 1000, which ends the session: the bot goes offline at once. `handOver`
///   closes with 4000 instead, which keeps it, for another process to resume.
/// - A machine can start from a session an earlier process saved (`restore`, from its
///   `resumeState`): its first connection RESUMEs at the saved resume URL, and IDENTIFYs after
///   op 9 if Discord no longer knows the session.
///
/// Stale events (a timer or frame of a connection already replaced) are ignored, so the driver
/// may report them freely.
public struct GatewayStateMachine: Sendable {
    /// Numbers the connections, from 1, in the order they are opened.
    public typealias ConnectionID = Int

    public enum State: Sendable, Hashable {
        /// Not started.
        case idle
        /// The socket is opening, or open without HELLO yet.
        case connecting(ConnectionID)
        /// HELLO received, IDENTIFY or RESUME sent; waiting for READY or RESUMED.
        case handshaking(ConnectionID)
        /// READY or RESUMED received: events flow.
        case ready(ConnectionID)
        /// Waiting for the reconnect timer (`.reconnect(after:)`).
        case waitingToReconnect
        /// Stopped: by `stop` (nil), or by Discord for a reason reconnecting cannot fix.
        case stopped(GatewayStopReason?)
    }

    public enum Event: Sendable, Hashable {
        /// Begin, with the URL `GET /gateway/bot` answered (`wss://gateway.discord.gg`).
        case start(gatewayURL: String)
        /// A frame arrived on a connection.
        case received(GatewayMessage, on: ConnectionID)
        /// The delay asked for by `.scheduleHeartbeat` has passed.
        case heartbeatDue(ConnectionID)
        /// The delay asked for by `.scheduleHandshakeTimeout` has passed.
        case handshakeTimedOut(ConnectionID)
        /// A connection ended (closed by either side, or never opened); `code` is the close
        /// code Discord sent, nil when there was none (a dropped socket).
        case closed(ConnectionID, code: Int?)
        /// The delay asked for by `.reconnect(after:)` has passed.
        case reconnectDue
        /// Shut down: close the connection and go offline.
        case stop
        /// Shut down leaving the session to another process (the replica taking the gateway
        /// over, or the next start): close with a code that keeps it resumable.
        case handOver
    }

    public enum Action: Sendable, Hashable {
        /// Open a websocket to `url` for connection `id`; report frames, then `.closed`.
        case connect(ConnectionID, url: String)
        /// Send this command's frame (`GatewayCommand.frame(token:)`) on the connection, now.
        case send(GatewayCommand, on: ConnectionID)
        /// Report `.heartbeatDue(id)` after this long.
        case scheduleHeartbeat(ConnectionID, after: Duration)
        /// Report `.handshakeTimedOut(id)` after this long (harmless once ready).
        case scheduleHandshakeTimeout(ConnectionID, after: Duration)
        /// Close the connection with this code, without waiting for it to finish.
        case close(ConnectionID, code: Int)
        /// Report `.reconnectDue` after this long.
        case reconnect(after: Duration)
        /// Hand this event to the relay (READY and RESUMED too).
        case deliver(GatewayDispatch)
        /// Stop for good and tell the operator `reason`; nothing further will be asked.
        case stop(GatewayStopReason)
    }

    /// What a resumed connection continues.
    public struct Session: Sendable, Hashable {
        public var sessionID: String
        /// READY's `resume_gateway_url`, or the gateway URL when READY gave no usable one.
        public var resumeURL: String

        public init(sessionID: String, resumeURL: String) {
            self.sessionID = sessionID
            self.resumeURL = resumeURL
        }
    }

    /// The close code this machine closes with when it wants to resume (any code but 1000 and
    /// 1001 keeps the session).
    public static let resumeCloseCode = 4000
    /// The close code of `stop`, which ends the session.
    public static let stopCloseCode = 1000

    /// Where the lifecycle is.
    public private(set) var state: State = .idle
    /// The session a new connection resumes, if any.
    public private(set) var session: Session?
    /// The last sequence number received (heartbeats and RESUME carry it).
    public private(set) var sequence: Int?
    /// The delays for the next reconnections.
    public private(set) var backoff: Backoff
    /// How many IDENTIFYs this machine has sent (each counts against the token's daily limit).
    public private(set) var identifyCount = 0

    /// What IDENTIFY says (intents, shard).
    public let identify: GatewayIdentify
    /// How long a connection may take from opening to READY or RESUMED.
    public let handshakeTimeout: Duration
    /// The least time between two IDENTIFYs; Discord allows one per 5 s per shard bucket.
    public let identifySpacing: Duration

    private var gatewayURL = ""
    private var heartbeatInterval: Duration = GatewayMessage.defaultHeartbeatInterval
    private var awaitingACK = false
    private var acksWhileReady = 0
    private var nextID: ConnectionID = 1
    private let unitRandom: @Sendable () -> Double

    /// A machine in `.idle`.
    ///
    /// - Parameters:
    ///   - unitRandom: a number in `0...1`, for the first heartbeat's jitter, each backoff's
    ///     jitter and op 9's 1–5 s; tests pass a constant.
    public init(
        identify: GatewayIdentify = GatewayIdentify(), backoff: Backoff = Backoff(initial: .seconds(1), maximum: .seconds(60)),
        handshakeTimeout: Duration = .seconds(30), identifySpacing: Duration = .seconds(5),
        unitRandom: @escaping @Sendable () -> Double = { Double.random(in: 0...1) }
    ) {
        self.identify = identify
        self.backoff = backoff
        self.handshakeTimeout = handshakeTimeout
        self.identifySpacing = identifySpacing
        self.unitRandom = unitRandom
    }

    /// What a connection opened now would resume, for another process to continue; nil when
    /// it would IDENTIFY.
    public var resumeState: GatewayResumeState? {
        guard let session, let sequence else { return nil }
        return GatewayResumeState(sessionID: session.sessionID, sequence: sequence, resumeURL: session.resumeURL)
    }

    /// Before `.start`, continues a session another process saved: the first connection
    /// RESUMEs it. Ignored once started.
    public mutating func restore(_ saved: GatewayResumeState) {
        guard state == .idle else { return }
        session = Session(sessionID: saved.sessionID, resumeURL: saved.resumeURL)
        sequence = saved.sequence
    }

    /// The connection events flow on (handshaking or ready), if any.
    public var currentConnection: ConnectionID? {
        switch state {
        case .connecting(let id), .handshaking(let id), .ready(let id): id
        default: nil
        }
    }

    /// Advances on `event` and returns what to do, in order.
    public mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .start(let url):
            guard state == .idle else { return [] }
            gatewayURL = url
            return connect()

        case .received(let message, let id):
            return receive(message, on: id)

        case .heartbeatDue(let id):
            guard handshakingOrReady(id) else { return [] }
            if awaitingACK {
                // No ACK for a whole interval: the socket looks open but nothing comes back.
                return closeAndReconnect(id)
            }
            awaitingACK = true
            return [.send(.heartbeat(sequence: sequence), on: id), .scheduleHeartbeat(id, after: heartbeatInterval)]

        case .handshakeTimedOut(let id):
            switch state {
            case .connecting(id), .handshaking(id): return closeAndReconnect(id)
            default: return []
            }

        case .closed(let id, let code):
            // Connections this machine closed were already replaced (or it stopped).
            guard currentConnection == id else { return [] }
            if let code, let reason = GatewayStopReason(closeCode: code) {
                state = .stopped(reason)
                forgetSession()
                return [.stop(reason)]
            }
            if let code, Self.sessionEndingCloseCodes.contains(code) { forgetSession() }
            return waitToReconnect(atLeast: .zero)

        case .reconnectDue:
            guard state == .waitingToReconnect else { return [] }
            return connect()

        case .stop, .handOver:
            switch state {
            case .stopped: return []
            default:
                let current = currentConnection
                state = .stopped(nil)
                let code = event == .handOver ? Self.resumeCloseCode : Self.stopCloseCode
                // 1000 ends the session on Discord's side: nothing is left to resume.
                if event == .stop { forgetSession() }
                return current.map { [.close($0, code: code)] } ?? []
            }
        }
    }

    /// Close codes after which the session cannot be resumed: 4007 invalid sequence, 4009
    /// session timed out.
    static let sessionEndingCloseCodes: Set<Int> = [4007, 4009]

    private mutating func receive(_ message: GatewayMessage, on id: ConnectionID) -> [Action] {
        switch message {
        case .hello(let interval):
            guard state == .connecting(id) else { return [] }
            state = .handshaking(id)
            heartbeatInterval = interval
            awaitingACK = false
            acksWhileReady = 0
            let jitter = unitRandom()
            let first = interval * (jitter.isFinite ? min(1, max(0, jitter)) : 1)
            let command: GatewayCommand
            if let session, let sequence {
                command = .resume(sessionID: session.sessionID, sequence: sequence)
            } else {
                identifyCount += 1
                command = .identify(identify)
            }
            return [.send(command, on: id), .scheduleHeartbeat(id, after: first)]

        case .heartbeatACK:
            guard handshakingOrReady(id) else { return [] }
            awaitingACK = false
            if case .ready = state {
                acksWhileReady += 1
                // Ready and answering for a whole interval: the next drop starts the backoff over.
                if acksWhileReady == 2 { backoff.reset() }
            }
            return []

        case .heartbeatRequest:
            guard handshakingOrReady(id) else { return [] }
            awaitingACK = true
            return [.send(.heartbeat(sequence: sequence), on: id)]

        case .reconnect:
            guard currentConnection == id else { return [] }
            return closeAndReconnect(id)

        case .invalidSession(let resumable):
            guard currentConnection == id else { return [] }
            if resumable, session != nil { return closeAndReconnect(id) }
            forgetSession()
            // Discord asks for a random 1–5 s before identifying again.
            let random = unitRandom()
            let wait = Duration.seconds(1) + .seconds(4) * (random.isFinite ? min(1, max(0, random)) : 1)
            return closeAndReconnect(id, atLeast: wait)

        case .dispatch(let dispatch):
            // Frames of a connection being replaced are replayed after the resume anyway.
            guard handshakingOrReady(id) else { return [] }
            if let number = dispatch.sequence { sequence = number }
            if let ready = dispatch.ready {
                session = Session(sessionID: ready.sessionID, resumeURL: ready.resumeGatewayURL ?? gatewayURL)
                state = .ready(id)
            } else if dispatch.name == "READY" {
                // A READY without a session id: events flow, but a drop must IDENTIFY again.
                session = nil
                state = .ready(id)
            } else if dispatch.name == "RESUMED" {
                state = .ready(id)
            }
            return [.deliver(dispatch)]

        case .other:
            return []
        }
    }

    private func handshakingOrReady(_ id: ConnectionID) -> Bool {
        switch state {
        case .handshaking(id), .ready(id): true
        default: false
        }
    }

    private mutating func connect() -> [Action] {
        let id = nextID
        nextID += 1
        state = .connecting(id)
        let base = session?.resumeURL ?? gatewayURL
        return [.connect(id, url: Self.connectionURL(base)), .scheduleHandshakeTimeout(id, after: handshakeTimeout)]
    }

    private mutating func closeAndReconnect(_ id: ConnectionID, atLeast minimum: Duration = .zero) -> [Action] {
        [.close(id, code: Self.resumeCloseCode)] + waitToReconnect(atLeast: minimum)
    }

    private mutating func waitToReconnect(atLeast minimum: Duration) -> [Action] {
        state = .waitingToReconnect
        var delay = max(minimum, backoff.next(unitRandom: unitRandom()))
        // The next connection will IDENTIFY again: keep IDENTIFYs apart.
        if session == nil || sequence == nil, identifyCount > 0 { delay = max(delay, identifySpacing) }
        return [.reconnect(after: delay)]
    }

    private mutating func forgetSession() {
        session = nil
        sequence = nil
    }

    /// `base` with the API version and encoding this adapter speaks, unless it already has a query.
    public static func connectionURL(_ base: String) -> String {
        guard !base.contains("?") else { return base }
        return (base.hasSuffix("/") ? base : base + "/") + "?v=10&encoding=json"
    }
}

/// Why Discord closed the gateway in a way reconnecting cannot fix; the operator must act.
public enum GatewayStopReason: Int, Sendable, Hashable, CustomStringConvertible {
    case authenticationFailed = 4004
    case invalidShard = 4010
    case shardingRequired = 4011
    case invalidAPIVersion = 4012
    case invalidIntents = 4013
    case disallowedIntents = 4014

    /// The reason for a fatal close code; nil for codes a reconnection may fix.
    public init?(closeCode: Int) {
        self.init(rawValue: closeCode)
    }

    /// The close code Discord sent.
    public var closeCode: Int { rawValue }

    /// What happened and what to do; never holds the token.
    public var description: String {
        switch self {
        case .authenticationFailed: "Discord rejected the bot token (4004): set DISCORD_BOT_TOKEN to the Bot token from the Developer Portal"
        case .invalidShard: "Discord rejected the shard (4010): check the shard id and count"
        case .shardingRequired: "Discord requires sharding for this bot (4011): it is in too many servers for one connection"
        case .invalidAPIVersion: "Discord rejected the gateway API version (4012)"
        case .invalidIntents: "Discord rejected the intents (4013)"
        case .disallowedIntents:
            "Discord refused a privileged intent (4014): enable Message Content Intent (Developer Portal › Bot), or run without it"
        }
    }
}
