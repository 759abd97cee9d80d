public import Foundation
import Hummingbird
public import Logging
import NIOCore
public import RelayCore
import Synchronization

/// A fake of the Google side of a Google Chat app, built from the Chat API's reference and
/// google-auth's `id_token` and `service_account` modules: a real HTTP server on 127.0.0.1 that is
///
/// - the published certificates (`GET /service_accounts/v1/metadata/x509/chat@system.gserviceaccount.com`
///   for Google Chat's own tokens, `GET /oauth2/v1/certs` for Google ID tokens): JSON maps of key
///   id to an x509 certificate in PEM, of keys made here;
/// - the token endpoint (`POST /token`, the JWT-bearer grant): the assertion must be signed by
///   the service account's key, for `aud` this endpoint and scope `chat.bot` (else 400
///   `invalid_grant`), and gets an opaque bearer token;
/// - the Chat API (`POST /v1/{space}/messages?requestId=…` — the same `requestId` again returns
///   the message it made — and `PATCH /v1/{message}?updateMask=…`), behind a token it issued.
///
/// A test plays Google Chat itself: it POSTs events to the relay signed by `chatToken` (or
/// `idToken`), and hands what the relay answered to `answered(_:to:)`, which shows it in the
/// space as Google Chat would.
public final class FakeGoogleChat: Sendable {
    public static let projectNumber = "314159265358"
    public static let serviceAccountEmail = "rhea-relay@rhea-tests.iam.gserviceaccount.com"
    public static let chatIssuer = "chat@system.gserviceaccount.com"
    public static let space = "spaces/AAAArheaTests"
    public static let alice = "users/112233445566778899001"
    public static let aliceDM = "spaces/DMalice0001"
    public static let app = "users/app"

    public let url: String
    let state: FakeGoogleChatLocked
    public let chatKey: TestRSAKey
    public let googleKey: TestRSAKey
    let accountKey: TestRSAKey
    private let server: FakeServerHandle

    public var chatCertsURL: String { url + "/service_accounts/v1/metadata/x509/chat@system.gserviceaccount.com" }
    public var googleCertsURL: String { url + "/oauth2/v1/certs" }
    public var tokenURL: String { url + "/token" }
    public var apiURL: String { url }

    private init(url: String, state: FakeGoogleChatLocked, chatKey: TestRSAKey, googleKey: TestRSAKey, accountKey: TestRSAKey, server: FakeServerHandle) {
        self.url = url
        self.state = state
        self.chatKey = chatKey
        self.googleKey = googleKey
        self.accountKey = accountKey
        self.server = server
    }

    public static func start(logger: Logger? = nil) async throws -> FakeGoogleChat {
        let chatKey = try TestRSAKey.shared(kid: "fake-chat-key-1")
        let googleKey = try TestRSAKey.shared(kid: "fake-google-key-1")
        let accountKey = try TestRSAKey.shared(kid: "fake-account-key-1")
        let state = FakeGoogleChatLocked()
        state.withLock { state in
            state.chatCerts = [chatKey.kid: chatKey.certificatePEM()]
            state.googleCerts = [googleKey.kid: googleKey.certificatePEM()]
        }
        let base = Mutex<String>("")
        let stopFlag = FakeStopFlag()
        let responder = CallbackResponder<BasicRequestContext> { request, _ in
            let recorded = try await RecordedRequest.read(request)
            let response = state.withLock { $0.answer(recorded, tokenURL: base.withLock { $0 } + "/token", accountKey: accountKey) }
            if let seconds = state.withLock({ $0.takeHold(recorded, status: response.status.code) }) { try await stopFlag.delay(seconds) }
            return response
        }
        let (server, port) = try await FakeServerHandle.start(
            responder: responder, stopFlag: stopFlag, logger: logger ?? Logger(label: "FakeGoogleChat", factory: { _ in SwiftLogNoOpLogHandler() }))
        let url = "http://127.0.0.1:\(port)"
        base.withLock { $0 = url }
        return FakeGoogleChat(url: url, state: state, chatKey: chatKey, googleKey: googleKey, accountKey: accountKey, server: server)
    }

    public func stop() async { await server.stop() }

    /// The service account's key file, as the Cloud console downloads it (its `token_uri` this
    /// fake's token endpoint).
    public var serviceAccountJSON: String {
        let fields: JSONValue = [
            "type": "service_account", "project_id": "rhea-tests", "private_key_id": .string(accountKey.kid), "private_key": .string(accountKey.privateKeyPEM),
            "client_email": .string(Self.serviceAccountEmail), "client_id": "100000000000000000001", "token_uri": .string(tokenURL),
        ]
        return String(decoding: fields.encoded(), as: UTF8.self)
    }

