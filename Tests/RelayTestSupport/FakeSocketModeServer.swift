import Hummingbird
import HummingbirdWebSocket
public import Logging
import NIOCore
public import RelayCore
import Synchronization

/// A fake Slack Socket Mode endpoint: a real websocket server on 127.0.0.1.
///
/// ```swift
/// let socketMode = try await FakeSocketModeServer.start()
/// let slack = try await FakeSlackWebAPI.start(socketMode: socketMode)   // apps.connections.open → here
/// // run a SocketModeClient against slack.apiURL, then:
/// try await socketMode.waitForConnections(count: 1)
/// let mention = SlackPayloads.appMention(text: "<@U0FAKEBOT> hello", eventID: "Ev1")
/// try await socketMode.send(json: SlackPayloads.socketModeEnvelope(type: "events_api", envelopeID: "e1", payload: mention))
/// try await socketMode.waitForAck(envelopeID: "e1")
/// ```
///
/// Each URL from `makeConnectionURL()` carries a one-use ticket, as Slack's do: a reused or
/// unknown ticket is refused the upgrade. Every connection is greeted with `hello` (unless
/// `setSendsHello(false)`), then the test pushes envelopes, `disconnect`s, hellos, or closes a
/// connection abruptly. Frames are Slack's recorded ones (`SlackPayloads`). Acknowledgements
/// are recorded per envelope and connection, and a timeline records opens, frames sent, acks
/// and closes in order. The waits are event-driven; their `timeout` is only a safety limit, so
/// a broken test fails instead of hanging.
public final class FakeSocketModeServer: Sendable {
    /// The bound port.
    public let port: Int
    let state: FakeSlackWatched<FakeSocketModeState>
    private let serverTask: Task<Void, any Error>

    private init(port: Int, state: FakeSlackWatched<FakeSocketModeState>, serverTask: Task<Void, any Error>) {
        self.port = port
        self.state = state
        self.serverTask = serverTask
    }

