public import Foundation
import Hummingbird
public import Logging
import NIOCore
public import RelayCore
import Synchronization

/// A fake of the Microsoft side of a Teams bot, built from the Bot Framework's REST API and
/// authentication documentation (and botframework-connector's `channel_validation.py` and
/// `microsoft_app_credentials.py`): a real HTTP server on 127.0.0.1 that is
///
/// - the OpenID metadata (`GET /v1/.well-known/openidconfiguration`: `issuer`, `jwks_uri`) and
///   its key set (`GET /v1/keys`: RSA keys with `endorsements`), signing with keys made here;
/// - the token endpoint (`POST /botframework.com/oauth2/v2.0/token`, the client-credentials
///   grant: a wrong secret is 401 `invalid_client`), issuing opaque bearer tokens;
/// - the Bot Connector under `serviceURL` (`/amer/`): `POST v3/conversations/{id}/activities[/{replyTo}]`
///   (201 `{"id"}`), `PUT …/activities/{id}`, `POST v3/conversations` (a personal chat), each
///   behind a token it issued (else 401). `rateLimitNext` answers 429 with `Retry-After`.
///
/// `activityToken(serviceURL:)` signs what the Bot Connector would send with an activity.
public final class FakeBotFramework: Sendable {
    public static let appID = "00000000-0000-4000-8000-0000000000a1"
    public static let appPassword = "fake~teams~app~password~0001"
    /// The bot's account in conversations.
    public static let botAccount = "28:" + appID
    public static let tenant = "11111111-2222-4333-8444-555555555555"
    public static let issuer = "https://api.botframework.com"

    public let url: String
    let state: FakeBotFrameworkLocked
    let signingKey: TestRSAKey
    private let server: FakeServerHandle

    public var openIDMetadataURL: String { url + "/v1/.well-known/openidconfiguration" }
    public var tokenURL: String { url + "/botframework.com/oauth2/v2.0/token" }
    /// The Bot Connector's base, as activities name it (with its trailing slash).
    public var serviceURL: String { url + "/amer/" }

    private init(url: String, state: FakeBotFrameworkLocked, signingKey: TestRSAKey, server: FakeServerHandle) {
        self.url = url
        self.state = state
        self.signingKey = signingKey
        self.server = server
    }

    public static func start(logger: Logger? = nil) async throws -> FakeBotFramework {
        let key = try TestRSAKey.shared(kid: "fake-bot-connector-key-1")
        let state = FakeBotFrameworkLocked()
        let base = Mutex<String>("")
        let stopFlag = FakeStopFlag()
        let responder = CallbackResponder<BasicRequestContext> { request, _ in
            let recorded = try await RecordedRequest.read(request)
            let response = Self.answer(recorded, base: base.withLock { $0 }, key: key, state: state)
            // Taken, but its answer held back: the window a crash leaves.
            if let seconds = state.withLock({ $0.takeHold(recorded, status: response.status.code) }) { try await stopFlag.delay(seconds) }
            return response
        }
        let (server, port) = try await FakeServerHandle.start(
            responder: responder, stopFlag: stopFlag, logger: logger ?? Logger(label: "FakeBotFramework", factory: { _ in SwiftLogNoOpLogHandler() }))
        let url = "http://127.0.0.1:\(port)"
        base.withLock { $0 = url }
        return FakeBotFramework(url: url, state: state, signingKey: key, server: server)
    }

    public func stop() async { await server.stop() }

    // MARK: What a test does

    /// Alice, the team and the conversations of the scenarios.
    public static let alice = "29:1alice-teams-user-id"
    public static let aliceAAD = "aaaaaaaa-0000-4000-8000-00000000a11c"
    public static let team = "19:team-general@thread.tacv2"
    public static let channel = "19:general@thread.tacv2"
    public static let personalChat = "a:1personal-chat-alice"

    /// A channel thread of its own for `name`.
    public static func thread(_ name: String) -> String {
        channel + ";messageid=" + String(name.filter { $0.isLetter || $0.isNumber }.prefix(24))
    }

