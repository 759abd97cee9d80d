import Hummingbird
public import Logging
import NIOCore
import RelayCore
import Synchronization

/// A fake of Slack's Web API: a real HTTP server on 127.0.0.1.
///
/// ```swift
/// try await withFakeSlackWebAPI { slack in
///     // point a SlackWebClient at slack.apiURL with slack.botToken, then:
///     slack.failNext(with: .rateLimited(retryAfter: 2))
///     let post = await slack.next(path: "chat.postMessage")
/// }
/// ```
///
/// Serves `POST /api/chat.postMessage`, `/api/chat.update`, `/api/chat.postEphemeral`,
/// `/api/apps.connections.open` (the URL of the attached `FakeSocketModeServer`), the read
/// methods `/api/conversations.replies` (threads of seeded and posted messages, in pages with
/// `response_metadata.next_cursor`) and `/api/users.info` (seeded users; others are
/// `user_not_found`), and response URLs (`POST /response/<id>`, from `makeResponseURL()`; what
/// their posts show is kept, `responses(responseURL:)`).
/// Checks, in order: method and route
/// (404 `unknown_method`), a scripted failure, the bearer token (missing: `not_authed`; the
/// other kind of token: `not_allowed_token_type`; wrong: `invalid_auth`, all with HTTP 200),
/// then the body as Slack does (`invalid_json`, `channel_not_found`, `no_text`,
/// `invalid_blocks`, `message_not_found`…). Messages are kept, with increasing `ts`s, so
/// `chat.update` must name one that exists. Every request is recorded, and `next(path:)` awaits
/// them one by one as they arrive.
public final class FakeSlackWebAPI: Sendable {
    /// The methods served, as paths.
    static let methods: Set<String> = [
        "/api/chat.postMessage", "/api/chat.update", "/api/chat.postEphemeral", "/api/apps.connections.open",
        "/api/conversations.replies", "/api/users.info", "/api/auth.test",
    ]
    /// The bot's user and bot ids in posted messages.
    public static let botUserID = "U0FAKEBOT"
    public static let botID = "B0FAKEBOT"

    /// `http://127.0.0.1:<port>/api`, the Web API base to configure.
    public let apiURL: String
    /// `http://127.0.0.1:<port>`.
    public let baseURL: String
    public let port: Int
    /// The token `chat.*` methods accept.
    public let botToken: String
    /// The token `apps.connections.open` accepts.
    public let appToken: String
    let state: FakeSlackWatched<FakeSlackWebAPIState>
    /// The same requests as `state`, filed by path, for `next(path:)`.
    let requestLog: RequestLog<RecordedRequest>
    private let server: FakeServerHandle

    private init(
        port: Int, state: FakeSlackWatched<FakeSlackWebAPIState>, requestLog: RequestLog<RecordedRequest>, server: FakeServerHandle
    ) {
        self.port = port
        self.requestLog = requestLog
        self.baseURL = "http://127.0.0.1:\(port)"
        self.apiURL = "http://127.0.0.1:\(port)/api"
        self.state = state
        self.server = server
        let tokens = state.read { ($0.botToken, $0.appToken) }
        self.botToken = tokens.0
        self.appToken = tokens.1
    }

    /// Keeps `bytes` as a private file (an audio clip) and returns its `url_private_download`,
    /// served under `<baseURL>/files-pri/…` to the bot token, as `files.slack.com` does.
    public func addFile(_ bytes: [UInt8], name: String = "audio_message.ogg") -> String {
        state.update { state in
            let path = "/files-pri/T0E2E-F0\(state.files.count + 1)AUDIO/download/\(name)"
            state.files[path] = bytes
            return baseURL + path
        }
    }

    /// How many private-file downloads were asked for.
    public var fileRequests: Int { state.read { $0.requests.filter { $0.path.hasPrefix("/files-pri/") }.count } }

