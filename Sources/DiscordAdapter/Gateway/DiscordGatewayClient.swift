public import Logging
import NIOWebSocket
public import RelayCore
import RelayHTTP
import RelayPipeline
public import RelayPlatform
import Synchronization
import WSClient

import struct Foundation.Date

/// Holds the Discord gateway connection: carries out `GatewayStateMachine`'s actions with
/// WSClient, and hands each dispatch to `handler`.
///
/// Asks `GET /gateway/bot` (at `DISCORD_API_URL`) where to connect and how many IDENTIFYs the
/// token has left: with none left it waits for the window's reset instead of spending one it
/// does not have (a token that passes 1000 a day is reset by Discord). Heartbeats, the handshake
/// timeout and reconnections are timers on the injected clock; frames and closes of every
/// connection come back as the machine's events, so resume after a drop, re-identify after an
/// invalid session and backoff are the machine's (tested without sockets). The token is added
/// to IDENTIFY and RESUME only as the frame is written; it never reaches a log.
///
/// Given a session saved by an earlier holder of the gateway (`resuming`), it RESUMEs that
/// instead of IDENTIFYing. It hands where the session is to `saveResume`: at once after READY
/// and RESUMED, on a new sequence number at most once per `resumeSaveInterval` (checked as
/// events arrive, so at the latest with the next heartbeat's ACK), and once more when it stops
/// — nil when the session ended. Saves run off the event loop: a slow store never delays a
/// heartbeat.
public final class DiscordGatewayClient: Sendable {
    /// Receives each dispatch (READY, MESSAGE_CREATE…) with the bot's user id once known.
    public typealias Handler = @Sendable (GatewayDispatch, _ botUserID: String?) async -> Void
    /// Keeps where the session is, for whoever holds the gateway next; nil: nothing to resume.
    public typealias ResumeSaver = @Sendable (GatewayResumeState?) async -> Void

    /// Timings and limits; the defaults suit Discord.
    public struct Configuration: Sendable, Hashable {
        public var identify: GatewayIdentify
        public var backoff: Backoff
        public var handshakeTimeout: Duration
        public var identifySpacing: Duration
        /// Seconds to wait for the server's close frame after sending ours.
        public var closeTimeout: Duration
        /// Largest frame accepted (a READY of a big bot is large).
        public var maxMessageBytes: Int
        /// The least time between two saves of a new sequence number: a busy bot's every event
        /// is not a store write, and a successor replays at most this much again.
        public var resumeSaveInterval: Duration

        public init(
            identify: GatewayIdentify = GatewayIdentify(), backoff: Backoff = Backoff(initial: .seconds(1), maximum: .seconds(60)),
            handshakeTimeout: Duration = .seconds(30), identifySpacing: Duration = .seconds(5), closeTimeout: Duration = .seconds(2),
            maxMessageBytes: Int = 8 * 1024 * 1024, resumeSaveInterval: Duration = .seconds(5)
        ) {
            self.identify = identify
            self.backoff = backoff
            self.handshakeTimeout = handshakeTimeout
            self.identifySpacing = identifySpacing
            self.closeTimeout = closeTimeout
            self.maxMessageBytes = maxMessageBytes
            self.resumeSaveInterval = resumeSaveInterval
        }
    }

    let token: DiscordToken
    let api: any DiscordREST
    public let configuration: Configuration
    let clock: any RelayClock
    /// Told when Discord refuses the bot token (close code 4004, a 401 from `GET /gateway/bot`)
    /// and when a READY shows it takes it.
    let credentials: CredentialReporter
    let logger: Logger
    let handler: Handler
    let unitRandom: @Sendable () -> Double
    let resuming: GatewayResumeState?
    let saveResume: ResumeSaver?
    private let shared = Mutex(Shared())

    struct Shared {
        var input: AsyncStream<Input>.Continuation?
        var running = false
        var stopRequested = false
        /// Stopping hands the session over rather than ending it.
        var keepSession = false
        var state: GatewayStateMachine.State = .idle
        var botUserID: String?
    }