    /// The service account's public key as a certificate (what Google publishes for it).
    public var accountCertificatePEM: String { accountKey.certificatePEM() }

    // MARK: Tokens

    /// The token Google Chat sends with an event for a project-number audience: issued by
    /// `chat@system.gserviceaccount.com`, valid an hour from `now`. `claims` replaces any of them.
    public func chatToken(audience: String = FakeGoogleChat.projectNumber, now: Date = Date(), claims: [String: JSONValue] = [:], key: TestRSAKey? = nil)
        -> String
    {
        var members: [String: JSONValue] = [
            "iss": .string(Self.chatIssuer), "aud": .string(audience), "iat": .int(Int(now.timeIntervalSince1970) - 5),
            "exp": .int(Int(now.timeIntervalSince1970) + 3600),
        ]
        for (name, value) in claims { members[name] = value }
        return (key ?? chatKey).rs256(.object(members))
    }

    /// A Google ID token for `audience` (an endpoint URL), as Google Chat sends for an
    /// endpoint-URL audience: `email` Google Chat's unless given.
    public func idToken(audience: String, email: String = FakeGoogleChat.chatIssuer, now: Date = Date(), claims: [String: JSONValue] = [:]) -> String {
        var members: [String: JSONValue] = [
            "iss": "https://accounts.google.com", "aud": .string(audience), "azp": "113000000000000000000", "sub": "113000000000000000000",
            "email": .string(email), "email_verified": true, "iat": .int(Int(now.timeIntervalSince1970) - 5),
            "exp": .int(Int(now.timeIntervalSince1970) + 3600),
        ]
        for (name, value) in claims { members[name] = value }
        return googleKey.rs256(.object(members))
    }

    /// Publishes `key` too among Google Chat's certificates (a rotation).
    public func publish(_ key: TestRSAKey) {
        let pem = key.certificatePEM()
        state.withLock { $0.chatCerts[key.kid] = pem }
    }

    // MARK: Events

    /// A `MESSAGE` event from Alice: in the space (mentioning the app: `argumentText` is the text
    /// after the mention) in `thread` of `space` (the fake's own by default), or in her direct
    /// message with the app; a slash command when `slashCommand` names its id.
    public func message(
        _ text: String, thread: String? = nil, direct: Bool = false, slashCommand: Int? = nil, id: String = UUID().uuidString, type: String = "MESSAGE",
        space named: String? = nil
    ) -> JSONValue {
        let spaceName = direct ? Self.aliceDM : named ?? Self.space
        let space: JSONValue =
            direct
            ? ["name": .string(Self.aliceDM), "type": "DM", "spaceType": "DIRECT_MESSAGE", "singleUserBotDm": true]
            : ["name": .string(spaceName), "type": "ROOM", "spaceType": "SPACE", "displayName": "Rhea tests"]
        let user: JSONValue = ["name": .string(Self.alice), "displayName": "Alice", "type": "HUMAN", "domainId": "d0"]
        var shownText = text
        var message: [String: JSONValue] = [
            "name": .string("\(spaceName)/messages/\(id)"), "sender": user, "createTime": "2026-12-04T10:00:00.000000Z",
            "thread": ["name": .string(thread ?? "\(spaceName)/threads/\(id)")], "space": space, "argumentText": .string(" " + text),
        ]
        if let slashCommand {
            message["slashCommand"] = ["commandId": .string(String(slashCommand))]
        } else if !direct {
            shownText = "@Rhea " + text
            message["annotations"] = [
                [
                    "type": "USER_MENTION", "startIndex": 0, "length": 5,
                    "userMention": ["user": ["name": .string(Self.app), "displayName": "Rhea", "type": "BOT"], "type": "MENTION"],
                ]
            ]
        }
        if slashCommand == nil, direct { message["argumentText"] = .string(text) }
        message["text"] = .string(shownText)
        return [
            "type": .string(type), "eventTime": "2026-12-04T10:00:00.000000Z", "space": space, "user": user, "message": .object(message),
        ]
    }

