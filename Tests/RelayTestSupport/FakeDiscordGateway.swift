import Hummingbird
import HummingbirdWebSocket
public import Logging
import NIOCore
public import RelayCore
import Synchronization

/// A fake Discord gateway: a real websocket server on 127.0.0.1.
///
/// Each connection is greeted with HELLO; IDENTIFY is answered with READY (a new session, with
/// this server as `resume_gateway_url` and `FakeDiscordAPI.botUserID` as the bot), RESUME of a
/// known session with the events dispatched since its sequence number and then RESUMED, a
/// heartbeat with its ACK. A test dispatches events (`dispatch`), which are kept, numbered, and
/// sent on the open connection — or only kept while none is, to be replayed on RESUME — and can
/// drop a connection (`closeAbruptly`) or invalidate the session (`invalidateSession`). What the
/// client sent is filed by kind (`identify`, `resume`, `heartbeat`) for `next(_:)`.
public final class FakeDiscordGateway: Sendable {
    public static let identify = "identify"
    public static let resume = "resume"
    public static let heartbeat = "heartbeat"
    public static let connected = "connected"

    public let port: Int
    /// `ws://127.0.0.1:<port>`, what `GET /gateway/bot` answers.
    public let url: String
    let state: FakeDiscordLocked<FakeDiscordGatewayState>
    let log: RequestLog<JSONValue>
    private let serverTask: Task<Void, any Error>

    private init(port: Int, state: FakeDiscordLocked<FakeDiscordGatewayState>, log: RequestLog<JSONValue>, serverTask: Task<Void, any Error>) {
        self.port = port
        self.url = "ws://127.0.0.1:\(port)"
        self.state = state
        self.log = log
        self.serverTask = serverTask
    }

    /// Starts a fake; `heartbeatInterval` (milliseconds) is what HELLO says.
    public static func start(heartbeatInterval: Int = 45_000, logger: Logger? = nil) async throws -> FakeDiscordGateway {
        let state = FakeDiscordLocked(FakeDiscordGatewayState())
        let log = RequestLog<JSONValue>()
        let router = Router(context: FakeDiscordGatewayContext.self)
        let baseURL = FakeDiscordLocked("")
        router.ws(
            "",
            onUpgrade: { inbound, outbound, context in
                let id = state.withLock { $0.open(outbound: outbound, channel: context.requestContext.channel) }
                log.append(["connection": .int(id)], key: connected)
                try await outbound.write(.text(Self.text(["op": 10, "d": ["heartbeat_interval": .int(heartbeatInterval)], "s": nil, "t": nil])))
                do {
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        guard case .text(let text) = message, let frame = JSONValue.parse(Array(text.utf8)), let op = frame["op"]?.intValue else { continue }
                        switch op {
                        case 1:
                            log.append(frame, key: heartbeat)
                            try await outbound.write(.text(Self.text(["op": 11, "d": nil, "s": nil, "t": nil])))
                        case 2:
                            let ready = state.withLock { $0.identify(on: id, resumeURL: baseURL.withLock { $0 }) }
                            try await outbound.write(.text(Self.text(ready)))
                            // Filed after READY went out, so a test's next dispatch follows it.
                            log.append(frame, key: identify)
                        case 6:
                            let frames = state.withLock {
                                $0.resume(session: frame["d"]?["session_id"]?.stringValue ?? "", after: frame["d"]?["seq"]?.intValue ?? 0, on: id)
                            }
                            for reply in frames { try await outbound.write(.text(Self.text(reply))) }
                            log.append(frame, key: resume)
                        default:
                            continue
                        }
                    }
                } catch {
                    // A dropped connection ends the stream with an error.
                }
                state.withLock { $0.closed(id) }
            })
        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: Router(),
            server: .http1WebSocketUpgrade(webSocketRouter: router, configuration: .init(ws: .init(maxFrameSize: 1 << 20, autoPing: .disabled))),
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: nil),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            },
            logger: logger ?? Logger(label: "FakeDiscordGateway", factory: { _ in SwiftLogNoOpLogHandler() }))
        let serverTask = Task {
            defer { portContinuation.finish() }
            try await app.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            serverTask.cancel()
            throw FakeServerError.didNotStart(reason: "the gateway stopped before it was listening")
        }
        baseURL.withLock { $0 = "ws://127.0.0.1:\(port)" }
        return FakeDiscordGateway(port: port, state: state, log: log, serverTask: serverTask)
    }

    public func stop() async {
        serverTask.cancel()
        _ = await serverTask.result
    }

    /// Sends (or, with no connection ready, keeps for a RESUME) an event with the next sequence number.
    public func dispatch(_ name: String, _ data: JSONValue) async throws {
        let (frame, target) = state.withLock { $0.dispatch(name, data) }
        if let target { try await target.write(.text(Self.text(frame))) }
    }

    /// Sends `text` as it is, as a text frame on the newest connection (not a gateway frame, or
    /// one whose data does not decode); no sequence number is spent.
    public func send(rawText text: String) async throws {
        guard let target = state.withLock({ $0.newest?.outbound }) else { return }
        try await target.write(.text(text))
    }

    /// Closes the newest connection's TCP socket without a close frame, like a dropped network;
    /// the session stays resumable.
    public func closeAbruptly() async throws {
        guard let channel = state.withLock({ $0.newest?.channel }) else { return }
        state.withLock { $0.markNewestClosing() }
        try await channel.close()
    }

    /// Sends op 9 with `d: resumable` on the newest connection; without `resumable` the session is
    /// forgotten, so only a new IDENTIFY works.
    public func invalidateSession(resumable: Bool) async throws {
        guard
            let target = state.withLock({ state -> WebSocketOutboundWriter? in
                if !resumable { state.sessions.removeAll() }
                return state.newest?.outbound
            })
        else { return }
        try await target.write(.text(Self.text(["op": 9, "d": .bool(resumable), "s": nil, "t": nil])))
    }

    /// The next frame the client sent of `kind` (`identify`, `resume`, `heartbeat`), or the next
    /// connection (`connected`); nil after a safety limit.
    public func next(_ kind: String) async -> JSONValue? {
        await log.next(kind)
    }

    /// Frames of `kind` received so far.
    public func received(_ kind: String) -> [JSONValue] {
        log.records(kind)
    }

    static func text(_ value: JSONValue) -> String {
        String(decoding: value.encoded(), as: UTF8.self)
    }
}

