import Foundation
import Hummingbird
import HummingbirdWebSocket
public import Logging
import NIOCore
import RelayCore
import Synchronization

/// A fake Mattermost server, built from the published API v4 description
/// (mattermost/mattermost-api-reference `v4/source`: posts.yaml, commands.yaml, users.yaml and
/// introduction.yaml's rate limiting and WebSocket sections): a real HTTP and websocket server
/// on 127.0.0.1.
///
/// REST, each behind `Authorization: Bearer <token>` (else 401 with Mattermost's `AppError`
/// JSON, `{"id","message","detailed_error","request_id","status_code","is_oauth"}`):
/// `GET /api/v4/users/me`, `POST /api/v4/posts` (201; 16 383 runes at most; 403 in a channel
/// the bot may not post in; a `pending_post_id` seen within 30 s answers the post it made then,
/// as the server's `deduplicateCreatePost`), `PUT /api/v4/posts/{id}/patch`, `POST /api/v4/posts/ephemeral`
/// (201), `GET /api/v4/posts/{id}`, `GET /api/v4/posts/{id}/thread` (a `PostList`),
/// `GET /api/v4/channels/{id}`, `GET /api/v4/teams/name/{name}`, `POST /api/v4/commands` (201,
/// with a new token). `rateLimitNext(_:)` makes the next calls answer 429 with the plain-text
/// body `limit exceeded` and `X-Ratelimit-Limit`/`-Remaining`/`-Reset` headers.
///
/// Response URLs (`/hooks/commands/{id}`, issued by `makeResponseURL`) take the command
/// response JSON at most 5 times within 30 minutes, as the server's `TryUse(hook.Id, 5)`:
/// `in_channel` makes a post in the channel, `ephemeral` one only the asker sees.
///
/// The websocket (`/api/v4/websocket`) wants the `authentication_challenge` frame; a valid token
/// gets `{"status":"OK","seq_reply":1}` and the `hello` event (seq 0), a wrong one `FAIL`. Then
/// `post(_:…)` and `react(_:…)` broadcast `posted` and `reaction_added` events whose
/// `data.post` / `data.reaction` are JSON strings, as Mattermost sends them.
public final class FakeMattermost: Sendable {
    public static let botToken = "fakebottoken00000000000001"
    public static let botUserID = "botuser0000000000000000001"
    public static let botUsername = "rhea"
    public static let teamID = "team0000000000000000000001"
    public static let teamName = "crew"
    /// People of the scenarios.
    public static let alice = "alice000000000000000000001"
    public static let aliceToken = "alicetoken0000000000000001"

    /// `http://127.0.0.1:<port>`: `MATTERMOST_URL`.
    public let url: String
    public let port: Int
    let state: FakeMattermostLocked
    let log: RequestLog<RecordedRequest>
    let sockets: FakeMattermostSockets
    private let server: FakeServerHandle

    private init(port: Int, state: FakeMattermostLocked, log: RequestLog<RecordedRequest>, sockets: FakeMattermostSockets, server: FakeServerHandle) {
        self.port = port
        self.url = "http://127.0.0.1:\(port)"
        self.state = state
        self.log = log
        self.sockets = sockets
        self.server = server
    }