    /// A message activity as the Bot Connector sends it: `text` from Alice, after a mention of
    /// the bot (`mentioning`), in a channel thread (`conversation`, by default the channel's
    /// first), or in her personal chat with the bot.
    public func message(
        _ text: String, conversation: String? = nil, personal: Bool = false, id: String = UUID().uuidString, mentioning: Bool = true,
        serviceURL: String? = nil
    ) -> JSONValue {
        var entities: [JSONValue] = []
        var text = text
        if mentioning && !personal {
            text = "<at>Rhea</at> " + text
            entities.append(["type": "mention", "text": "<at>Rhea</at>", "mentioned": ["id": .string(Self.botAccount), "name": "Rhea"]])
        }
        return [
            "type": "message", "id": .string(id), "timestamp": "2026-12-04T10:00:00.000Z", "serviceUrl": .string(serviceURL ?? self.serviceURL),
            "channelId": "msteams", "from": ["id": .string(Self.alice), "name": "Alice", "aadObjectId": .string(Self.aliceAAD)],
            "conversation": personal
                ? ["id": .string(Self.personalChat), "conversationType": "personal", "tenantId": .string(Self.tenant)]
                : [
                    "id": .string(conversation ?? Self.thread("1700000000001")), "conversationType": "channel", "isGroup": true,
                    "tenantId": .string(Self.tenant),
                ],
            "recipient": ["id": .string(Self.botAccount), "name": "Rhea"], "text": .string(text), "textFormat": "plain",
            "entities": .array(entities),
            "channelData": personal
                ? ["tenant": ["id": .string(Self.tenant)]]
                : [
                    "teamsChannelId": .string(Self.channel), "teamsTeamId": .string(Self.team), "channel": ["id": .string(Self.channel)],
                    "team": ["id": .string(Self.team)], "tenant": ["id": .string(Self.tenant)],
                ],
        ]
    }

    /// The token the Bot Connector sends with an activity for `serviceURL`: issued by the Bot
    /// Framework for the bot, valid five minutes from `now`. `claims` replaces any of them.
    public func activityToken(serviceURL: String? = nil, now: Date = Date(), claims: [String: JSONValue] = [:], key: TestRSAKey? = nil) -> String {
        var members: [String: JSONValue] = [
            "iss": .string(Self.issuer), "aud": .string(Self.appID), "serviceurl": .string(serviceURL ?? self.serviceURL),
            "nbf": .int(Int(now.timeIntervalSince1970) - 60), "exp": .int(Int(now.timeIntervalSince1970) + 300),
            "iat": .int(Int(now.timeIntervalSince1970) - 60),
        ]
        for (name, value) in claims { members[name] = value }
        return (key ?? signingKey).rs256(.object(members))
    }

    /// Signs with `header` instead (a wrong algorithm, an unknown key).
    public func token(header: JSONValue, now: Date = Date()) -> String {
        signingKey.rs256(
            ["iss": .string(Self.issuer), "aud": .string(Self.appID), "serviceurl": .string(serviceURL), "exp": .int(Int(now.timeIntervalSince1970) + 300)],
            header: header)
    }

    /// Publishes `key` too (a rotation), endorsed for `endorsements`.
    public func publish(_ key: TestRSAKey, endorsements: [String] = ["msteams"]) {
        state.withLock { $0.extraKeys.append(key.jwk(["endorsements": .array(endorsements.map(JSONValue.string))])) }
    }

    /// The next `count` connector calls answer `status` (429, or a 5xx) with `Retry-After: seconds`.
    public func rateLimitNext(_ count: Int, retryAfter seconds: Int = 1, status: Int = 429) {
        state.withLock {
            $0.rateLimitNext = count
            $0.retryAfter = seconds
            $0.refusalStatus = status
        }
    }

    /// Whether making a personal chat is refused (403), as Teams refuses it for someone who has
    /// not installed the app for themselves.
    public var refusesPersonalChats: Bool {
        get { state.withLock { $0.refusesPersonalChats } }
        set { state.withLock { $0.refusesPersonalChats = newValue } }
    }

    /// The next `times` successful connector calls of `method` (`POST` makes a message, `PUT`
    /// updates one) are taken — the message shows — but their HTTP answers are held `seconds`.
    /// With `when`, only requests it accepts (given their path and body) are held.
    public func holdNext(_ method: String, times: Int, seconds: Double, when: (@Sendable (String, JSONValue?) -> Bool)? = nil) {
        state.withLock {
            $0.holds[method, default: 0] += times
            $0.holdSeconds = seconds
            $0.holdWhen[method] = when
        }
    }

    /// The messages the bot has in `conversation` (all when nil), in the order they were made.
    public func messages(in conversation: String? = nil) -> [FakeTeamsMessage] {
        state.withLock { state in state.messages.filter { conversation == nil || $0.conversation == conversation } }
    }

    /// Every request, in order, as `(method path, request)`.
    public func requests() -> [(String, RecordedRequest)] { state.withLock { $0.requests } }

    /// How many times each of the key set and the metadata was fetched, and tokens granted.
    public var counts: (metadata: Int, keys: Int, tokens: Int) {
        state.withLock { ($0.metadataFetches, $0.keyFetches, $0.tokensGranted) }
    }

    /// The personal chat the bot made with `user`, if any.
    public func personalChat(with user: String) -> String? { state.withLock { $0.personalChats[user] } }