    /// A `CARD_CLICKED` event: Alice clicked a button whose action is `function` with `parameters`,
    /// on a message in `thread`.
    public func click(_ function: String, parameters: [String: String], thread: String? = nil) -> JSONValue {
        let user: JSONValue = ["name": .string(Self.alice), "displayName": "Alice", "type": "HUMAN"]
        let list: [JSONValue] = parameters.sorted { $0.key < $1.key }.map { ["key": .string($0.key), "value": .string($0.value)] }
        return [
            "type": "CARD_CLICKED", "space": ["name": .string(Self.space), "type": "ROOM", "spaceType": "SPACE"], "user": user,
            "message": ["name": .string("\(Self.space)/messages/clicked"), "thread": ["name": .string(thread ?? "\(Self.space)/threads/clicked")]],
            "action": ["actionMethodName": .string(function), "parameters": .array(list)],
            "common": ["invokedFunction": .string(function), "parameters": .object(parameters.mapValues(JSONValue.string))],
        ]
    }

    /// What the relay answered `event` with, shown as Google Chat shows it: a message in the
    /// event's space and thread (none for `{}`).
    public func answered(_ answer: JSONValue, to event: JSONValue) {
        guard let message = answer.objectValue, message["text"] != nil || message["cardsV2"] != nil else { return }
        let space = event["space"]?["name"]?.stringValue ?? Self.space
        let thread = event["message"]?["thread"]?["name"]?.stringValue
        state.withLock { _ = $0.add(answer, space: space, thread: thread, viaEvent: true, at: Date()) }
    }

    // MARK: What a test reads

    /// The app's messages in `space` (all when nil), in the order they were made.
    public func messages(in space: String? = nil) -> [FakeGoogleChatMessage] {
        state.withLock { state in state.messages.filter { space == nil || $0.space == space } }
    }

    /// Every request, in order, as `(method path, request)`.
    public func requests() -> [(String, RecordedRequest)] { state.withLock { $0.requests } }

    /// How many times the certificates were fetched, and tokens granted.
    public var counts: (certs: Int, tokens: Int) { state.withLock { ($0.certFetches, $0.tokensGranted) } }

    /// The next `count` Chat API calls answer `status` (429, or a 5xx) with `Retry-After: seconds`.
    public func rateLimitNext(_ count: Int, retryAfter seconds: Int = 1, status: Int = 429) {
        state.withLock {
            $0.rateLimitNext = count
            $0.retryAfter = seconds
            $0.refusalStatus = status
        }
    }

    /// The next `times` successful Chat API calls of `method` (`POST` makes a message, `PATCH`
    /// edits one) are taken — the message shows — but their HTTP answers are held `seconds`.
    public func holdNext(_ method: String, times: Int, seconds: Double) {
        state.withLock {
            $0.holds[method, default: 0] += times
            $0.holdSeconds = seconds
        }
    }

    /// The fields of a form body (`a=1&b=2`).
    public static func form(_ body: String) -> [String: String] { FakeBotFrameworkState.form(body) }

    /// Makes the token endpoint refuse the key (a deleted key).
    public func revokeKey() { state.withLock { $0.keyRevoked = true } }
}

/// One message the app made, with every version of it (its patches).
public struct FakeGoogleChatMessage: Sendable, Hashable {
    public var name: String
    public var space: String
    public var thread: String?
    /// The `Message` as last sent.
    public var body: JSONValue
    public var history: [JSONValue]
    public var times: [Date]
    /// Came back as an event's answer rather than through the API.
    public var viaEvent: Bool

    /// Only this user sees it (`privateMessageViewer`).
    public var viewer: String? { body["privateMessageViewer"]?["name"]?.stringValue }

    /// What a reader sees: the text with the app's word joiners out, or the card's header and
    /// paragraphs with the HTML undone, one line each.
    public var text: String { Self.seen(body) }

    public var shownHistory: [String] { history.map(Self.seen) }

    /// The card's buttons: each one's text, function and parameters.
    public var buttons: [(text: String, function: String, parameters: [String: String])] {
        let sections = body["cardsV2"]?.arrayValue?.first?["card"]?["sections"]?.arrayValue ?? []
        return sections.flatMap { ($0["widgets"]?.arrayValue ?? []).flatMap { $0["buttonList"]?["buttons"]?.arrayValue ?? [] } }.map { button in
            let action = button["onClick"]?["action"]
            var parameters: [String: String] = [:]
            for parameter in action?["parameters"]?.arrayValue ?? [] {
                if let key = parameter["key"]?.stringValue { parameters[key] = parameter["value"]?.stringValue ?? "" }
            }
            return (button["text"]?.stringValue ?? "", action?["function"]?.stringValue ?? "", parameters)
        }
    }

    public static func == (lhs: FakeGoogleChatMessage, rhs: FakeGoogleChatMessage) -> Bool { lhs.name == rhs.name && lhs.history == rhs.history }

    public func hash(into hasher: inout Hasher) { hasher.combine(name) }

