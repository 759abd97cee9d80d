import Hummingbird
public import Logging
import NIOCore
public import RelayCore
import Synchronization

/// A fake of Discord's REST API: a real HTTP server on 127.0.0.1, under `/api/v10`.
///
/// ```swift
/// try await withFakeDiscordAPI { discord in
///     // configure DISCORD_API_URL = discord.apiURL, DISCORD_BOT_TOKEN = discord.botToken, then:
///     discord.failNext(.rateLimited(retryAfter: 0.3), route: FakeDiscordAPI.editOriginal)
///     let edit = await discord.next(FakeDiscordAPI.editOriginal)
/// }
/// ```
///
/// Serves `GET /gateway/bot` (the attached `FakeDiscordGateway`'s URL and a session start
/// limit), channel messages (`POST`/`PATCH /channels/{c}/messages[/{m}]`, `GET` of seeded or
/// posted ones; a create with `enforce_nonce` and a nonce the channel saw within `nonceWindow`
/// answers the message made then and posts none, as Discord documents), interaction webhooks (`PATCH /webhooks/{app}/{token}/messages/@original`,
/// `POST /webhooks/{app}/{token}`; an expired token answers 404 code 10015, as Discord does after
/// 15 minutes; the original response's last edit is kept per token, `original(token:)`), DMs (`POST /users/@me/channels`) and command registration (`PUT …/commands`).
/// Bot routes check `Authorization: Bot <token>` (401 otherwise); webhook routes need none.
/// Every request is recorded under its route name (`editOriginal`, `createMessage`…), and
/// `next(_:)` awaits them one by one as they arrive.
public final class FakeDiscordAPI: Sendable {
    /// Route names requests are filed under.
    public static let gatewayBot = "gatewayBot"
    public static let createMessage = "createMessage"
    public static let editMessage = "editMessage"
    public static let getMessage = "getMessage"
    public static let editOriginal = "editOriginal"
    public static let followup = "followup"
    public static let createDM = "createDM"
    /// `GET /users/@me`: the bot's own user, for a check of its token.
    public static let currentUser = "currentUser"
    public static let commands = "commands"
    /// `GET /guilds/{g}` and `GET /guilds/{g}/members/{u}`: the server's roles and a member's.
    public static let guild = "guild"
    public static let guildMember = "guildMember"
    /// `GET /users/{u}`: the asker, the bot and the users `seed(user:)` added; 404 for others.
    public static let user = "user"
    /// The server's owner, who administers it whatever their roles.
    public static let guildOwner = "1100000000000000099"
    /// The server's role with Manage Server (`makeGuildAdmin` gives it).
    public static let adminRole = "1200000000000000001"

    /// The application every interaction names.
    public static let applicationID = "1100000000000000001"
    /// The bot's user id (READY names it; mentions carry it).
    public static let botUserID = "1100000000000000002"

    /// `http://127.0.0.1:<port>/api/v10`, the REST base to configure.
    public let apiURL: String
    public let botToken: String
    /// `http://127.0.0.1:<port>`, the CDN base to configure (`discord.cdnURL`): attachments
    /// added with `addAttachment` are served under `/attachments/…`, as Discord's CDN does.
    public let cdnURL: String
    let state: FakeDiscordLocked<FakeDiscordAPIState>
    let log: RequestLog<RecordedRequest>
    /// Attachment bytes by path, and how many downloads there were.
    let attachments: FakeDiscordLocked<FakeDiscordCDN>
    private let server: FakeServerHandle

    private init(
        port: Int, botToken: String, state: FakeDiscordLocked<FakeDiscordAPIState>, log: RequestLog<RecordedRequest>,
        attachments: FakeDiscordLocked<FakeDiscordCDN>, server: FakeServerHandle
    ) {
        self.apiURL = "http://127.0.0.1:\(port)/api/v10"
        self.cdnURL = "http://127.0.0.1:\(port)"
        self.botToken = botToken
        self.state = state
        self.log = log
        self.attachments = attachments
        self.server = server
    }

    /// Keeps `bytes` as an attachment (a voice message's OGG) and returns its CDN URL, signed
    /// as Discord's are (`?ex=…&is=…&hm=…`, not checked here).
    public func addAttachment(_ bytes: [UInt8], name: String = "voice-message.ogg") -> String {
        attachments.withLock { cdn in
            let path = "/attachments/1300000000000000001/\(1_400_000_000_000_000_000 + cdn.files.count)/\(name)"
            cdn.files[path] = bytes
            return cdnURL + path + "?ex=6760a0b0&is=675f4f30&hm=" + String(repeating: "ab", count: 32) + "&"
        }
    }

    /// How many attachment downloads the CDN served or refused.
    public var attachmentRequests: Int { attachments.withLock { $0.requests } }