    /// Starts a fake on an ephemeral loopback port and returns once it accepts connections.
    ///
    /// - Parameters:
    ///   - socketMode: where `apps.connections.open` points; without one it answers
    ///     `socket_mode_not_enabled`. See also `attach(socketMode:)`.
    public static func start(
        botToken: String = "xoxb-fake-bot-token",
        appToken: String = "xapp-fake-app-token",
        socketMode: FakeSocketModeServer? = nil,
        logger: Logger? = nil
    ) async throws -> FakeSlackWebAPI {
        // The port is known only once bound; the base URL is filled in before any request.
        let box = FakeSlackStateBox()
        let stopFlag = FakeStopFlag()
        let requestLog = RequestLog<RecordedRequest>()
        let responder = CallbackResponder<BasicRequestContext> { request, _ in
            let recorded = try await RecordedRequest.read(request)
            guard let state = box.state else { return Response(status: .serviceUnavailable) }
            let reply = state.update { $0.answer(recorded) }
            // Filed once the state has it, so whoever `next` wakes sees its effects (a message).
            requestLog.append(recorded, key: recorded.path)
            if reply.delay > 0 {
                // Throws when the server stops, which cuts the answer off.
                try await stopFlag.delay(reply.delay)
            }
            var responseHeaders = HTTPFields()
            responseHeaders[.contentType] = reply.contentType
            if let retryAfter = reply.retryAfter {
                responseHeaders[.retryAfter] = String(retryAfter)
            }
            return Response(
                status: .init(code: reply.status),
                headers: responseHeaders,
                body: .init(byteBuffer: ByteBuffer(bytes: reply.body)))
        }
        let (server, port) = try await FakeServerHandle.start(
            responder: responder, stopFlag: stopFlag, logger: logger ?? Logger(label: "FakeSlackWebAPI", factory: { _ in SwiftLogNoOpLogHandler() }))
        var initial = FakeSlackWebAPIState(botToken: botToken, appToken: appToken, baseURL: "http://127.0.0.1:\(port)")
        initial.socketMode = socketMode
        let state = FakeSlackWatched(initial)
        box.state = state
        return FakeSlackWebAPI(port: port, state: state, requestLog: requestLog, server: server)
    }

    /// Stops the server and waits until the port is closed; slow answers are cut off.
    public func stop() async {
        await server.stop()
    }

    /// Puts a message into a channel as if a person had written it (for reactions and threads).
    public func seed(_ message: FakeSlackMessage) {
        state.update { $0.messages.append(message) }
    }

    /// Adds a workspace member for `users.info` to answer about (replacing one with its id).
    public func seed(_ user: FakeSlackUser) {
        state.update { $0.users[user.id] = user }
    }

    /// Points `apps.connections.open` at `socketMode`.
    public func attach(socketMode: FakeSocketModeServer) {
        state.update { $0.socketMode = socketMode }
    }

    /// Answers the next `count` requests (to `path` only, when given) with `failure`, once
    /// `after` of them have been answered normally (a failure on a later page, say).
    ///
    /// `path` is a full path (`/api/chat.postMessage`) or a method name (`chat.postMessage`).
    public func failNext(_ count: Int = 1, with failure: FakeSlackFailure, path: String? = nil, after: Int = 0) {
        let path = path.map(Self.normalized)
        state.update { state in
            for index in 0..<max(0, count) {
                state.failures.append(.init(path: path, failure: failure, skip: index == 0 ? max(0, after) : 0))
            }
        }
    }

    /// A fresh response URL (`http://127.0.0.1:<port>/response/<id>`), good for 5 posts.
    public func makeResponseURL() -> String {
        state.update { $0.makeResponseURL() }
    }

    /// Makes `responseURL` answer 404 `expired_url` from now on, as after 30 minutes.
    public func expire(responseURL: String) {
        state.update { $0.expire(responseURL: responseURL) }
    }

    /// Requests received (to `path` only, when given), oldest first; refused ones too.
    public func requests(path: String? = nil) -> [RecordedRequest] {
        let path = path.map(Self.normalized)
        return state.read { $0.requests.filter { path == nil || $0.path == path } }
    }

    /// When the requests (to `path` only, when given) arrived, oldest first: the instants match
    /// `requests(path:)` one for one.
    public func arrivalTimes(path: String? = nil) -> [ContinuousClock.Instant] {
        let path = path.map(Self.normalized)
        return state.read { state in
            zip(state.requests, state.arrivals).filter { path == nil || $0.0.path == path }.map(\.1)
        }
    }

