import Foundation
import Hummingbird
import Logging
import NIOCore
import RelayCore
import RelayTestSupport
import Synchronization

/// The `response_url`s — or, for Discord, the REST API's interaction webhook (the edit of each
/// interaction's `@original`; for Telegram, the `sendMessage` calls a `TelegramSink` hands
/// over): records when each reply arrived and how many arrived per command, and in which message
/// people see it — a new one, or one edited into the answer (so a resend that edits the same
/// message is no visible double) — and lets a closed-loop user wait for its own reply.
final class ReplySink: Sendable {
    private struct State {
        var first: [Int: ContinuousClock.Instant] = [:]
        var last: [Int: ContinuousClock.Instant] = [:]
        var count: [Int: Int] = [:]
        /// The messages people see each command's answer in (the platform's identity of each).
        var shownIn: [Int: Set<String>] = [:]
        /// Slack: the message the `response_url` of each command last posted (`replace_original`
        /// puts a post in its place), and how many it posted.
        var responseURLLast: [Int: Int] = [:]
        var responseURLPosts: [Int: Int] = [:]
        /// Messages made anew (no identity of their own): numbers them.
        var anonymous = 0
        /// Commands whose reply said the relay was busy (Telegram: no reply in the ack).
        var busy: Set<Int> = []
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())
    private let task: Task<Void, any Error>
    let port: Int
    /// The key the sink signs Teams activities' tokens with, as the Bot Connector's.
    let teamsKey: TestRSAKey
    /// Google, for `--platform google-chat`.
    let google: GoogleChatSink

    private init(port: Int, task: Task<Void, any Error>, teamsKey: TestRSAKey, google: GoogleChatSink) {
        self.port = port
        self.task = task
        self.teamsKey = teamsKey
        self.google = google
    }

    /// Teams: the sink plays the Bot Framework — `TEAMS_OPENID_METADATA_URL` (and its keys),
    /// `TEAMS_TOKEN_URL`, and the Bot Connector at `teamsServiceURL`, each command in a
    /// conversation of its own (`bench-<number>`).
    var teamsMetadataURL: String { "http://127.0.0.1:\(port)/teams/openid" }
    var teamsTokenURL: String { "http://127.0.0.1:\(port)/teams/token" }
    var teamsServiceURL: String { "http://127.0.0.1:\(port)/teams/svc/" }
    static let teamsAppID = "00000000-0000-4000-8000-0000000be4c0"

    func url(for index: Int) -> String { "http://127.0.0.1:\(port)/r/\(index)" }
    /// `SLACK_API_URL` for the relay: never called (the bench gives no bot token), it names the
    /// sink's origin as the one, besides Slack's hook host, where a `response_url` may be.
    var slackAPIURL: String { "http://127.0.0.1:\(port)/api" }
    /// `MATTERMOST_URL` for the relay: the sink plays Mattermost's REST API (`POST /api/v4/posts`).
    var mattermostURL: String { "http://127.0.0.1:\(port)" }
    /// Command `index`'s `response_url` as Mattermost writes them: on `MATTERMOST_URL`, under
    /// `/hooks/commands/`, the one place the relay answers at.
    func mattermostHookURL(for index: Int) -> String { "\(mattermostURL)/hooks/commands/\(index)" }
    /// `DISCORD_API_URL` for the relay: the sink plays Discord's REST API.
    var discordAPIURL: String { "http://127.0.0.1:\(port)/api/v10" }

    /// Command `index`'s interaction token: as long as Discord's (they are about 200 characters),
    /// the command's number at the end.
    static func discordToken(for index: Int) -> String { tokenPrefix + String(index) }
    static let tokenPrefix = "aW50ZXJhY3Rpb246MTMwMDAwMDAwMDAwMDAwMDAwMDpiZW5jaC1zaW5rLXRva2Vu" + String(repeating: "QmVuY2g", count: 20) + "-"