    /// A scripted failure for the next request to a route.
    public enum Failure: Sendable, Hashable {
        /// 429 with `retry_after` (seconds) in the JSON body and `Retry-After` rounded up.
        case rateLimited(retryAfter: Double, global: Bool = false)
        /// Any status, with Discord's `{"code","message"}` body.
        case status(Int, code: Int = 0, message: String = "")
        /// The request takes effect (a message is posted, an edit shown), but its answer comes
        /// only after `seconds` — or never, when the fake stops first: a reply the platform took
        /// whose sender never heard so (the window a crash leaves).
        case slow(seconds: Double)
    }

    /// Starts a fake on an ephemeral loopback port and returns once it accepts connections.
    public static func start(botToken: String = "fake-discord-bot-token.abc.def", logger: Logger? = nil) async throws -> FakeDiscordAPI {
        let shared = FakeDiscordLocked<FakeDiscordLocked<FakeDiscordAPIState>?>(nil)
        let log = RequestLog<RecordedRequest>()
        let attachments = FakeDiscordLocked(FakeDiscordCDN())
        let stopFlag = FakeStopFlag()
        let responder = CallbackResponder<BasicRequestContext> { request, _ in
            let recorded = try await RecordedRequest.read(request)
            if recorded.path.hasPrefix("/attachments/") {
                let found = attachments.withLock { cdn in
                    cdn.requests += 1
                    return cdn.files[recorded.path]
                }
                guard recorded.method == "GET", let bytes = found else { return Response(status: .notFound) }
                return Response(status: .ok, headers: [.contentType: "audio/ogg"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
            }
            guard let state = shared.withLock({ $0 }) else { return Response(status: .serviceUnavailable) }
            let (name, answer) = state.withLock { $0.answer(recorded) }
            log.append(recorded, key: name)
            // Throws when the server stops, which cuts the answer off.
            if answer.delay > 0 { try await stopFlag.delay(answer.delay) }
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            for (field, value) in answer.headers {
                if let name = HTTPFields.Element.Name(field) { headers[name] = value }
            }
            return Response(status: .init(code: answer.status), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: answer.body.encoded())))
        }
        let (server, port) = try await FakeServerHandle.start(
            responder: responder, stopFlag: stopFlag, logger: logger ?? Logger(label: "FakeDiscordAPI", factory: { _ in SwiftLogNoOpLogHandler() }))
        let state = FakeDiscordLocked(FakeDiscordAPIState(botToken: botToken))
        shared.withLock { $0 = state }
        return FakeDiscordAPI(port: port, botToken: botToken, state: state, log: log, attachments: attachments, server: server)
    }

    public func stop() async {
        await server.stop()
    }

    /// Where `GET /gateway/bot` points.
    public func attach(gateway: FakeDiscordGateway) {
        state.withLock { $0.gatewayURL = gateway.url }
    }

    /// The `session_start_limit` `GET /gateway/bot` answers with.
    public func setSessionStartLimit(remaining: Int, resetAfterMilliseconds: Int) {
        state.withLock { $0.sessionStart = (remaining, resetAfterMilliseconds) }
    }

    /// A user `GET /users/{id}` knows.
    public func seed(user id: String, name: String, bot: Bool = false) {
        state.withLock { $0.users[id] = (name, bot) }
    }

    /// Gives `user` the server's role with Manage Server.
    public func makeGuildAdmin(_ user: String) {
        state.withLock { _ = $0.guildAdmins.insert(user) }
    }

    /// Puts a message into a channel as if a person had written it (for reactions).
    public func seed(message id: String, channel: String, content: String, author: String = "1200000000000000009") {
        state.withLock { $0.messages[id] = FakeDiscordMessage(id: id, channel: channel, content: content, author: author) }
    }

    /// Discord's rate limits, enforced when set (off by default): per-bucket windows with their
    /// `X-RateLimit-*` headers, and the global 50 a second; past them, 429.
    public var rateLimits: FakeDiscordRateLimits? {
        get { state.withLock { $0.rateLimits } }
        set { state.withLock { $0.rateLimits = newValue } }
    }

    /// The requests the rate limits refused with 429, oldest first: their route names, "(global)"
    /// after those the global limit refused.
    public func rateLimitRefusals() -> [String] {
        state.withLock { $0.refusals }
    }

    /// When the requests the rate limits refused arrived, oldest first.
    public func refusedArrivals() -> [ContinuousClock.Instant] {
        state.withLock { $0.requests.filter(\.refused).map(\.arrived) }
    }