    /// What the run loop reacts to: the machine's events, and the client's own.
    enum Input: Sendable {
        case machine(GatewayStateMachine.Event)
        /// IDENTIFYs left, from a fresh `GET /gateway/bot`.
        case budget(remaining: Int, resetAt: Date)
        /// The close frame of `stop` was not answered in time.
        case closeTimedOut
    }

    enum Outgoing: Sendable {
        case text(String)
        case close(code: Int)
    }

    public init(
        token: DiscordToken, api: any DiscordREST, configuration: Configuration = Configuration(), clock: any RelayClock = SystemClock(),
        unitRandom: @escaping @Sendable () -> Double = { Double.random(in: 0...1) }, resuming: GatewayResumeState? = nil,
        saveResume: ResumeSaver? = nil, credentials: CredentialReporter? = nil, logger: Logger, handler: @escaping Handler
    ) {
        self.token = token
        self.api = api
        self.configuration = configuration
        self.clock = clock
        self.unitRandom = unitRandom
        self.resuming = resuming
        self.saveResume = saveResume
        var logger = logger
        logger[metadataKey: "platform"] = "discord"
        self.logger = logger
        self.credentials = credentials ?? .detached(platform: "discord", clock: clock, logger: logger)
        self.handler = handler
    }

    /// Where the connection's lifecycle is.
    public var state: GatewayStateMachine.State { shared.withLock { $0.state } }

    /// Asks `run()` to close the connection and return: ending the session (the bot goes
    /// offline at once), or with `keepingSession` leaving it for the process that holds the
    /// gateway next to resume.
    public func stop(keepingSession: Bool = false) {
        let input = shared.withLock { shared in
            if !shared.stopRequested { shared.keepSession = keepingSession }
            shared.stopRequested = true
            return shared.input
        }
        input?.yield(.machine(keepingSession ? .handOver : .stop))
    }