    // MARK: Routes

    static func answer(_ request: RecordedRequest, base: String, key: TestRSAKey, state: FakeBotFrameworkLocked) -> Response {
        let path = request.path
        state.withLock { $0.requests.append(("\(request.method) \(path)", request)) }
        if request.method == "GET", path == "/v1/.well-known/openidconfiguration" {
            state.withLock { $0.metadataFetches += 1 }
            return json(["issuer": .string(issuer), "jwks_uri": .string(base + "/v1/keys"), "id_token_signing_alg_values_supported": ["RS256"]])
        }
        if request.method == "GET", path == "/v1/keys" {
            let extra = state.withLock { state in
                state.keyFetches += 1
                return state.extraKeys
            }
            return json(["keys": .array([key.jwk(["endorsements": ["msteams", "webchat"]])] + extra)])
        }
        if request.method == "POST", path == "/botframework.com/oauth2/v2.0/token" {
            let form = FakeBotFrameworkState.form(request.rawBody)
            guard form["grant_type"] == "client_credentials", form["scope"] == "https://api.botframework.com/.default" else {
                return json(["error": "invalid_request", "error_description": "AADSTS900144: bad grant"], status: 400)
            }
            guard form["client_id"] == appID, form["client_secret"] == appPassword else {
                return json(["error": "invalid_client", "error_description": "AADSTS7000215: Invalid client secret provided."], status: 401)
            }
            let token = state.withLock { state in
                state.tokensGranted += 1
                let token = "fake-connector-token-\(state.tokensGranted)"
                state.tokens.insert(token)
                return token
            }
            return json(["token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599, "access_token": .string(token)])
        }
        guard path.hasPrefix("/amer/v3/") else { return json(["error": ["code": "NotFound", "message": "no such route"]], status: 404) }
        return state.withLock { $0.connector(request, path: String(path.dropFirst("/amer".count))) }
    }

    static func json(_ value: JSONValue, status: Int = 200) -> Response {
        Response(
            status: .init(code: status), headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: value.encoded())))
    }
}

/// One message the bot made, with every version of it (its updates).
public struct FakeTeamsMessage: Sendable, Hashable {
    public var id: String
    public var conversation: String
    public var replyTo: String?
    /// The activity as last sent (the first post, then each update).
    public var activity: JSONValue
    public var history: [JSONValue]
    /// When each version in `history` arrived.
    public var times: [Date]

    /// What a reader sees: the HTML text with its tags and entities undone, or a card's text
    /// runs, one line each.
    public var text: String { Self.seen(activity) }

    /// The card's buttons: each `Action.Submit`'s title and data.
    public var buttons: [(title: String, data: JSONValue)] {
        let actions = activity["attachments"]?.arrayValue?.first?["content"]?["actions"]?.arrayValue ?? []
        return actions.map { ($0["title"]?.stringValue ?? "", $0["data"] ?? .null) }
    }

    public static func == (lhs: FakeTeamsMessage, rhs: FakeTeamsMessage) -> Bool {
        lhs.id == rhs.id && lhs.conversation == rhs.conversation && lhs.history == rhs.history
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(id) }

    /// What a reader saw of each version.
    public var shownHistory: [String] { history.map(Self.seen) }

    /// The raw text of a version, escapes and all (a card's runs joined): where a live mention
    /// would show.
    public static func raw(_ activity: JSONValue) -> String {
        if let card = activity["attachments"]?.arrayValue?.first?["content"] {
            return (card["body"]?.arrayValue ?? []).map { ($0["inlines"]?.arrayValue ?? []).compactMap { $0["text"]?.stringValue }.joined() }
                .joined(separator: "\n")
        }
        return activity["text"]?.stringValue ?? ""
    }

    public static func seen(_ activity: JSONValue) -> String {
        if let card = activity["attachments"]?.arrayValue?.first?["content"] {
            let blocks = card["body"]?.arrayValue ?? []
            return blocks.map { block in (block["inlines"]?.arrayValue ?? []).compactMap { $0["text"]?.stringValue }.joined() }.joined(separator: "\n")
        }
        let html = activity["text"]?.stringValue ?? ""
        return html.replacingOccurrences(of: "<br>", with: "\n").replacingOccurrences(of: "<b>", with: "").replacingOccurrences(of: "</b>", with: "")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
    }
}

/// The fake's state, behind one lock.
final class FakeBotFrameworkLocked: Sendable {
    private let mutex = Mutex(FakeBotFrameworkState())

    func withLock<T>(_ body: (inout FakeBotFrameworkState) -> T) -> T { mutex.withLock { body(&$0) } }
}

