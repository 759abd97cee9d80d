import Foundation
import RelayCore

/// What a `FakeSlackWebAPI` remembers and is told.
struct FakeSlackWebAPIState: Sendable {
    struct ScriptedFailure: Sendable {
        /// The path it applies to; nil for any.
        var path: String?
        var failure: FakeSlackFailure
        /// Matching requests still to answer normally before this failure applies.
        var skip = 0
    }

    let botToken: String
    let appToken: String
    /// `http://127.0.0.1:<port>`, for the response URLs it hands out.
    let baseURL: String

    var requests: [RecordedRequest] = []
    /// Private files (audio clips) by path, served under `/files-pri/…` to the bot token.
    var files: [String: [UInt8]] = [:]
    /// When each of `requests` arrived (same order), for tests of pacing and `Retry-After`.
    var arrivals: [ContinuousClock.Instant] = []
    var failures: [ScriptedFailure] = []
    var messages: [FakeSlackMessage] = []
    /// Members `users.info` knows, by id.
    var users: [String: FakeSlackUser] = [:]
    /// Messages posted so far; numbers the `ts`s.
    var posted = 0
    /// Response URL ids handed out, with how often each was used.
    var responseURLUses: [String: Int] = [:]
    /// What each response URL's posts left for people to see, by id, oldest first.
    var responseMessages: [String: [FakeSlackResponseMessage]] = [:]
    var expiredResponseURLs: Set<String> = []
    var responseURLsIssued = 0
    /// Where `apps.connections.open` points.
    var socketMode: FakeSocketModeServer?

    init(botToken: String, appToken: String, baseURL: String) {
        self.botToken = botToken
        self.appToken = appToken
        self.baseURL = baseURL
    }

    /// Records `request` and decides the answer.
    mutating func answer(_ request: RecordedRequest) -> FakeSlackReply {
        requests.append(request)
        arrivals.append(.now)
        let path = request.path
        if path.hasPrefix("/files-pri/") {
            // Slack serves private files to a request with a token that may read them; without
            // one it answers a sign-in page.
            guard request.method == "GET", request.header("authorization") == "Bearer \(botToken)" else {
                return FakeSlackReply(status: 200, contentType: "text/html", body: Array("<html>Sign in to Slack</html>".utf8))
            }
            guard let bytes = files[path] else { return FakeSlackReply(status: 404, contentType: "text/plain", body: Array("Not found".utf8)) }
            return FakeSlackReply(status: 200, contentType: "audio/webm", body: bytes)
        }
        let isResponseURL = path.hasPrefix("/response/")
        guard request.method == "POST" else {
            return .json(["ok": false, "error": "method_not_allowed"], status: 405)
        }
        guard isResponseURL || FakeSlackWebAPI.methods.contains(path) else {
            return .json(["ok": false, "error": "unknown_method"], status: 404)
        }
        var delay = 0.0
        if let index = failures.firstIndex(where: { $0.path == nil || $0.path == path }) {
            if failures[index].skip > 0 {
                failures[index].skip -= 1
            } else {
                switch failures.remove(at: index).failure {
                case .rateLimited(let retryAfter):
                    var reply = FakeSlackReply.json(["ok": false, "error": "ratelimited"], status: 429)
                    reply.retryAfter = retryAfter
                    return reply
                case .status(let status):
                    return FakeSlackReply(status: status, contentType: "text/plain", body: Array("HTTP \(status)".utf8))
                case .error(let code):
                    return .json(["ok": false, "error": .string(code)])
                case .malformed:
                    return FakeSlackReply(status: 200, contentType: "text/html", body: Array("<html>oops</html>".utf8))
                case .slow(let seconds):
                    delay = seconds
                }
            }
        }
        var reply = isResponseURL ? respond(request) : call(request)
        reply.delay = delay
        return reply
    }

    // MARK: - Web API methods