    /// The most requests on routes the global limit counts that arrived in any `window` (less
    /// the limits' tolerance), refused ones excepted.
    public func maximumGlobalRate(window: Duration = .seconds(1)) -> Int {
        state.withLock { state in
            let span = window - (state.rateLimits?.tolerance ?? .zero)
            let times = state.requests.filter { !$0.refused && $0.route != FakeDiscordAPI.editOriginal && $0.route != FakeDiscordAPI.followup }
                .map(\.arrived).sorted()
            var (best, start) = (0, 0)
            for end in times.indices {
                while times[start].duration(to: times[end]) >= span { start += 1 }
                best = max(best, end - start + 1)
            }
            return best
        }
    }

    /// How long a create's `nonce` with `enforce_nonce` is remembered (Discord: "the past few
    /// minutes"; 2 minutes here).
    public var nonceWindow: Duration {
        get { state.withLock { $0.nonceWindow } }
        set { state.withLock { $0.nonceWindow = newValue } }
    }

    /// Makes `token`'s webhook answer 404 (code 10015) from now on, as after 15 minutes.
    public func expire(interactionToken token: String) {
        _ = state.withLock { $0.expiredTokens.insert(token) }
    }

    /// Answers the next `count` requests to `route` with `failure`.
    public func failNext(_ count: Int = 1, with failure: Failure, route: String) {
        state.withLock { state in
            for _ in 0..<max(0, count) { state.failures.append((route, failure)) }
        }
    }

    /// The next request filed under `route` (a name above), waiting for it; nil after a safety limit.
    public func next(_ route: String) async -> RecordedRequest? {
        await log.next(route)
    }

    /// Requests filed under `route` (every one when nil), oldest first; refused ones too.
    public func requests(_ route: String? = nil) -> [RecordedRequest] {
        state.withLock { state in state.requests.filter { route == nil || $0.route == route }.map(\.request) }
    }

    /// When the requests to `route` arrived, oldest first.
    public func arrivalTimes(_ route: String) -> [ContinuousClock.Instant] {
        state.withLock { state in state.requests.filter { $0.route == route }.map(\.arrived) }
    }

    /// Messages in channels, by id (seeded, posted and edited).
    public func message(_ id: String) -> FakeDiscordMessage? {
        state.withLock { $0.messages[id] }
    }

    /// Every message the fake keeps (seeded, posted and edited), in no particular order.
    public func messages() -> [FakeDiscordMessage] {
        state.withLock { Array($0.messages.values) }
    }

    /// The original response of the interaction whose token is `token`, as its last edit left
    /// it; nil while it is still Discord's "thinking…" (never edited).
    public func original(token: String) -> FakeDiscordMessage? {
        state.withLock { $0.originals[token] }
    }

    /// Every interaction's original response that was edited, by interaction token.
    public func originals() -> [String: FakeDiscordMessage] {
        state.withLock { $0.originals }
    }
}

/// The limits the fake enforces when `FakeDiscordAPI.rateLimits` is set: the buckets Discord
/// gives a bot's channel messages and an interaction's webhook, and its global limit.
public struct FakeDiscordRateLimits: Sendable, Hashable {
    /// Requests per window in one channel's bucket (creates and edits each have their own).
    public var channelMessages = 5
    public var channelWindow: Duration = .seconds(5)
    /// Requests per window on one interaction's webhook (edits of `@original`, follow-ups).
    public var webhook = 5
    public var webhookWindow: Duration = .seconds(2)
    /// Requests across the bot's routes per `globalWindow` (interaction webhooks are exempt).
    public var global = 50
    public var globalWindow: Duration = .seconds(1)
    /// Arrival jitter forgiven on the global window: it counts arrivals less than the window
    /// less this apart.
    public var tolerance: Duration = .milliseconds(50)

    public init() {}
}

/// A message the fake keeps.
public struct FakeDiscordMessage: Sendable, Hashable {
    public var id: String
    public var channel: String
    public var content: String
    public var author: String
    public var body: JSONValue = .null
}

/// A value behind a lock, shared by reference.
final class FakeDiscordLocked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) {
        mutex = Mutex(value)
    }

    func withLock<T>(_ body: (inout Value) -> T) -> T {
        mutex.withLock { body(&$0) }
    }
}

/// Starts a `FakeDiscordAPI`, runs `body` with it and stops it, also when `body` throws.
public func withFakeDiscordAPI<T>(
    isolation: isolated (any Actor)? = #isolation, _ body: (FakeDiscordAPI) async throws -> T
) async throws -> T {
    let fake = try await FakeDiscordAPI.start()
    do {
        let result = try await body(fake)
        await fake.stop()
        return result
    } catch {
        await fake.stop()
        throw error
    }
}

/// The fake CDN's attachments.
struct FakeDiscordCDN: Sendable {
    var files: [String: [UInt8]] = [:]
    var requests = 0
}