/// What the fake gateway keeps.
struct FakeDiscordGatewayState: Sendable {
    struct Connection: Sendable {
        var id: Int
        var outbound: WebSocketOutboundWriter
        var channel: any Channel
        /// READY or RESUMED sent: events go out on it.
        var live = false
        var open = true
    }

    var connections: [Connection] = []
    /// Every dispatch, by sequence number (from 1), for replays.
    var events: [JSONValue] = []
    var sessions: Set<String> = []
    var sessionCount = 0

    var newest: Connection? { connections.last { $0.open } }

    mutating func open(outbound: WebSocketOutboundWriter, channel: any Channel) -> Int {
        let id = connections.count + 1
        connections.append(Connection(id: id, outbound: outbound, channel: channel))
        return id
    }

    mutating func closed(_ id: Int) {
        if let index = connections.firstIndex(where: { $0.id == id }) {
            connections[index].open = false
            connections[index].live = false
        }
    }

    mutating func markNewestClosing() {
        if let index = connections.lastIndex(where: { $0.open }) { connections[index].live = false }
    }

    /// READY for a new session.
    mutating func identify(on id: Int, resumeURL: String) -> JSONValue {
        sessionCount += 1
        let session = "fake-session-\(sessionCount)"
        sessions.insert(session)
        setLive(id)
        events.append(.null)
        return [
            "op": 0, "t": "READY", "s": .int(events.count),
            "d": [
                "v": 10, "session_id": .string(session), "resume_gateway_url": .string(resumeURL),
                "user": ["id": .string(FakeDiscordAPI.botUserID), "bot": true],
            ],
        ]
    }

    /// The events after `sequence`, then RESUMED; or op 9 when the session is unknown.
    mutating func resume(session: String, after sequence: Int, on id: Int) -> [JSONValue] {
        guard sessions.contains(session) else { return [["op": 9, "d": false, "s": nil, "t": nil]] }
        var frames: [JSONValue] = []
        for index in max(0, sequence)..<events.count where events[index] != .null {
            frames.append(events[index])
        }
        events.append(.null)
        frames.append(["op": 0, "t": "RESUMED", "s": .int(events.count), "d": [:]])
        setLive(id)
        return frames
    }

    mutating func dispatch(_ name: String, _ data: JSONValue) -> (JSONValue, WebSocketOutboundWriter?) {
        let frame: JSONValue = ["op": 0, "t": .string(name), "s": .int(events.count + 1), "d": data]
        events.append(frame)
        return (frame, connections.last { $0.open && $0.live }?.outbound)
    }

    private mutating func setLive(_ id: Int) {
        if let index = connections.firstIndex(where: { $0.id == id }) { connections[index].live = true }
    }
}

/// The websocket router's context; keeps the channel so a test can cut a connection.
struct FakeDiscordGatewayContext: RequestContext, WebSocketRequestContext {
    var coreContext: CoreRequestContextStorage
    let webSocket: WebSocketHandlerReference<FakeDiscordGatewayContext>
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.webSocket = .init()
        self.channel = source.channel
    }
}