    private mutating func call(_ request: RecordedRequest) -> FakeSlackReply {
        let method = String(request.path.dropFirst("/api/".count))
        let wanted = method == "apps.connections.open" ? appToken : botToken
        let other = method == "apps.connections.open" ? botToken : appToken
        switch Self.bearer(request.header("authorization")) {
        case nil: return .error("not_authed")
        case wanted: break
        case other: return .error("not_allowed_token_type")
        default: return .error("invalid_auth")
        }
        if method == "apps.connections.open" {
            guard let socketMode else { return .error("socket_mode_not_enabled") }
            return .json(["ok": true, "url": .string(socketMode.makeConnectionURL())])
        }
        if method == "conversations.replies" { return replies(Self.form(request.rawBody)) }
        if method == "users.info" { return userInfo(Self.form(request.rawBody)) }
        if method == "auth.test" {
            return .json([
                "ok": true, "team": "Fake workspace", "user": "rhea", "team_id": "T0FAKE", "user_id": .string(FakeSlackWebAPI.botUserID),
                "bot_id": .string(FakeSlackWebAPI.botID),
            ])
        }
        guard let body = request.body else { return .error("invalid_json") }
        guard case .object = body else { return .error("invalid_arguments") }
        switch body["channel"] {
        case nil, .null, .string(""): return .error("channel_not_found")
        case .string: break
        default: return .error("invalid_arguments")
        }
        if let blocks = body["blocks"], blocks.arrayValue == nil { return .error("invalid_blocks") }
        for key in ["text", "thread_ts", "ts", "user"] {
            if let value = body[key], value.stringValue == nil { return .error("invalid_arguments") }
        }
        let text = body["text"]?.stringValue ?? ""
        if text.isEmpty, body["blocks"]?.arrayValue?.isEmpty != false { return .error("no_text") }
        switch method {
        case "chat.postMessage": return post(body, text: text, ephemeralUser: nil)
        case "chat.postEphemeral":
            guard let user = body["user"]?.stringValue, !user.isEmpty else { return .error("user_not_found") }
            return post(body, text: text, ephemeralUser: user)
        default: return update(body, text: text)
        }
    }

    /// `conversations.replies`: the thread `ts` belongs to (its parent first), from a form body
    /// as Slack's read methods take it, `limit` messages a page (Slack's default and most: 1000).
    /// A page with more after it says `has_more` and gives `response_metadata.next_cursor`,
    /// which the next request passes as `cursor`.
    private func replies(_ form: [String: String]) -> FakeSlackReply {
        guard let channel = form["channel"], !channel.isEmpty else { return .error("channel_not_found") }
        guard let ts = form["ts"], !ts.isEmpty else { return .error("invalid_arguments") }
        let inChannel = messages.filter { $0.channel == channel && $0.ephemeralUser == nil }
        guard let target = inChannel.first(where: { $0.ts == ts }) else { return .error("thread_not_found") }
        let parentTS = target.threadTS ?? target.ts
        // The parent first, as Slack answers, whatever the ts of what the fake posted.
        let thread = inChannel.filter { $0.ts == parentTS || $0.threadTS == parentTS }.sorted {
            ($0.ts == parentTS ? 0 : 1, $0.ts) < ($1.ts == parentTS ? 0 : 1, $1.ts)
        }
        let limit = min(1000, max(1, form["limit"].flatMap { Int($0) } ?? 1000))
        var start = 0
        if let cursor = form["cursor"], !cursor.isEmpty {
            guard let from = Self.cursorTS(cursor), let index = thread.firstIndex(where: { $0.ts != parentTS && $0.ts >= from }) else {
                return .error("invalid_cursor")
            }
            start = index
        }
        let end = min(thread.count, start + limit)
        let parent = thread.first { $0.ts == parentTS }
        let replies = thread.filter { $0.ts != parentTS }
        let items: [JSONValue] = thread[start..<end].map { message in
            var item: [String: JSONValue] = ["type": "message", "ts": .string(message.ts), "text": .string(message.text)]
            if let user = message.user { item["user"] = .string(user) }
            if let files = message.files { item["files"] = files }
            if message.user == FakeSlackWebAPI.botUserID { item["bot_id"] = .string(FakeSlackWebAPI.botID) }
            if message.ts == parentTS, !replies.isEmpty {
                // A parent with replies carries its thread's summary, and its own ts as thread_ts.
                item["thread_ts"] = .string(parentTS)
                item["reply_count"] = .int(replies.count)
                item["reply_users_count"] = .int(Set(replies.compactMap(\.user)).count)
                item["latest_reply"] = .string(replies.last?.ts ?? parentTS)
            } else if let threadTS = message.threadTS {
                item["thread_ts"] = .string(threadTS)
                if let parentUser = parent?.user { item["parent_user_id"] = .string(parentUser) }
            }
            return .object(item)
        }
        var answer: [String: JSONValue] = ["ok": true, "messages": .array(items), "has_more": .bool(end < thread.count)]
        if end < thread.count {
            answer["response_metadata"] = ["next_cursor": .string(Self.cursor(from: thread[end].ts))]
        }
        return .json(.object(answer))
    }