    /// Connects and stays connected until `stop()`, the task's cancellation, or a close code
    /// reconnecting cannot fix (logged at error level with what to do).
    public func run() async throws {
        let (events, input) = AsyncStream.makeStream(of: Input.self)
        let start = shared.withLock { shared -> Bool in
            guard !shared.running, !shared.stopRequested else { return false }
            shared.running = true
            shared.input = input
            return true
        }
        guard start else { return }
        defer {
            input.finish()
            shared.withLock {
                $0.running = false
                $0.input = nil
            }
        }
        guard let info = await discover() else { return }
        var machine = GatewayStateMachine(
            identify: configuration.identify, backoff: configuration.backoff, handshakeTimeout: configuration.handshakeTimeout,
            identifySpacing: configuration.identifySpacing, unitRandom: unitRandom)
        if let resuming {
            machine.restore(resuming)
            // A resumed session gets no READY, which is where the bot's id comes from.
            if let user = resuming.botUserID { shared.withLock { $0.botUserID = user } }
        }
        var budget = (remaining: info.remaining, resetAt: clock.now + info.resetAfter)
        // A RESUME spends none of the IDENTIFYs.
        if budget.remaining <= 0, machine.session == nil {
            logger.warning("Discord gateway: no IDENTIFY left today; waiting for the limit to reset", metadata: ["discord.wait": "\(info.resetAfter)"])
            guard await sleepUnlessStopped(info.resetAfter) else { return }
        }

        var outboxes: [GatewayStateMachine.ConnectionID: AsyncStream<Outgoing>.Continuation] = [:]
        var closing: GatewayStateMachine.ConnectionID?
        var saving = ResumeSaving(saved: resuming, at: clock.now)
        let (saves, saveInput) = AsyncStream.makeStream(of: GatewayResumeState?.self, bufferingPolicy: .bufferingNewest(1))
        input.yield(.machine(.start(gatewayURL: info.url)))
        if shared.withLock({ $0.stopRequested }) { input.yield(.machine(shared.withLock { $0.keepSession } ? .handOver : .stop)) }
        logger.info("Discord gateway starting", metadata: ["discord.resuming": "\(resuming != nil)"])

        await withDiscardingTaskGroup { deliveries in
            await withDiscardingTaskGroup { io in
                if let saveResume {
                    // One save at a time, in order; a newer state waiting replaces an older one.
                    io.addTask {
                        for await state in saves { await saveResume(state) }
                    }
                }
                loop: for await item in events {
                    let event: GatewayStateMachine.Event
                    switch item {
                    case .budget(let remaining, let resetAt):
                        budget = (remaining, resetAt)
                        continue
                    case .closeTimedOut:
                        break loop
                    case .machine(let machineEvent):
                        event = machineEvent
                    }
                    let identifies = machine.identifyCount
                    let actions = machine.handle(event)
                    if machine.identifyCount > identifies { budget.remaining -= 1 }
                    let state = machine.state
                    shared.withLock { $0.state = state }
                    note(event)
                    let stopping = if case .stopped = state { true } else { false }
                    for action in actions {
                        switch action {
                        case .close(let id, let code) where stopping:
                            closing = id
                            outboxes[id]?.yield(.close(code: code))
                            let (clock, wait) = (clock, configuration.closeTimeout)
                            io.addTask {
                                try? await clock.sleep(for: wait)
                                input.yield(.closeTimedOut)
                            }
                        case .reconnect(let delay) where machine.session == nil && budget.remaining <= 0:
                            // The next connection IDENTIFYs: wait for the daily window, then ask again.
                            let resetAt = budget.resetAt
                            io.addTask { await self.waitForBudget(after: delay, until: resetAt, input: input) }
                        default:
                            perform(action, input: input, io: &io, deliveries: &deliveries, outboxes: &outboxes)
                        }
                    }
                    // After the actions: READY's delivery is what records the bot's user id.
                    if saveResume != nil,
                        let due = saving.due(resumeState(of: machine), after: event, now: clock.now, interval: configuration.resumeSaveInterval)
                    {
                        saveInput.yield(due)
                    }
                    if case .closed(let id, _) = event {
                        outboxes.removeValue(forKey: id)?.finish()
                        if id == closing { break loop }
                    }
                    if case .stopped = machine.state, closing == nil { break loop }
                }
                saveInput.finish()
                io.cancelAll()
            }
        }
        for outbox in outboxes.values { outbox.finish() }
        // Last, after any save still under way (a cancelled one may not have been written):
        // where the session ended up, or nil when it ended with this process.
        if let saveResume { await saveResume(resumeState(of: machine)) }
        logger.info("Discord gateway stopped")
    }

    /// The machine's session with the bot's user id: whoever resumes it hears no READY, and
    /// without the id it could not tell which messages mention the bot.
    private func resumeState(of machine: GatewayStateMachine) -> GatewayResumeState? {
        guard var state = machine.resumeState else { return nil }
        state.botUserID = shared.withLock { $0.botUserID }
        return state
    }

    /// `GET /gateway/bot`, tried again with backoff until it answers; nil when stopped first.
    private func discover() async -> DiscordGatewayInfo? {
        var backoff = configuration.backoff
        while !shared.withLock({ $0.stopRequested }) {
            do throws(DiscordAPIError) {
                return try await api.gatewayBot()
            } catch {
                if case .cancelled = error { return nil }
                let wait: Duration
                if case .rateLimited(_, let retryAfter) = error { wait = retryAfter } else { wait = backoff.next(unitRandom: unitRandom()) }
                if error.refusesCredentials {
                    credentials.refused("DISCORD_BOT_TOKEN", reason: error.reason)
                } else {
                    let level: Logger.Level = error.deliveryOutcome == .rejected(reason: error.reason) ? .error : .warning
                    logger.log(level: level, "Discord gateway: GET /gateway/bot failed", metadata: ["discord.error": "\(error.reason)"])
                }
                guard await sleepUnlessStopped(wait) else { return nil }
            }
        }
        return nil
    }