    static func start(logger: Logger) async throws -> ReplySink {
        let box = Mutex<ReplySink?>(nil)
        let router = Router()
        let teamsKey = try TestRSAKey(kid: "bench-bot-connector-key")
        addTeams(to: router, key: teamsKey) { box.withLock { $0 } }
        let google = try GoogleChatSink()
        google.add(to: router) { box.withLock { $0 } }
        let responseURL: @Sendable (Request, BasicRequestContext) async throws -> HTTPResponse.Status = { request, context in
            let arrived = ContinuousClock.now
            let body = try await request.body.collect(upTo: 1 << 20)
            if let index = context.parameters.get("index", as: Int.self), let sink = box.withLock({ $0 }) {
                // Slack's `response_url`: `replace_original` takes the place of what the URL's
                // last post showed; anything else is a message of its own.
                let replaces = JSONValue.parse(body.readableBytesView)?["replace_original"]?.boolValue == true
                sink.arrived(index, at: arrived, message: sink.responseURLMessage(index, replacing: replaces))
            }
            return .ok
        }
        router.post("r/:index", use: responseURL)
        // Mattermost's: the relay answers only at `MATTERMOST_URL` under `/hooks/commands/`.
        router.post("hooks/commands/:index", use: responseURL)
        // Discord: the edit of the deferred response (and, should the relay use them, a
        // follow-up or a channel post), answered as Discord answers: 200, the message as JSON,
        // the webhook route's rate-limit headers.
        // Which message people see: `@original` is the interaction's one message; a channel
        // post with `enforce_nonce` is the message its nonce made; a follow-up is new.
        let discordReply: @Sendable (Request, BasicRequestContext, _ message: @Sendable (String, JSONValue?) -> String?) async throws -> Response = {
            request, context, message in
            let arrived = ContinuousClock.now
            let body = try await request.body.collect(upTo: 1 << 20)
            if let token = context.parameters.get("token"), token.hasPrefix(tokenPrefix), let index = Int(token.dropFirst(tokenPrefix.count)),
                let sink = box.withLock({ $0 })
            {
                sink.arrived(index, at: arrived, message: message(token, JSONValue.parse(body.readableBytesView)))
            }
            return Response(status: .ok, headers: discordHeaders, body: ResponseBody(byteBuffer: ByteBuffer(string: discordMessage)))
        }
        router.patch("api/v10/webhooks/:application/:token/messages/@original") { request, context in
            try await discordReply(request, context) { token, _ in "original:\(token)" }
        }
        router.post("api/v10/webhooks/:application/:token") { request, context in
            try await discordReply(request, context) { _, _ in nil }
        }
        router.post("api/v10/channels/:channel/messages") { request, context in
            try await discordReply(request, context) { _, body in
                guard body?["enforce_nonce"]?.boolValue == true, let nonce = body?["nonce"]?.stringValue else { return nil }
                return "nonce:\(nonce)"
            }
        }
        // Mattermost: the bot's post (201, the post as JSON); the command's number is read from
        // the answer, "[translate:ja] Good morning, this is command number N".
        router.post("api/v4/posts") { request, _ -> Response in
            let arrived = ContinuousClock.now
            let body = try await request.body.collect(upTo: 1 << 20)
            let message = String(buffer: body)
            if let range = message.range(of: "command number "), let index = Int(message[range.upperBound...].prefix { $0.isNumber }),
                let sink = box.withLock({ $0 })
            {
                // A `pending_post_id` Mattermost saw within 30 s answers the post it made then.
                let pending = JSONValue.parse(body.readableBytesView)?["pending_post_id"]?.stringValue
                sink.arrived(index, at: arrived, message: pending.map { "pending:\($0)" })
            }
            return Response(
                status: .created, headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"id":"benchpost0000000000000001","channel_id":"benchchannel","message":"ok"}"#)))
        }
        let (port, task) = try await startLoopbackApp(router, name: "reply sink", logger: logger)
        let sink = ReplySink(port: port, task: task, teamsKey: teamsKey, google: google)
        box.withLock { $0 = sink }
        return sink
    }