    /// The text as sent, escapes and all (a card's paragraphs joined): where a live mention would show.
    public static func raw(_ body: JSONValue) -> String {
        if let card = body["cardsV2"]?.arrayValue?.first?["card"] {
            var lines: [String] = []
            if let title = card["header"]?["title"]?.stringValue { lines.append(title) }
            for section in card["sections"]?.arrayValue ?? [] {
                for widget in section["widgets"]?.arrayValue ?? [] {
                    if let text = widget["textParagraph"]?["text"]?.stringValue { lines.append(text) }
                }
            }
            return lines.joined(separator: "\n")
        }
        return body["text"]?.stringValue ?? ""
    }

    public static func seen(_ body: JSONValue) -> String {
        if body["cardsV2"] != nil {
            var text = raw(body).replacingOccurrences(of: "<br>", with: "\n")
            while let open = text.range(of: "<font"), let close = text.range(of: ">", range: open.upperBound..<text.endIndex) {
                text.removeSubrange(open.lowerBound..<close.upperBound)
            }
            return text.replacingOccurrences(of: "</font>", with: "").replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
                .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&amp;", with: "&")
        }
        let text = (body["text"]?.stringValue ?? "").replacingOccurrences(of: "\u{2060}", with: "")
        // `*bold*` as Google Chat shows it: the stars are markup.
        if text.hasPrefix("*"), let end = text.dropFirst().firstIndex(of: "*") {
            return String(text[text.index(after: text.startIndex)..<end]) + text[text.index(after: end)...]
        }
        return text
    }
}

/// The fake's state, behind one lock.
final class FakeGoogleChatLocked: Sendable {
    private let mutex = Mutex(FakeGoogleChatState())

    func withLock<T>(_ body: (inout FakeGoogleChatState) -> T) -> T { mutex.withLock { body(&$0) } }
}

struct FakeGoogleChatState: Sendable {
    var requests: [(String, RecordedRequest)] = []
    var messages: [FakeGoogleChatMessage] = []
    var byRequestID: [String: String] = [:]
    var tokens: Set<String> = []
    var chatCerts: [String: String] = [:]
    var googleCerts: [String: String] = [:]
    var certFetches = 0
    var tokensGranted = 0
    var rateLimitNext = 0
    var retryAfter = 1
    var refusalStatus = 429
    var holds: [String: Int] = [:]
    var holdSeconds = 0.0
    var keyRevoked = false
    var nextID = 1

    @discardableResult
    mutating func add(_ body: JSONValue, space: String, thread: String?, viaEvent: Bool, at: Date) -> String {
        nextID += 1
        let name = "\(space)/messages/m\(nextID)"
        var shown = body
        if var object = shown.objectValue {
            object["name"] = .string(name)
            shown = .object(object)
        }
        messages.append(FakeGoogleChatMessage(name: name, space: space, thread: thread, body: shown, history: [shown], times: [at], viaEvent: viaEvent))
        return name
    }

    mutating func takeHold(_ request: RecordedRequest, status: Int) -> Double? {
        guard (200..<300).contains(status), request.path.hasPrefix("/v1/spaces/"), let left = holds[request.method], left > 0 else { return nil }
        holds[request.method] = left - 1
        return holdSeconds
    }

