public import Foundation
import Hummingbird
public import Logging
import NIOCore
import RelayCore

/// A fake OpenAI-compatible model server: a real HTTP server on 127.0.0.1 speaking the
/// chat-completions wire format. One server is one model; start several for a council.
///
/// ```swift
/// try await withFakeOpenAIServer(persona: .disagree) { server in
///     // point a CouncilModel's baseURL at server.url ("http://127.0.0.1:PORT/v1"), then:
///     server.setPersona(.slow(seconds: 2, then: .agree))
///     let sent = server.lastRequest()?["messages"]
/// }
/// ```
///
/// Routes: `POST /v1/chat/completions` and `POST /chat/completions` (so a base URL may or
/// may not end in `/v1`), `GET /v1/models` and `GET /models`; anything else is a 404 in
/// OpenAI's error shape. Checks, in order: route, method, the key (when `requiredKey` is
/// set: 401 "Incorrect API key provided…"), the body (400 when it is not JSON or lacks a
/// `model` or non-empty `messages`), then the persona answers. Every request is recorded.
public final class FakeOpenAIServer: Sendable {
    /// `http://127.0.0.1:<port>/v1`, the base URL to configure.
    public let url: String
    /// The bound port.
    public let port: Int
    let state: FakeOpenAIState
    private let server: FakeServerHandle

    private init(port: Int, state: FakeOpenAIState, server: FakeServerHandle) {
        self.url = "http://127.0.0.1:\(port)/v1"
        self.port = port
        self.state = state
        self.server = server
    }

    /// Starts a fake on an ephemeral loopback port and returns once it accepts connections.
    ///
    /// - Parameters:
    ///   - persona: how chat requests are answered (see `FakeOpenAIPersona`).
    ///   - requiredKey: the Bearer key every request must carry; nil accepts any request.
    ///   - model: the id `GET /v1/models` lists (chat answers report the requested model).
    ///   - logger: the server's logger; silent by default.
    public static func start(
        persona: FakeOpenAIPersona = .agree,
        requiredKey: String? = nil,
        model: String = "fake-model",
        logger: Logger? = nil
    ) async throws -> FakeOpenAIServer {
        let state = FakeOpenAIState(persona: persona, requiredKey: requiredKey, modelID: model)
        let stopFlag = FakeStopFlag()
        let responder = CallbackResponder<BasicRequestContext> { request, _ in
            let recorded = try await RecordedRequest.read(request)
            state.record(recorded)
            state.arrivals.append(recorded, key: recorded.path)
            let reply = FakeOpenAIReplies.reply(to: recorded, state: state)
            if reply.delay > 0 {
                // Throws when the server stops, which cuts the answer off.
                try await stopFlag.delay(reply.delay)
            }
            if let plan = reply.stream { return streamed(plan, stopFlag: stopFlag, state: state) }
            var responseHeaders = HTTPFields()
            responseHeaders[.contentType] = "application/json"
            if let retryAfter = reply.retryAfter {
                responseHeaders[.retryAfter] = String(retryAfter)
            }
            return Response(
                status: .init(code: reply.status),
                headers: responseHeaders,
                body: .init(byteBuffer: ByteBuffer(bytes: reply.body)))
        }

        let (server, port) = try await FakeServerHandle.start(
            responder: responder, stopFlag: stopFlag, logger: logger ?? Logger(label: "FakeOpenAIServer", factory: { _ in SwiftLogNoOpLogHandler() }))
        return FakeOpenAIServer(port: port, state: state, server: server)
    }

    /// An answer as server-sent events, written as `plan` says; a disconnect (or the server
    /// stopping) ends the body unfinished, which closes the connection midway.
    static func streamed(_ plan: FakeOpenAIStreamPlan, stopFlag: FakeStopFlag, state: FakeOpenAIState) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache"
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                for step in plan.steps {
                    switch step {
                    case .wait(let seconds): try await stopFlag.delay(seconds)
                    case .send(let text, let isPiece):
                        try await writer.write(ByteBuffer(string: text))
                        if isPiece { state.pieceSent() }
                    case .disconnect: throw FakeDisconnect()
                    }
                }
                try await writer.finish(nil)
            })
    }

    /// Streams the following answers asked for with `"stream": true` as `stream` says.
    public func setStream(_ stream: FakeOpenAIStream) {
        state.stream = stream
    }

    /// Whether answers carry token counts (`usage`); false: as a server that counts nothing.
    public func setReportsUsage(_ reports: Bool) {
        state.reportsUsage = reports
    }

    /// Stops the server and waits until the port is closed; slow and hanging answers are cut off.
    public func stop() async {
        await server.stop()
    }

    /// Answers the following chat requests as `persona`; a `.sequence` starts from its first.
    public func setPersona(_ persona: FakeOpenAIPersona) {
        state.setPersona(persona)
    }

    /// Requests received (every route, refused ones too), oldest first.
    public func requests() -> [RecordedRequest] { state.requests }

    /// The next request to `path` (in arrival order, each handed out once), waiting for it to
    /// arrive; nil only if none comes within a generous safety limit.
    public func next(path: String = "/v1/chat/completions") async -> RecordedRequest? {
        await state.arrivals.next(path)
    }

    /// When each streamed piece of an answer was written to its connection, oldest first: the
    /// backend's "first token" for a latency check.
    public func piecesSent() -> [Date] { state.piecesSent }

    /// How many requests arrived.
    public func requestCount() -> Int { state.requestCount }

    /// The latest request, if any.
    public func lastRequest() -> RecordedRequest? { state.lastRequest }

    /// Forgets the recorded requests (the persona and its `.sequence` position stay).
    public func clearRequests() { state.clearRequests() }
}

/// Starts a `FakeOpenAIServer`, runs `body` with it and stops it, also when `body` throws.
public func withFakeOpenAIServer<T>(
    persona: FakeOpenAIPersona = .agree,
    requiredKey: String? = nil,
    model: String = "fake-model",
    isolation: isolated (any Actor)? = #isolation,
    _ body: (FakeOpenAIServer) async throws -> T
) async throws -> T {
    let server = try await FakeOpenAIServer.start(persona: persona, requiredKey: requiredKey, model: model)
    do {
        let result = try await body(server)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}

/// Thrown inside a streamed body: the connection drops midway.
struct FakeDisconnect: Error {}