    /// The requests posted to `responseURL`, oldest first.
    public func requests(responseURL: String) -> [RecordedRequest] {
        guard let id = FakeSlackWebAPIState.responseID(responseURL) else { return [] }
        return requests(path: "/response/\(id)")
    }

    /// What the posts to `responseURL` left for people to see, oldest first: each post adds a
    /// message, except one with `replace_original`, which takes the place of the message the
    /// URL's last post made (Slack's `response_url` semantics), and `delete_original`.
    public func responses(responseURL: String) -> [FakeSlackResponseMessage] {
        guard let id = FakeSlackWebAPIState.responseID(responseURL) else { return [] }
        return state.read { $0.responseMessages[id] ?? [] }
    }

    /// Messages posted (and updated) so far, oldest first; in `channel` only, when given.
    public func messages(channel: String? = nil) -> [FakeSlackMessage] {
        state.read { $0.messages.filter { channel == nil || $0.channel == channel } }
    }

    /// Forgets the recorded requests (messages, response URLs and scripted failures stay);
    /// `next(path:)` still hands out, in order, those it has not handed out yet.
    public func clearRequests() {
        state.update { state in
            state.requests.removeAll()
            state.arrivals.removeAll()
        }
    }

    /// The next request to `path` (in arrival order, each handed out once, whether it arrived
    /// before or after the call), waiting for it to arrive; nil only if none comes within a
    /// generous safety limit.
    ///
    /// `path` is a full path (`/api/chat.postMessage`, `/response/…`) or a method name
    /// (`chat.postMessage`).
    public func next(path: String) async -> RecordedRequest? {
        await requestLog.next(Self.normalized(path))
    }

    /// The next request posted to `responseURL` (see `next(path:)`).
    public func next(responseURL: String) async -> RecordedRequest? {
        guard let id = FakeSlackWebAPIState.responseID(responseURL) else { return nil }
        return await next(path: "/response/\(id)")
    }

    /// Waits until at least `count` requests (to `path` only, when given) have arrived and
    /// returns them, oldest first. `next(path:)` awaits them one by one instead.
    ///
    /// - Throws: `FakeSlackTimeout` after `timeout` seconds.
    @discardableResult
    public func waitForRequests(count: Int, path: String? = nil, timeout: Double = 30) async throws -> [RecordedRequest] {
        let path = path.map(Self.normalized)
        let matching: @Sendable (FakeSlackWebAPIState) -> [RecordedRequest] = { state in
            state.requests.filter { path == nil || $0.path == path }
        }
        let state = try await state.wait(
            for: "\(count) request(s)\(path.map { " to \($0)" } ?? "")", timeout: timeout,
            describe: { state in "\(matching(state).count) matching of \(state.requests.map(\.path))" },
            until: { matching($0).count >= count })
        return matching(state)
    }

    /// The fields of a form body (a read method's request), as the fake reads them.
    public static func formFields(_ body: String) -> [String: String] {
        FakeSlackWebAPIState.form(body)
    }

    /// `chat.postMessage` → `/api/chat.postMessage`; paths stay as they are.
    static func normalized(_ path: String) -> String {
        path.hasPrefix("/") ? path : "/api/\(path)"
    }
}

/// Lets the responder, built before the port is known, reach the state created after.
final class FakeSlackStateBox: Sendable {
    private let value = Mutex<FakeSlackWatched<FakeSlackWebAPIState>?>(nil)

    var state: FakeSlackWatched<FakeSlackWebAPIState>? {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}

/// Starts a `FakeSlackWebAPI`, runs `body` with it and stops it, also when `body` throws.
public func withFakeSlackWebAPI<T>(
    botToken: String = "xoxb-fake-bot-token",
    appToken: String = "xapp-fake-app-token",
    socketMode: FakeSocketModeServer? = nil,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (FakeSlackWebAPI) async throws -> T
) async throws -> T {
    let fake = try await FakeSlackWebAPI.start(botToken: botToken, appToken: appToken, socketMode: socketMode)
    do {
        let result = try await body(fake)
        await fake.stop()
        return result
    } catch {
        await fake.stop()
        throw error
    }
}