struct FakeBotFrameworkState: Sendable {
    var requests: [(String, RecordedRequest)] = []
    var messages: [FakeTeamsMessage] = []
    var tokens: Set<String> = []
    var extraKeys: [JSONValue] = []
    var personalChats: [String: String] = [:]
    var refusesPersonalChats = false
    var metadataFetches = 0
    var keyFetches = 0
    var tokensGranted = 0
    var rateLimitNext = 0
    var retryAfter = 1
    var holds: [String: Int] = [:]
    var holdSeconds = 0.0
    var holdWhen: [String: @Sendable (String, JSONValue?) -> Bool] = [:]
    var refusalStatus = 429
    var nextID = 1_700_000_000_000

    /// How long to hold the answer to `request` (answered `status`), taking one of its holds.
    mutating func takeHold(_ request: RecordedRequest, status: Int) -> Double? {
        guard (200..<300).contains(status), request.path.hasPrefix("/amer/v3/conversations/"), request.body?["type"]?.stringValue == "message",
            let left = holds[request.method], left > 0, holdWhen[request.method]?(request.path, request.body) ?? true
        else { return nil }
        holds[request.method] = left - 1
        return holdSeconds
    }

    /// `/v3/…` of the Bot Connector.
    mutating func connector(_ request: RecordedRequest, path: String) -> Response {
        let auth = request.header("authorization") ?? ""
        guard auth.hasPrefix("Bearer "), tokens.contains(String(auth.dropFirst("Bearer ".count))) else {
            return FakeBotFramework.json(["error": ["code": "Unauthorized", "message": "Authorization has been denied for this request."]], status: 401)
        }
        if rateLimitNext > 0 {
            rateLimitNext -= 1
            var response = FakeBotFramework.json(
                ["error": ["code": refusalStatus == 429 ? "TooManyRequests" : "ServiceUnavailable", "message": "Try again later"]], status: refusalStatus)
            response.headers[.retryAfter] = String(retryAfter)
            return response
        }
        let parts = path.split(separator: "/").map { $0.removingPercentEncoding ?? String($0) }
        // v3 conversations
        if request.method == "POST", parts == ["v3", "conversations"] {
            if refusesPersonalChats {
                return FakeBotFramework.json(["error": ["code": "Forbidden", "message": "The bot is not installed for this user."]], status: 403)
            }
            guard let user = request.body?["members"]?.arrayValue?.first?["id"]?.stringValue else {
                return FakeBotFramework.json(["error": ["code": "BadArgument", "message": "members"]], status: 400)
            }
            let id = personalChats[user] ?? "a:personal-\(user)"
            personalChats[user] = id
            return FakeBotFramework.json(["id": .string(id)], status: 201)
        }
        guard parts.count >= 4, parts[0] == "v3", parts[1] == "conversations", parts[3] == "activities" else {
            return FakeBotFramework.json(["error": ["code": "NotFound", "message": "no such route"]], status: 404)
        }
        let conversation = parts[2]
        guard let activity = request.body, activity["type"]?.stringValue != nil else {
            return FakeBotFramework.json(["error": ["code": "BadArgument", "message": "activity"]], status: 400)
        }
        if activity["type"]?.stringValue == "typing" { return FakeBotFramework.json([:], status: 200) }
        switch (request.method, parts.count) {
        case ("POST", 4), ("POST", 5):
            nextID += 1
            let id = String(nextID)
            messages.append(
                FakeTeamsMessage(
                    id: id, conversation: conversation, replyTo: parts.count == 5 ? parts[4] : nil, activity: activity, history: [activity],
                    times: [request.receivedAt]))
            return FakeBotFramework.json(["id": .string(id)], status: 201)
        case ("PUT", 5):
            guard let index = messages.firstIndex(where: { $0.id == parts[4] && $0.conversation == conversation }) else {
                return FakeBotFramework.json(["error": ["code": "ActivityNotFoundInConversation", "message": "not found"]], status: 404)
            }
            messages[index].activity = activity
            messages[index].history.append(activity)
            messages[index].times.append(request.receivedAt)
            return FakeBotFramework.json(["id": .string(parts[4])], status: 200)
        default:
            return FakeBotFramework.json(["error": ["code": "BadArgument", "message": "method"]], status: 405)
        }
    }

    static func form(_ body: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1).map { String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "" }
            if kv.count == 2 { fields[kv[0]] = kv[1] }
        }
        return fields
    }
}

/// Runs `body` with a fake Bot Framework, stopped after.
public func withFakeBotFramework<T>(isolation: isolated (any Actor)? = #isolation, _ body: (FakeBotFramework) async throws -> T) async throws -> T {
    let fake = try await FakeBotFramework.start()
    do {
        let result = try await body(fake)
        await fake.stop()
        return result
    } catch {
        await fake.stop()
        throw error
    }
}