    /// Waits `duration` on the clock, in slices, so that `stop()` is not kept waiting by a long
    /// wait before the first connection; false when stopped or cancelled first.
    private func sleepUnlessStopped(_ duration: Duration) async -> Bool {
        let end = clock.now + duration
        // Bounded: every pass sleeps until the end or for a slice of at most 200 ms.
        while clock.now < end {
            if shared.withLock({ $0.stopRequested }) { return false }
            do { try await clock.sleep(until: min(end, clock.now + .milliseconds(200))) } catch { return false }
        }
        return !shared.withLock { $0.stopRequested }
    }

    private func waitForBudget(after delay: Duration, until resetAt: Date, input: AsyncStream<Input>.Continuation) async {
        logger.warning("Discord gateway: no IDENTIFY left today; waiting for the limit to reset")
        do { try await clock.sleep(until: max(resetAt, clock.now + delay)) } catch { return }
        if let info = try? await api.gatewayBot() {
            input.yield(.budget(remaining: info.remaining, resetAt: clock.now + info.resetAfter))
        }
        input.yield(.machine(.reconnectDue))
    }

    /// Carries out one action; everything slow runs in a child task that reports back.
    private func perform(
        _ action: GatewayStateMachine.Action, input: AsyncStream<Input>.Continuation, io: inout DiscardingTaskGroup,
        deliveries: inout DiscardingTaskGroup, outboxes: inout [GatewayStateMachine.ConnectionID: AsyncStream<Outgoing>.Continuation]
    ) {
        let clock = clock
        switch action {
        case .connect(let id, let url):
            let (outgoing, outbox) = AsyncStream.makeStream(of: Outgoing.self)
            outboxes[id] = outbox
            io.addTask { await self.runConnection(id, url: url, outgoing: outgoing, input: input) }
        case .send(let command, let id):
            let text = String(decoding: command.frame(token: token).encoded(), as: UTF8.self)
            outboxes[id]?.yield(.text(text))
        case .scheduleHeartbeat(let id, let delay):
            io.addTask {
                do { try await clock.sleep(for: delay) } catch { return }
                input.yield(.machine(.heartbeatDue(id)))
            }
        case .scheduleHandshakeTimeout(let id, let delay):
            io.addTask {
                do { try await clock.sleep(for: delay) } catch { return }
                input.yield(.machine(.handshakeTimedOut(id)))
            }
        case .close(let id, let code):
            outboxes[id]?.yield(.close(code: code))
        case .reconnect(let delay):
            logger.notice("Discord gateway reconnecting after a delay", metadata: ["discord.delay": "\(delay)"])
            io.addTask {
                do { try await clock.sleep(for: delay) } catch { return }
                input.yield(.machine(.reconnectDue))
            }
        case .deliver(let dispatch):
            if let ready = dispatch.ready {
                credentials.accepted("DISCORD_BOT_TOKEN")
                if let user = ready.userID { shared.withLock { $0.botUserID = user } }
            }
            let botUserID = shared.withLock { $0.botUserID }
            let handler = handler
            deliveries.addTask { await handler(dispatch, botUserID) }
        case .stop(let reason):
            // Discord asks not to reconnect after these codes: the gateway stays stopped, and a
            // refused token is in /readyz until the relay restarts with another.
            if reason == .authenticationFailed { credentials.refused("DISCORD_BOT_TOKEN", reason: "\(reason)") }
            logger.error("Discord gateway stopped for good", metadata: ["discord.reason": "\(reason)"])
        }
    }