    /// Starts a fake with the bot and Alice, in one team; returns once it accepts connections.
    public static func start(logger: Logger? = nil) async throws -> FakeMattermost {
        var initial = FakeMattermostState()
        initial.tokens = [botUserID: botToken, alice: aliceToken]
        initial.usernames = [botUserID: botUsername, alice: "alice"]
        initial.teams = [teamName: teamID]
        let state = FakeMattermostLocked(initial)
        let log = RequestLog<RecordedRequest>()
        let sockets = FakeMattermostSockets()
        let stopFlag = FakeStopFlag()
        let responder = CallbackResponder<BasicRequestContext> { request, _ in
            let recorded = try await RecordedRequest.read(request)
            let (route, answer) = Self.answer(recorded, state: state)
            log.append(recorded, key: route)
            return answer
        }
        let webSockets = Router(context: FakeMattermostSocketContext.self)
        webSockets.ws(
            "/api/v4/websocket",
            onUpgrade: { inbound, outbound, _ in
                await sockets.serve(inbound: inbound, outbound: outbound, state: state, log: log)
            })
        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            responder: responder,
            server: .http1WebSocketUpgrade(webSocketRouter: webSockets, configuration: .init(ws: .init(maxFrameSize: 1 << 22, autoPing: .disabled))),
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: nil),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            },
            logger: logger ?? Logger(label: "FakeMattermost", factory: { _ in SwiftLogNoOpLogHandler() }))
        let server = FakeServerHandle(app: app, stopFlag: stopFlag) { portContinuation.finish() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            server.task.cancel()
            throw FakeServerError.didNotStart(reason: "the fake Mattermost stopped before it was listening")
        }
        return FakeMattermost(port: port, state: state, log: log, sockets: sockets, server: server)
    }

    /// Closes the websockets, then stops the server.
    public func stop() async {
        await sockets.closeAll()
        await server.stop()
    }

    // MARK: - Routes

    /// The route's label (for `requests(_:)`) and the answer.
    static func answer(_ request: RecordedRequest, state: FakeMattermostLocked) -> (String, Response) {
        let parts = request.path.split(separator: "/").map(String.init)
        let requestID = UUID().uuidString.lowercased()
        if parts.count == 3, parts[0] == "hooks", parts[1] == "commands", request.method == "POST" {
            let result = state.withLock { $0.useHook(parts[2], body: request.body, now: Date(), bot: botUserID) }
            switch result {
            case .success: return ("response_url", json(["status": "OK"], status: 200))
            case .failure(let error): return ("response_url", json(error.json(requestID: requestID), status: error.status))
            }
        }
        guard parts.count >= 2, parts[0] == "api", parts[1] == "v4" else {
            return (
                "unknown",
                json(FakeMattermostError.notFound("api.context.404.app_error", "Sorry, we could not find the page.").json(requestID: requestID), status: 404)
            )
        }
        let rest = Array(parts.dropFirst(2))
        let label = Self.label(method: request.method, rest)
        let limited = state.withLock { state -> Int? in
            guard state.rateLimitNext > 0 else { return nil }
            state.rateLimitNext -= 1
            return state.rateLimitReset
        }
        if let reset = limited {
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; charset=utf-8"
            headers[HTTPFields.Element.Name("X-Ratelimit-Limit")!] = "10"
            headers[HTTPFields.Element.Name("X-Ratelimit-Remaining")!] = "0"
            headers[HTTPFields.Element.Name("X-Ratelimit-Reset")!] = String(reset)
            return (label, Response(status: .tooManyRequests, headers: headers, body: .init(byteBuffer: ByteBuffer(string: "limit exceeded\n"))))
        }
        guard let user = state.withLock({ $0.user(bearer: request.header("authorization")) }) else {
            return (label, json(FakeMattermostError.unauthorized.json(requestID: requestID), status: 401))
        }
        if request.method == "GET", rest.count == 2, rest[0] == "files" {
            guard let bytes = state.withLock({ $0.files[rest[1]]?.bytes }) else {
                return (
                    label,
                    json(FakeMattermostError.notFound("app.file_info.get.app_error", "Unable to get the file info.").json(requestID: requestID), status: 404)
                )
            }
            var headers = HTTPFields()
            headers[.contentType] = "application/octet-stream"
            return (label, Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes))))
        }
        let result = state.withLock { Self.route(request, rest, user: user, state: &$0) }
        switch result {
        case .success(let (status, body)): return (label, json(body, status: status))
        case .failure(let error): return (label, json(error.json(requestID: requestID), status: error.status))
        }
    }

    /// `POST /posts`, `PUT /posts/{id}/patch`…: the path with ids as `{id}`.
    static func label(method: String, _ rest: [String]) -> String {
        let shape = rest.enumerated().map { index, part in
            index > 0 && ["posts", "channels", "users", "name", "commands", "files"].contains(rest[index - 1]) && part != "ephemeral" && part != "me"
                ? "{id}" : part
        }
        return method + " /" + shape.joined(separator: "/")
    }

    static func route(_ request: RecordedRequest, _ rest: [String], user: String, state: inout FakeMattermostState) -> Result<
        (Int, JSONValue), FakeMattermostError
    > {
        let body = request.body
        switch (request.method, rest.count, rest.first) {
        case ("GET", 2, "users") where rest[1] == "me":
            return .success(
                (
                    200,
                    [
                        "id": .string(user), "username": .string(state.usernames[user] ?? ""), "email": "", "roles": "system_user",
                        "is_bot": .bool(user == botUserID),
                    ]
                ))
        case ("POST", 1, "posts"):
            // A `pending_post_id` seen within 30 s answers the post it made: no second post
            // (`deduplicateCreatePost` in the server's app/post.go).
            let pending = body?["pending_post_id"]?.stringValue ?? ""
            if !pending.isEmpty, let seen = state.pendingPosts[pending], Date().timeIntervalSince(seen.at) < FakeMattermostState.pendingPostLifetime,
                let post = state.posts[seen.post]
            {
                return .success((201, post.json))
            }
            let created = state.create(
                channel: body?["channel_id"]?.stringValue ?? "", message: body?["message"]?.stringValue ?? "", rootID: body?["root_id"]?.stringValue ?? "",
                user: user, via: "POST /posts")
            if !pending.isEmpty, case .success(let post) = created { state.pendingPosts[pending] = (post.id, Date()) }
            return created.map { (201, $0.json) }
        case ("POST", 2, "posts") where rest[1] == "ephemeral":
            guard state.ephemeralAllowed else {
                return .failure(.init(status: 403, id: "api.context.permissions.app_error", message: "You do not have the appropriate permissions."))
            }
            guard let target = body?["user_id"]?.stringValue, !target.isEmpty else {
                return .failure(.badRequest("api.context.invalid_body_param.app_error", "Invalid or missing user_id in request body."))
            }
            let post = body?["post"]
            let created = state.create(
                channel: post?["channel_id"]?.stringValue ?? "", message: post?["message"]?.stringValue ?? "", rootID: post?["root_id"]?.stringValue ?? "",
                user: user, ephemeralFor: target, via: "POST /posts/ephemeral")
            return created.map { (201, $0.json) }
        case ("GET", 2, "posts"):
            guard let post = state.posts[rest[1]], post.ephemeralFor == nil else {
                return .failure(.notFound("app.post.get.app_error", "Unable to get the post."))
            }
            return .success((200, post.json))
        case ("GET", 3, "posts") where rest[2] == "thread":
            guard let list = state.thread(of: rest[1]) else { return .failure(.notFound("app.post.get.app_error", "Unable to get the post.")) }
            return .success((200, list))
        case ("PUT", 3, "posts") where rest[2] == "patch":
            guard let message = body?["message"]?.stringValue else {
                return .failure(.badRequest("api.context.invalid_body_param.app_error", "Invalid or missing post in request body."))
            }
            return state.patch(rest[1], message: message, user: user).map { (200, $0.json) }
        case ("GET", 2, "channels"):
            guard let team = state.channels[rest[1]] else {
                return .failure(.notFound("app.channel.get.existing.app_error", "Unable to find the existing channel."))
            }
            return .success((200, ["id": .string(rest[1]), "team_id": .string(team), "type": .string(team.isEmpty ? "D" : "O")]))
        case ("GET", 4, "teams") where rest[2] == "members":
            guard state.teams.values.contains(rest[1]) else { return .failure(.notFound("app.team.get.find.app_error", "Unable to find the existing team.")) }
            let roles = state.teamAdmins.contains(rest[3]) ? "team_user team_admin" : "team_user"
            return .success((200, ["team_id": .string(rest[1]), "user_id": .string(rest[3]), "roles": .string(roles)]))
        case ("GET", 3, "users") where rest[1] == "username":
            guard let id = state.usernames.first(where: { $0.value == rest[2] })?.key else {
                return .failure(.notFound("app.user.missing_account.const", "Unable to find the user."))
            }
            return .success((200, ["id": .string(id), "username": .string(rest[2]), "is_bot": .bool(id == FakeMattermost.botUserID), "roles": "system_user"]))
        case ("GET", 2, "users"):
            return .success((200, ["id": .string(rest[1]), "username": .string(state.usernames[rest[1]] ?? ""), "roles": "system_user"]))
        case ("GET", 3, "teams") where rest[1] == "name":
            guard let id = state.teams[rest[2]] else {
                return .failure(.notFound("app.team.get_by_name.missing.app_error", "Unable to find the existing team."))
            }
            return .success((200, ["id": .string(id), "name": .string(rest[2])]))
        case ("POST", 1, "commands"):
            guard let team = body?["team_id"]?.stringValue, state.teams.values.contains(team) else {
                return .failure(.badRequest("model.command.is_valid.team_id.app_error", "Invalid team ID."))
            }
            guard let trigger = body?["trigger"]?.stringValue, !trigger.isEmpty, !trigger.hasPrefix("/"), !trigger.contains(" ") else {
                return .failure(.badRequest("model.command.is_valid.trigger.app_error", "Invalid trigger."))
            }
            guard let method = body?["method"]?.stringValue, method == "P" || method == "G" else {
                return .failure(.badRequest("model.command.is_valid.method.app_error", "Invalid Method."))
            }
            guard let commandURL = body?["url"]?.stringValue, commandURL.hasPrefix("http") else {
                return .failure(.badRequest("model.command.is_valid.url.app_error", "Invalid URL."))
            }
            guard !state.commands.contains(where: { $0.body["trigger"] == body?["trigger"] }) else {
                return .failure(.badRequest("api.command.duplicate_trigger.app_error", "This trigger word is already in use."))
            }
            let command = FakeMattermostCommand(id: state.newID("cmd"), token: state.newID("tok"), body: body ?? [:])
            state.commands.append(command)
            var answer = body?.objectValue ?? [:]
            answer["id"] = .string(command.id)
            answer["token"] = .string(command.token)
            answer["creator_id"] = .string(user)
            return .success((201, .object(answer)))
        default:
            return .failure(.notFound("api.context.404.app_error", "Sorry, we could not find the page."))
        }
    }

    static func json(_ value: JSONValue, status: Int) -> Response {
        // Exactly `application/json`, as Mattermost sends it (mattermostdriver compares the header).
        Response(status: .init(code: status), headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: value.encoded())))
    }

    // MARK: - Test API

    /// A fresh `response_url` for a slash command `user` types in `channel`.
    public func makeResponseURL(channel: String, user: String = FakeMattermost.alice) -> String {
        let id = state.withLock { $0.issueHook(channel: channel, user: user, now: Date()) }
        return "\(url)/hooks/commands/\(id)"
    }

    /// Makes `channel` a channel of `team` ("" for a direct message), where the bot may post unless `forbidden`.
    public func addChannel(_ channel: String, team: String = FakeMattermost.teamID, forbidden: Bool = false) {
        state.withLock { state in
            state.channels[channel] = team
            if forbidden { state.forbidden.insert(channel) } else { state.forbidden.remove(channel) }
        }
    }

    /// A user the server knows, by id and username.
    public func addUser(_ id: String, username: String) {
        state.withLock { $0.usernames[id] = username }
    }

    /// Gives `user` the `team_admin` role in every team.
    public func makeTeamAdmin(_ user: String) {
        state.withLock { _ = $0.teamAdmins.insert(user) }
    }

    /// Whether the bot may make ephemeral posts (`create_post_ephemeral`); by default it may.
    public var allowsEphemeralPosts: Bool {
        get { state.withLock { $0.ephemeralAllowed } }
        set { state.withLock { $0.ephemeralAllowed = newValue } }
    }

    /// The next `count` API calls answer 429 `limit exceeded`, announcing a reset in `reset` seconds.
    public func rateLimitNext(_ count: Int, reset: Int = 1) {
        state.withLock { state in
            state.rateLimitNext = count
            state.rateLimitReset = reset
        }
    }

    /// Every post in `channel` (ephemeral ones too), oldest first.
    public func posts(channel: String) -> [FakeMattermostPost] {
        state.withLock { $0.posts.values.filter { $0.channelID == channel }.sorted { $0.createAt < $1.createAt } }
    }

    /// One post by id.
    public func post(_ id: String) -> FakeMattermostPost? { state.withLock { $0.posts[id] } }

    /// The commands created through the API, in order.
    public var commands: [FakeMattermostCommand] { state.withLock { $0.commands } }

    /// Requests to a route (`POST /posts`, `PUT /posts/{id}/patch`, `response_url`, `websocket`…), in order.
    public func requests(_ route: String) -> [RecordedRequest] { log.records(route) }

    /// The next request to `route`, waiting for it (nil after a safety limit).
    public func next(_ route: String) async -> RecordedRequest? { await log.next(route) }

    /// `user` posts `message` in `channel` (in the thread of `rootID`); every authenticated
    /// websocket gets the `posted` event. Returns the post's id.
    @discardableResult
    public func post(
        _ message: String, channel: String, user: String = FakeMattermost.alice, rootID: String = "", channelType: String = "O", fileIDs: [String] = []
    ) async throws -> String {
        let (post, team, username) = try state.withLock { state -> (FakeMattermostPost, String, String) in
            if state.channels[channel] == nil { state.channels[channel] = channelType == "D" ? "" : FakeMattermost.teamID }
            let post = try state.create(channel: channel, message: message, rootID: rootID, user: user, via: "user", fileIDs: fileIDs).get()
            return (post, state.channels[channel] ?? "", state.usernames[user] ?? user)
        }
        var data: [String: JSONValue] = [
            "channel_display_name": "Town Square", "channel_name": "town-square", "channel_type": .string(channelType),
            "post": .string(String(decoding: post.json.encoded(), as: UTF8.self)), "sender_name": .string("@" + username), "set_online": true,
            "team_id": .string(team),
        ]
        if message.lowercased().contains("@" + Self.botUsername) {
            data["mentions"] = .string(String(decoding: JSONValue.array([.string(Self.botUserID)]).encoded(), as: UTF8.self))
        }
        try await sockets.broadcast("posted", data: .object(data), channel: channel)
        return post.id
    }

    /// Keeps `bytes` as an uploaded file (as `POST /files` would) and returns its id, for
    /// `post(…, fileIDs:)`; `GET /files/{id}` serves it to any signed-in user.
    public func addFile(_ bytes: [UInt8], name: String = "voice-note.ogg", mimeType: String = "audio/ogg", declaredSize: Int? = nil) -> String {
        state.withLock { state in
            let id = state.newID("file")
            let info: JSONValue = [
                "id": .string(id), "name": .string(name), "extension": .string(String(name.split(separator: ".").last ?? "")),
                "size": .int(declaredSize ?? bytes.count), "mime_type": .string(mimeType), "create_at": .int(Int(state.tick())),
            ]
            state.files[id] = (bytes, info)
            return id
        }
    }

    /// How many file downloads were asked for.
    public var fileRequests: Int { requests("GET /files/{id}").count }

    /// Sends the `posted` event of an existing post again, as a reconnecting client may see it twice.
    public func rebroadcast(_ postID: String) async throws {
        let found = state.withLock { state -> (FakeMattermostPost, String)? in
            guard let post = state.posts[postID] else { return nil }
            return (post, state.channels[post.channelID] ?? "")
        }
        guard let (post, team) = found else { return }
        let data: JSONValue = [
            "channel_type": "O", "post": .string(String(decoding: post.json.encoded(), as: UTF8.self)), "sender_name": "@alice", "team_id": .string(team),
        ]
        try await sockets.broadcast("posted", data: data, channel: post.channelID)
    }

    /// Deletes post `postID`, as its author's "Delete" does: every authenticated websocket gets
    /// `post_deleted` with the post (as Mattermost sends it, `delete_at` set).
    public func deletePost(_ postID: String) async throws {
        let found = state.withLock { state -> FakeMattermostPost? in state.posts.removeValue(forKey: postID) }
        guard let post = found, case .object(var json) = post.json else { return }
        json["delete_at"] = .int(Int(state.withLock { $0.tick() }))
        let data: JSONValue = ["post": .string(String(decoding: JSONValue.object(json).encoded(), as: UTF8.self)), "delete_by": "alice"]
        try await sockets.broadcast("post_deleted", data: data, channel: post.channelID)
    }

    /// `user` puts `emoji` (its name: `mag`, `+1`) on post `postID`; every authenticated websocket
    /// gets `reaction_added`.
    public func react(_ emoji: String, to postID: String, user: String = FakeMattermost.alice) async throws {
        let (channel, created) = state.withLock { ($0.posts[postID]?.channelID ?? "", $0.tick()) }
        let reaction: JSONValue = ["user_id": .string(user), "post_id": .string(postID), "emoji_name": .string(emoji), "create_at": .int(Int(created))]
        try await sockets.broadcast("reaction_added", data: ["reaction": .string(String(decoding: reaction.encoded(), as: UTF8.self))], channel: channel)
    }

    /// How many websockets are open and authenticated now.
    public var authenticatedSocketCount: Int { sockets.authenticatedCount }

    /// Closes every websocket (a restart of the server, a dropped network), the server staying up.
    public func closeWebsockets() async { await sockets.closeAll() }

    /// Waits until a websocket is authenticated (nil after a safety limit).
    public func nextAuthenticatedSocket() async -> RecordedRequest? { await log.next(FakeMattermostSockets.authenticated) }
}

/// Runs `body` with a fresh fake Mattermost, stopped after.
public func withFakeMattermost<T>(isolation: isolated (any Actor)? = #isolation, _ body: (FakeMattermost) async throws -> T) async throws -> T {
    let fake = try await FakeMattermost.start()
    do {
        let result = try await body(fake)
        await fake.stop()
        return result
    } catch {
        await fake.stop()
        throw error
    }
}