    /// The Bot Framework's routes. The Bot Connector answers a new activity with its id and an
    /// update with the same: the run's placeholder is a message (`POST`), and the answer, which
    /// updates it (`PUT`), is the reply the sink records, in the placeholder's message; an answer
    /// posted as a message of its own would be a new one.
    static func addTeams(to router: Router<BasicRequestContext>, key: TestRSAKey, sink current: @escaping @Sendable () -> ReplySink?) {
        let teamsMessages = Atomic<Int>(0)
        router.get("teams/openid") { _, _ -> Response in
            let port = current()?.port ?? 0
            return json(["issuer": "https://api.botframework.com", "jwks_uri": .string("http://127.0.0.1:\(port)/teams/keys")])
        }
        router.get("teams/keys") { _, _ -> Response in json(["keys": [key.jwk(["endorsements": ["msteams"]])]]) }
        router.post("teams/token") { _, _ -> Response in
            json(["token_type": "Bearer", "expires_in": 3599, "access_token": "bench-connector-token"])
        }
        let activity: @Sendable (Request, BasicRequestContext, String?) async throws -> Response = { request, context, updated in
            let arrived = ContinuousClock.now
            let body = try await request.body.collect(upTo: 1 << 20)
            let text = String(buffer: body)
            let id = updated ?? "m\(teamsMessages.wrappingAdd(1, ordering: .relaxed).newValue)"
            if let conversation = context.parameters.get("conversation"), let index = Int(conversation.dropFirst("bench-".count)),
                text.contains("command number") || text.contains("ahead of you"), let sink = current()
            {
                sink.arrived(index, at: arrived, busy: text.contains("ahead of you"), message: updated.map { "teams:\($0)" })
            }
            return json(["id": .string(id)], status: updated == nil ? .created : .ok)
        }
        router.post("teams/svc/v3/conversations/:conversation/activities/:id") { request, context in
            try await activity(request, context, nil)
        }
        router.post("teams/svc/v3/conversations/:conversation/activities") { request, context in try await activity(request, context, nil) }
        router.put("teams/svc/v3/conversations/:conversation/activities/:id") { request, context in
            try await activity(request, context, context.parameters.get("id"))
        }
    }

    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: value.encoded())))
    }

    /// What Discord sends with a message it accepted on an interaction webhook.
    static let discordHeaders: HTTPFields = [
        .contentType: "application/json", HTTPFields.Element.Name("X-RateLimit-Bucket")!: "7c2f0a6b3e4d5a1f9e8b0c7d6a5f4e3b",
        HTTPFields.Element.Name("X-RateLimit-Limit")!: "5", HTTPFields.Element.Name("X-RateLimit-Remaining")!: "4",
        HTTPFields.Element.Name("X-RateLimit-Reset")!: "1795000000.000", HTTPFields.Element.Name("X-RateLimit-Reset-After")!: "1.000",
    ]

    /// The edited message as Discord returns it (a deferred slash command's answer).
    static let discordMessage = """
        {"type":20,"content":"","mentions":[],"mention_roles":[],"attachments":[],"embeds":[{"type":"rich","description":"[translate:ja] Good \
        morning","color":5793266,"footer":{"text":"fake-mini · 0.0 s"}}],"timestamp":"2026-11-24T12:00:00.000000+00:00","edited_timestamp":\
        "2026-11-24T12:00:00.100000+00:00","flags":0,"components":[],"id":"1400000000000000001","channel_id":"1100000000000100000","author":\
        {"id":"1100000000000000002","username":"Rhea","avatar":null,"discriminator":"0000","public_flags":0,"flags":0,"bot":true,"global_name":\
        null},"pinned":false,"mention_everyone":false,"tts":false,"application_id":"1100000000000000001","interaction":{"id":\
        "1300000000000000000","type":2,"name":"translate","user":{"id":"1000000000000100000","username":"user","global_name":"User"}},\
        "webhook_id":"1100000000000000001","interaction_metadata":{"id":"1300000000000000000","type":2,"user":{"id":"1000000000000100000",\
        "username":"user"},"authorizing_integration_owners":{"0":"1100000000000000001"}}}
        """

    /// Records a reply to command `index` (`busy`: it said the relay was too busy to run it),
    /// shown in `message` — the platform's identity of the message people see it in, when the
    /// delivery edited or deduplicated into one; nil when it made a new message.
    func arrived(_ index: Int, at time: ContinuousClock.Instant, busy: Bool = false, message: String? = nil) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.count[index, default: 0] += 1
            if let message {
                state.shownIn[index, default: []].insert(message)
            } else {
                state.anonymous += 1
                state.shownIn[index, default: []].insert("new:\(state.anonymous)")
            }
            if busy { state.busy.insert(index) }
            if state.first[index] == nil { state.first[index] = time }
            state.last[index] = time
            return state.waiters.removeValue(forKey: index)
        }
        waiter?.resume()
    }

    /// Waits until command `index`'s reply has arrived, or `timeout` passed; returns whether it did.
    func reply(_ index: Int, timeout: Duration) async -> Bool {
        let timer = Task {
            try await Task.sleep(for: timeout)
            self.giveUp(index)
        }
        defer { timer.cancel() }
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                if state.first[index] != nil { return true }
                state.waiters[index] = continuation
                return false
            }
            if done { continuation.resume() }
        }
        return state.withLock { $0.first[index] != nil }
    }

    private func giveUp(_ index: Int) {
        state.withLock { $0.waiters.removeValue(forKey: index) }?.resume()
    }

    /// The message a post to command `index`'s `response_url` shows in: the one its last post
    /// made, when this one replaces it; else a new one.
    func responseURLMessage(_ index: Int, replacing: Bool) -> String {
        state.withLock { state in
            if replacing, let last = state.responseURLLast[index] { return "r:\(index):\(last)" }
            let number = state.responseURLPosts[index, default: 0]
            state.responseURLPosts[index] = number + 1
            state.responseURLLast[index] = number
            return "r:\(index):\(number)"
        }
    }

    /// Commands whose answer people see in more than one message: a resend that made a new
    /// message rather than editing (or being deduplicated into) the first.
    func visibleDoubles() -> Int {
        state.withLock { $0.shownIn.values.filter { $0.count > 1 }.count }
    }

    func reset() { state.withLock { $0 = State() } }
    /// When each command's first reply arrived.
    func arrivals() -> [Int: ContinuousClock.Instant] { state.withLock { $0.first } }
    /// How many replies each command got.
    func counts() -> [Int: Int] { state.withLock { $0.count } }
    /// Commands answered "busy" in a reply rather than in the acknowledgement.
    func busyReplies() -> Set<Int> { state.withLock { $0.busy } }
    /// Whether command `index` was answered "busy" in a reply.
    func isBusy(_ index: Int) -> Bool { state.withLock { $0.busy.contains(index) } }

    /// Commands answered more than once, split by the restart launched at `restart` after a crash:
    /// those answered once by the killed process and once by the new one (the process died
    /// between the platform's acceptance and its mark: the documented window), and any other (a
    /// double the window does not explain).
    func doubles(aroundRestartAt restart: ContinuousClock.Instant) -> (inWindow: Int, beyond: Int) {
        state.withLock { state in
            var inWindow = 0
            var beyond = 0
            for (index, count) in state.count where count > 1 {
                if count == 2, let first = state.first[index], let last = state.last[index], first < restart, last > restart {
                    inWindow += 1
                } else {
                    beyond += 1
                }
            }
            return (inWindow, beyond)
        }
    }

    /// Waits (bounded) until every command in `indices` has a reply; returns whether they did.
    func waitForAll(_ indices: some Collection<Int>, timeout: Duration) async -> Bool {
        let end = ContinuousClock.now + timeout
        while ContinuousClock.now < end {
            if state.withLock({ state in indices.allSatisfy { state.first[$0] != nil } }) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    func stop() async {
        task.cancel()
        _ = await task.result
    }
}