    /// Holds one websocket until it closes, then reports `.closed` with Discord's close code.
    private func runConnection(
        _ id: GatewayStateMachine.ConnectionID, url: String, outgoing: AsyncStream<Outgoing>, input: AsyncStream<Input>.Continuation
    ) async {
        var logger = self.logger
        logger[metadataKey: "discord.connection"] = "\(id)"
        let webSocket = WebSocketClientConfiguration(
            maxFrameSize: configuration.maxMessageBytes, closeTimeout: configuration.closeTimeout, autoPing: .disabled, validateUTF8: true)
        let (maxBytes, closeTimeout, frameLogger) = (configuration.maxMessageBytes, configuration.closeTimeout, logger)
        var code: Int?
        do {
            let frame = try await WebSocketClient.connect(url: url, configuration: webSocket, logger: logger) { inbound, outbound, _ in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for try await message in inbound.messages(maxSize: maxBytes) {
                            guard case .text(let text) = message else { continue }
                            do throws(PayloadProblem) {
                                input.yield(.machine(.received(try GatewayMessage.read(Array(text.utf8)), on: id)))
                            } catch {
                                PayloadDecoding.dropped(error, platform: DiscordPlatform.name, logger: frameLogger)
                            }
                        }
                    }
                    group.addTask {
                        for await item in outgoing {
                            switch item {
                            case .text(let text):
                                try await outbound.write(.text(text))
                            case .close(let code):
                                try await outbound.close(WebSocketErrorCode(codeNumber: code), reason: nil)
                                try await Task.sleep(for: closeTimeout)
                                return
                            }
                        }
                    }
                    _ = try await group.next()
                    group.cancelAll()
                }
            }
            code = frame.map { Int(UInt16(webSocketErrorCode: $0.closeCode)) }
            logger.debug("Discord gateway websocket ended", metadata: ["discord.close": "\(code.map(String.init) ?? "none")"])
        } catch {
            // Fixed words only: an error's own text could quote the URL.
            let reason = (error as? WebSocketClientError).map { "\($0)" } ?? ConnectionFailure.reason(error)
            logger.info("Discord gateway websocket failed", metadata: ["discord.error": "\(reason)"])
        }
        input.yield(.machine(.closed(id, code: code)))
    }

    private func note(_ event: GatewayStateMachine.Event) {
        switch event {
        case .received(.dispatch(let dispatch), let id) where dispatch.name == "READY" || dispatch.name == "RESUMED":
            logger.info("Discord gateway \(dispatch.name == "READY" ? "ready" : "resumed")", metadata: ["discord.connection": "\(id)"])
        case .received(.invalidSession(let resumable), let id):
            logger.notice("Discord gateway: invalid session", metadata: ["discord.connection": "\(id)", "discord.resumable": "\(resumable)"])
        case .received(.reconnect, let id):
            logger.info("Discord asked the gateway to reconnect", metadata: ["discord.connection": "\(id)"])
        case .closed(let id, let code):
            logger.info("Discord gateway connection closed", metadata: ["discord.connection": "\(id)", "discord.close": "\(code.map(String.init) ?? "none")"])
        default:
            break
        }
    }
}

/// When the client hands the session's state to its saver.
struct ResumeSaving: Sendable {
    /// What was last handed over (or resumed from).
    private var saved: GatewayResumeState?
    private var at: Date

    init(saved: GatewayResumeState?, at: Date) {
        self.saved = saved
        self.at = at
    }

    /// `current`, when it is to be saved now: at once when the session began, resumed or ended
    /// (a successor must not resume a session that is gone), and a newer sequence number once
    /// `interval` has passed since the last save. Nil when nothing is to be saved.
    mutating func due(_ current: GatewayResumeState?, after event: GatewayStateMachine.Event, now: Date, interval: Duration) -> GatewayResumeState?? {
        guard current != saved else { return nil }
        var atOnce = current?.sessionID != saved?.sessionID
        if case .received(.dispatch(let dispatch), _) = event, dispatch.name == "READY" || dispatch.name == "RESUMED" { atOnce = true }
        guard atOnce || now >= at + interval else { return nil }
        saved = current
        at = now
        return .some(current)
    }
}