    /// Starts a fake on an ephemeral loopback port and returns once it accepts connections.
    public static func start(logger: Logger? = nil) async throws -> FakeSocketModeServer {
        let box = FakeSocketModeStateBox()
        let webSocketRouter = Router(context: FakeSocketModeRequestContext.self)
        webSocketRouter.ws(
            "link",
            shouldUpgrade: { request, _ in
                let ticket = request.uri.queryParameters["ticket"].map(String.init)
                let admitted = box.state?.update { $0.admit(ticket: ticket) } ?? false
                return admitted ? .upgrade([:]) : .dontUpgrade
            },
            onUpgrade: { inbound, outbound, context in
                guard let state = box.state else { return }
                let (id, hello) = state.update {
                    $0.open(outbound: outbound, channel: context.requestContext.channel)
                }
                if hello {
                    let count = state.read { $0.openIDs.count }
                    try await outbound.write(.text(SlackPayloads.body(SlackPayloads.socketModeHello(connections: count))))
                    state.update { $0.sent("hello", on: id) }
                }
                do {
                    for try await message in inbound.messages(maxSize: 4 * 1024 * 1024) {
                        guard case .text(let text) = message else { continue }
                        state.update { $0.receive(text, on: id) }
                    }
                } catch {
                    // An abrupt close ends the stream with an error; it is recorded below.
                }
                state.update { $0.closed(id) }
            })

        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: Router(),
            server: .http1WebSocketUpgrade(
                webSocketRouter: webSocketRouter,
                configuration: .init(ws: .init(maxFrameSize: 4 * 1024 * 1024, autoPing: .disabled))),
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: nil),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            },
            logger: logger ?? Logger(label: "FakeSocketModeServer", factory: { _ in SwiftLogNoOpLogHandler() }))
        let serverTask = Task {
            // If binding fails, finishing the stream makes `start` throw instead of hang.
            defer { portContinuation.finish() }
            try await app.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            serverTask.cancel()
            let result = await serverTask.result
            var reason = "the server stopped before it was listening"
            if case .failure(let error) = result { reason = "\(error)" }
            throw FakeServerError.didNotStart(reason: reason)
        }
        let state = FakeSlackWatched(FakeSocketModeState(baseURL: "ws://127.0.0.1:\(port)"))
        box.state = state
        return FakeSocketModeServer(port: port, state: state, serverTask: serverTask)
    }

    /// Stops the server; open connections are cut.
    public func stop() async {
        serverTask.cancel()
        _ = await serverTask.result
    }

    /// A fresh connection URL with a one-use ticket, as `apps.connections.open` returns.
    public func makeConnectionURL() -> String {
        state.update { $0.makeConnectionURL() }
    }

    /// Whether new connections are greeted with `hello` (on by default).
    public func setSendsHello(_ sendsHello: Bool) {
        state.update { $0.sendsHello = sendsHello }
    }

    /// Refuses the upgrade of the next `count` connection attempts.
    public func refuseNextConnections(_ count: Int) {
        state.update { $0.refuseNext += max(0, count) }
    }

    // MARK: - Pushing frames

    /// Sends `hello` on a connection (one opened while hello was off).
    public func sendHello(to connection: Int? = nil) async throws {
        let count = state.read { $0.openIDs.count }
        try await send(json: SlackPayloads.socketModeHello(connections: count), to: connection)
    }

    /// Sends Slack's `disconnect` with `reason`, as Slack does before recycling a connection.
    public func sendDisconnect(reason: String = "refresh_requested", to connection: Int? = nil) async throws {
        try await send(json: SlackPayloads.socketModeDisconnect(reason: reason), to: connection)
    }

    /// Sends any JSON frame on connection `connection`, or on the newest open one: an envelope
    /// from `SlackPayloads.socketModeEnvelope`, say.
    public func send(json: JSONValue, to connection: Int? = nil) async throws {
        let type = json["type"]?.stringValue ?? "?"
        try await send(text: String(decoding: json.encoded(), as: UTF8.self), type: type, to: connection)
    }

    /// Sends a text frame as it is, JSON or not: what a broken or hostile server might send.
    public func send(rawText text: String, to connection: Int? = nil) async throws {
        try await send(text: text, type: "raw", to: connection)
    }

    private func send(text: String, type: String, to connection: Int?) async throws {
        guard let target = state.read({ $0.target(connection) }) else {
            throw FakeSocketModeError.noOpenConnection(connection)
        }
        try await target.outbound.write(.text(text))
        state.update { $0.sent(type, on: target.id) }
    }

    /// Closes the TCP connection without a websocket close frame, like a dropped network.
    public func closeAbruptly(_ connection: Int? = nil) async throws {
        let target: FakeSocketModeState.Connection? = state.update { state in
            guard let target = state.target(connection), let index = state.index(of: target.id) else { return nil }
            state.connections[index].closingByServer = true
            return target
        }
        guard let target else { throw FakeSocketModeError.noOpenConnection(connection) }
        try await target.channel.close()
    }

    // MARK: - What happened

    /// Ids of the open connections, oldest first.
    public var openConnections: [Int] { state.read(\.openIDs) }
    /// The newest open connection.
    public var newestConnection: Int? { state.read { $0.openIDs.last } }
    /// Connections accepted since start.
    public var connectionCount: Int { state.read(\.connections.count) }
    /// Connection attempts refused (scripted, or with a used or unknown ticket).
    public var refusedCount: Int { state.read(\.refused) }
    /// Every acknowledgement, oldest first.
    public var acks: [FakeSocketModeAck] { state.read(\.acks) }
    /// Everything that happened, in order.
    public var timeline: [FakeSocketModeEvent] { state.read(\.timeline) }

    /// The acknowledgements of `envelopeID`, oldest first.
    public func acks(for envelopeID: String) -> [FakeSocketModeAck] {
        state.read { $0.acks.filter { $0.envelopeID == envelopeID } }
    }

    // MARK: - Waiting

    /// Waits until `count` connections have been accepted since start and greeted (when hello
    /// was on); returns the ids of the open ones.
    @discardableResult
    public func waitForConnections(count: Int, timeout: Double = 30) async throws -> [Int] {
        let state = try await state.wait(
            for: "\(count) greeted connection(s)", timeout: timeout, describe: \.summary,
            until: { state in
                state.connections.count >= count
                    && state.connections.prefix(count).allSatisfy { $0.greeted || !$0.expectsHello || !$0.isOpen }
            })
        return state.openIDs
    }

    /// Waits until `count` acknowledgements of `envelopeID` have arrived; returns them.
    @discardableResult
    public func waitForAck(envelopeID: String, count: Int = 1, timeout: Double = 30) async throws -> [FakeSocketModeAck] {
        let state = try await state.wait(
            for: "\(count) ack(s) of \(envelopeID)", timeout: timeout, describe: \.summary,
            until: { $0.acks.filter { $0.envelopeID == envelopeID }.count >= count })
        return state.acks.filter { $0.envelopeID == envelopeID }
    }

    /// Waits until connection `connection` has closed.
    public func waitForClose(of connection: Int, timeout: Double = 30) async throws {
        _ = try await state.wait(
            for: "connection \(connection) to close", timeout: timeout, describe: \.summary,
            until: { state in state.connections.contains { $0.id == connection && !$0.isOpen } })
    }

    /// Waits until exactly `count` connections are open.
    public func waitForOpenConnections(_ count: Int, timeout: Double = 30) async throws {
        _ = try await state.wait(
            for: "\(count) open connection(s)", timeout: timeout, describe: \.summary,
            until: { $0.openIDs.count == count })
    }

    /// Waits until the timeline satisfies `condition`; returns it.
    ///
    /// ```swift
    /// try await socketMode.waitFor("hello on connection 2") { $0.contains(.sent(2, type: "hello")) }
    /// ```
    @discardableResult
    public func waitFor(
        _ what: String, timeout: Double = 30, until condition: @escaping @Sendable ([FakeSocketModeEvent]) -> Bool
    ) async throws -> [FakeSocketModeEvent] {
        try await state.wait(for: what, timeout: timeout, describe: \.summary, until: { condition($0.timeline) }).timeline
    }
}

/// Why a `FakeSocketModeServer` could not do what a test asked.
public enum FakeSocketModeError: Error, Sendable, Hashable {
    /// No open connection (with that id, when one was given).
    case noOpenConnection(Int?)
}

/// Lets the router, built before the port is known, reach the state created after.
final class FakeSocketModeStateBox: Sendable {
    private let value = Mutex<FakeSlackWatched<FakeSocketModeState>?>(nil)

    var state: FakeSlackWatched<FakeSocketModeState>? {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}

/// The websocket router's context; keeps the channel so a test can cut a connection.
struct FakeSocketModeRequestContext: RequestContext, WebSocketRequestContext {
    var coreContext: CoreRequestContextStorage
    let webSocket: WebSocketHandlerReference<FakeSocketModeRequestContext>
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.webSocket = .init()
        self.channel = source.channel
    }
}

/// Starts a `FakeSocketModeServer`, runs `body` with it and stops it, also when `body` throws.
public func withFakeSocketModeServer<T>(
    isolation: isolated (any Actor)? = #isolation,
    _ body: (FakeSocketModeServer) async throws -> T
) async throws -> T {
    let server = try await FakeSocketModeServer.start()
    do {
        let result = try await body(server)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}