    mutating func answer(_ request: RecordedRequest, tokenURL: String, accountKey: TestRSAKey) -> Response {
        let path = request.path
        requests.append(("\(request.method) \(path)", request))
        if request.method == "GET", path == "/service_accounts/v1/metadata/x509/chat@system.gserviceaccount.com" {
            certFetches += 1
            return Self.json(.object(chatCerts.mapValues(JSONValue.string)))
        }
        if request.method == "GET", path == "/oauth2/v1/certs" {
            certFetches += 1
            return Self.json(.object(googleCerts.mapValues(JSONValue.string)))
        }
        if request.method == "POST", path == "/token" { return token(request, tokenURL: tokenURL, accountKey: accountKey) }
        guard path.hasPrefix("/v1/spaces/") else { return Self.error(404, "NOT_FOUND", "no such route") }
        let auth = request.header("authorization") ?? ""
        guard auth.hasPrefix("Bearer "), tokens.contains(String(auth.dropFirst("Bearer ".count))) else {
            return Self.error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
        }
        if rateLimitNext > 0 {
            rateLimitNext -= 1
            var response = Self.error(refusalStatus, refusalStatus == 429 ? "RESOURCE_EXHAUSTED" : "UNAVAILABLE", "Try again later")
            response.headers[.retryAfter] = String(retryAfter)
            return response
        }
        let query = FakeBotFrameworkState.form(request.query ?? "")
        let resource = String(path.dropFirst("/v1/".count))
        let parts = resource.split(separator: "/").map(String.init)
        guard let body = request.body, body.objectValue != nil else { return Self.error(400, "INVALID_ARGUMENT", "no message") }
        if request.method == "POST", parts.count == 3, parts[2] == "messages" {
            let space = parts[0] + "/" + parts[1]
            if let requestID = query["requestId"], let made = byRequestID[requestID], let message = messages.first(where: { $0.name == made }) {
                return Self.json(message.body)
            }
            guard body["text"] != nil || body["cardsV2"] != nil else { return Self.error(400, "INVALID_ARGUMENT", "Message cannot be empty.") }
            let name = add(body, space: space, thread: body["thread"]?["name"]?.stringValue, viaEvent: false, at: request.receivedAt)
            if let requestID = query["requestId"] { byRequestID[requestID] = name }
            return Self.json(messages.last?.body ?? [:])
        }
        if request.method == "PATCH", parts.count == 4, parts[2] == "messages" {
            guard let index = messages.firstIndex(where: { $0.name == resource }) else { return Self.error(404, "NOT_FOUND", "Message not found.") }
            let mask = Set((query["updateMask"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            guard !mask.isEmpty, mask.isSubset(of: ["text", "cardsV2", "cards_v2", "attachment", "accessoryWidgets", "*"]) else {
                return Self.error(400, "INVALID_ARGUMENT", "Invalid update mask.")
            }
            guard messages[index].viewer == nil else { return Self.error(400, "INVALID_ARGUMENT", "Private messages cannot be updated.") }
            var updated = messages[index].body.objectValue ?? [:]
            for field in mask {
                let key = field == "cards_v2" ? "cardsV2" : field
                updated[key] = body[key]
            }
            updated = updated.filter { $0.value != .null }
            messages[index].body = .object(updated)
            messages[index].history.append(.object(updated))
            messages[index].times.append(request.receivedAt)
            return Self.json(.object(updated))
        }
        return Self.error(404, "NOT_FOUND", "no such route")
    }

    /// The JWT-bearer grant, as Google's token endpoint checks it.
    mutating func token(_ request: RecordedRequest, tokenURL: String, accountKey: TestRSAKey) -> Response {
        let form = FakeBotFrameworkState.form(request.rawBody)
        guard form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer", let assertion = form["assertion"] else {
            return Self.json(["error": "unsupported_grant_type", "error_description": "Invalid grant_type: "], status: 400)
        }
        let claims = TestRSAKey.claims(of: assertion)
        guard !keyRevoked, accountKey.verifies(assertion) else {
            return Self.json(["error": "invalid_grant", "error_description": "Invalid JWT Signature."], status: 400)
        }
        let now = Date().timeIntervalSince1970
        // google-auth writes Google's canonical endpoint as `aud`, wherever it POSTs the grant.
        let audiences = ["https://oauth2.googleapis.com/token", tokenURL]
        guard claims?["iss"]?.stringValue == FakeGoogleChat.serviceAccountEmail, audiences.contains(claims?["aud"]?.stringValue ?? ""),
            claims?["scope"]?.stringValue == "https://www.googleapis.com/auth/chat.bot", let exp = claims?["exp"]?.doubleValue, exp > now,
            let iat = claims?["iat"]?.doubleValue, iat <= now + 60, exp - iat <= 3600
        else {
            return Self.json(["error": "invalid_grant", "error_description": "Invalid JWT: claims."], status: 400)
        }
        tokensGranted += 1
        let token = "ya29.fake-chat-token-\(tokensGranted)"
        tokens.insert(token)
        return Self.json(["access_token": .string(token), "expires_in": 3599, "token_type": "Bearer"])
    }

    static func json(_ value: JSONValue, status: Int = 200) -> Response {
        Response(
            status: .init(code: status), headers: [.contentType: "application/json; charset=UTF-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: value.encoded())))
    }

    static func error(_ code: Int, _ status: String, _ message: String) -> Response {
        json(["error": ["code": .int(code), "message": .string(message), "status": .string(status)]], status: code)
    }
}

/// Runs `body` with a fake Google Chat, stopped after.
public func withFakeGoogleChat<T>(isolation: isolated (any Actor)? = #isolation, _ body: (FakeGoogleChat) async throws -> T) async throws -> T {
    let fake = try await FakeGoogleChat.start()
    do {
        let result = try await body(fake)
        await fake.stop()
        return result
    } catch {
        await fake.stop()
        throw error
    }
}