    /// A cursor in Slack's style, base64 of `next_ts:<ts>`: where the next page starts.
    static func cursor(from ts: String) -> String {
        Data("next_ts:\(ts)".utf8).base64EncodedString()
    }

    static func cursorTS(_ cursor: String) -> String? {
        guard let data = Data(base64Encoded: cursor) else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        guard text.hasPrefix("next_ts:") else { return nil }
        return String(text.dropFirst("next_ts:".count))
    }

    /// `users.info`: the seeded member, in Slack's user object.
    private func userInfo(_ form: [String: String]) -> FakeSlackReply {
        guard let id = form["user"], let user = users[id] else { return .error("user_not_found") }
        return .json(["ok": true, "user": user.json])
    }

    /// A form body's fields (`+` is a space, `%XX` a byte).
    static func form(_ body: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            if let key = parts.first { fields[key] = parts.count > 1 ? parts[1] : "" }
        }
        return fields
    }

    private mutating func post(_ body: JSONValue, text: String, ephemeralUser: String?) -> FakeSlackReply {
        let channel = body["channel"]?.stringValue ?? ""
        posted += 1
        let ts = Self.ts(posted)
        let (stored, truncated) = Self.truncated(text)
        let message = FakeSlackMessage(
            channel: channel, ts: ts, text: stored, blocks: body["blocks"], threadTS: body["thread_ts"]?.stringValue,
            ephemeralUser: ephemeralUser, user: FakeSlackWebAPI.botUserID)
        messages.append(message)
        var answer: [String: JSONValue]
        if ephemeralUser != nil {
            answer = ["ok": true, "message_ts": .string(ts)]
        } else {
            var posted: [String: JSONValue] = [
                "type": "message", "subtype": "bot_message", "text": .string(stored), "ts": .string(ts),
                "user": .string(FakeSlackWebAPI.botUserID), "bot_id": .string(FakeSlackWebAPI.botID),
            ]
            if let blocks = message.blocks { posted["blocks"] = blocks }
            if let threadTS = message.threadTS { posted["thread_ts"] = .string(threadTS) }
            answer = ["ok": true, "channel": .string(channel), "ts": .string(ts), "message": .object(posted)]
        }
        if truncated { Self.warn(&answer) }
        return .json(.object(answer))
    }

    private mutating func update(_ body: JSONValue, text: String) -> FakeSlackReply {
        let channel = body["channel"]?.stringValue ?? ""
        guard let ts = body["ts"]?.stringValue,
            let index = messages.firstIndex(where: { $0.channel == channel && $0.ts == ts && $0.ephemeralUser == nil })
        else { return .error("message_not_found") }
        let (stored, truncated) = Self.truncated(text)
        messages[index].text = stored
        if let blocks = body["blocks"] { messages[index].blocks = blocks }
        messages[index].updates += 1
        var answer: [String: JSONValue] = [
            "ok": true, "channel": .string(channel), "ts": .string(ts), "text": .string(stored),
            "message": ["text": .string(stored), "user": .string(FakeSlackWebAPI.botUserID)],
        ]
        if truncated { Self.warn(&answer) }
        return .json(.object(answer))
    }

    // MARK: - response_url

    mutating func makeResponseURL() -> String {
        responseURLsIssued += 1
        let id = "T0FAKE/\(1000 + responseURLsIssued)/r\(responseURLsIssued)"
        responseURLUses[id] = 0
        return "\(baseURL)/response/\(id)"
    }

    mutating func expire(responseURL: String) {
        if let id = Self.responseID(responseURL) { expiredResponseURLs.insert(id) }
    }

    private mutating func respond(_ request: RecordedRequest) -> FakeSlackReply {
        let id = String(request.path.dropFirst("/response/".count))
        guard let uses = responseURLUses[id], !expiredResponseURLs.contains(id) else {
            return .json(["ok": false, "error": "expired_url"], status: 404)
        }
        // Slack allows 5 responses per response_url.
        guard uses < 5 else { return .json(["ok": false, "error": "used_url"], status: 404) }
        guard let body = request.body, case .object = body else {
            return .json(["ok": false, "error": "invalid_payload"], status: 400)
        }
        responseURLUses[id] = uses + 1
        // What people see: `replace_original` puts the post in place of the message the URL's
        // last post made (or adds it, when there is none yet); `delete_original` removes it.
        let shown = FakeSlackResponseMessage(
            text: body["text"]?.stringValue ?? "", blocks: body["blocks"], isEphemeral: body["response_type"]?.stringValue != "in_channel")
        var list = responseMessages[id] ?? []
        if body["delete_original"]?.boolValue == true {
            if !list.isEmpty { list.removeLast() }
        } else if body["replace_original"]?.boolValue == true, let last = list.indices.last {
            list[last] = FakeSlackResponseMessage(
                text: shown.text, blocks: shown.blocks, isEphemeral: shown.isEphemeral, replacements: list[last].replacements + 1)
        } else {
            list.append(shown)
        }
        responseMessages[id] = list
        return .json(["ok": true])
    }

    static func responseID(_ url: String) -> String? {
        guard let range = url.range(of: "/response/") else { return nil }
        return String(url[range.upperBound...])
    }

    // MARK: - Helpers

    /// `Bearer xoxb-…` → `xoxb-…`; nil when absent or empty.
    static func bearer(_ header: String?) -> String? {
        guard let header, header.hasPrefix("Bearer ") else { return nil }
        let token = String(header.dropFirst("Bearer ".count))
        return token.isEmpty ? nil : token
    }

    /// `1700000000.000100`, `1700000000.000200`…: increasing, in Slack's shape.
    static func ts(_ number: Int) -> String {
        let micros = number * 100
        let fraction = String(micros % 1_000_000)
        return "\(1_700_000_000 + micros / 1_000_000).\(String(repeating: "0", count: 6 - fraction.count))\(fraction)"
    }

    /// Slack cuts text above 40 000 characters and says so with a warning.
    static func truncated(_ text: String) -> (String, Bool) {
        text.count > 40_000 ? (String(text.prefix(40_000)), true) : (text, false)
    }

    static func warn(_ answer: inout [String: JSONValue]) {
        answer["warning"] = "message_truncated"
        answer["response_metadata"] = ["warnings": ["message_truncated"]]
    }
}

/// One answer of `FakeSlackWebAPI`.
struct FakeSlackReply: Sendable {
    var status: Int
    var contentType: String
    var body: [UInt8]
    var retryAfter: Int?
    var delay = 0.0

    init(status: Int, contentType: String, body: [UInt8], retryAfter: Int? = nil) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.retryAfter = retryAfter
    }

    static func json(_ value: JSONValue, status: Int = 200) -> FakeSlackReply {
        FakeSlackReply(status: status, contentType: "application/json; charset=utf-8", body: value.encoded())
    }

    /// Slack's usual refusal: HTTP 200 with `ok: false`.
    static func error(_ code: String) -> FakeSlackReply {
        .json(["ok": false, "error": .string(code)])
    }
}
