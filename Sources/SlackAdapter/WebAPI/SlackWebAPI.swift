public import RelayCore
public import RelayPlatform

/// Slack's Web API as the adapter sees it: one primitive, with typed helpers in extensions
/// (`postMessage`, `update`, `postEphemeral`, `respond(to:body:)`; `threadReplies`,
/// `message(channel:ts:)`, `userInfo(user:)`; `openSocketModeConnection(appToken:)`), so a test
/// double implements a single method.
///
/// `SlackWebClient` is the implementation over HTTP.
public protocol SlackWebAPI: Sendable {
    /// Sends `request` and returns Slack's answer, a JSON object that said `"ok": true`
    /// (`{}` for a `response_url` that answered with plain text).
    ///
    /// - Throws: a `SlackAPIError` for every failure, `ok: false` answers included; its
    ///   `deliveryOutcome` says whether to retry.
    func send(_ request: SlackWebRequest) async throws(SlackAPIError) -> JSONValue
}

extension SlackWebAPI {
    /// Asks `apps.connections.open` for a Socket Mode websocket URL.
    ///
    /// The URL carries a one-use ticket: connect to it soon, once, and never log it.
    ///
    /// - Parameter appToken: the app-level token (`xapp-…`, scope `connections:write`); a bot
    ///   token is refused with `not_allowed_token_type`.
    public func openSocketModeConnection(appToken: String) async throws(SlackAPIError) -> String {
        let method = "apps.connections.open"
        let answer = try await send(SlackWebRequest(.method(method, token: appToken), body: [:]))
        let url = try Self.string("url", in: answer, method: method)
        let lowered = url.lowercased()
        guard lowered.hasPrefix("wss://") || lowered.hasPrefix("ws://") else {
            throw .malformed(endpoint: method, reason: "the url is not a websocket URL")
        }
        return url
    }
}

/// One POST to Slack: a Web API method, or a `response_url`.
///
/// Tokens and `response_url`s are credentials, so this type's descriptions (and those of its
/// destination) never show them: printing or dumping a request is safe.
public struct SlackWebRequest: Sendable, Hashable {
    /// Where the request goes and with which credential.
    public enum Destination: Sendable, Hashable {
        /// A Web API method such as `chat.postMessage`, POSTed to `{apiURL}/{method}` with
        /// `Authorization: Bearer <token>`; a nil `token` means the client's bot token.
        case method(String, token: String? = nil)
        /// A `response_url` from a slash command or an interaction: the URL is the credential,
        /// so no `Authorization` header is sent.
        case responseURL(String)
    }

    /// How the body goes on the wire: JSON for write methods; a form for read methods such as
    /// `conversations.replies`, which do not read JSON bodies.
    public enum Encoding: Sendable, Hashable {
        case json
        case form
    }

    public var destination: Destination
    /// The body, an object (a form takes its top-level strings, numbers and Booleans).
    public var body: JSONValue
    public var encoding: Encoding
    /// The whole exchange's time limit; nil uses the client's default.
    public var timeout: Duration?

    /// Creates a request; see `SlackWebAPI`'s helpers for the common ones.
    public init(_ destination: Destination, body: JSONValue, encoding: Encoding = .json, timeout: Duration? = nil) {
        self.destination = destination
        self.body = body
        self.encoding = encoding
        self.timeout = timeout
    }

    /// A request for the Web API method `method` with the client's bot token.
    public static func method(_ method: String, body: JSONValue, timeout: Duration? = nil) -> SlackWebRequest {
        SlackWebRequest(.method(method), body: body, timeout: timeout)
    }

    /// What the request calls, safe to log: the method name, or `response_url`.
    public var label: String { destination.label }
}

extension SlackWebRequest.Destination: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The method name, or `response_url`; never the token nor the URL.
    public var label: String {
        switch self {
        case .method(let name, _): name
        case .responseURL: "response_url"
        }
    }

    public var description: String {
        switch self {
        case .method(let name, let token): token == nil ? name : "\(name) (own token)"
        case .responseURL: "response_url"
        }
    }

    public var debugDescription: String { description }

    // `dump` and the debugger read mirrors, not descriptions.
    public var customMirror: Mirror { Mirror(self, children: ["label": label]) }
}

extension SlackWebRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "SlackWebRequest(\(destination))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["destination": destination.description, "timeout": timeout as Any])
    }
}

extension SlackWebAPI {
    /// Posts a message with `chat.postMessage` and returns its `ts`, the id later edits need.
    ///
    /// - Parameters:
    ///   - text: mrkdwn, already escaped; with `blocks` it is the notification fallback.
    ///   - threadTS: the parent's `ts` to answer in its thread.
    @discardableResult
    public func postMessage(
        channel: String, text: String, blocks: [JSONValue]? = nil, threadTS: String? = nil
    ) async throws(SlackAPIError) -> String {
        // No previews: a model's answer must not make Slack fetch whatever URL it names.
        var body: [String: JSONValue] = ["channel": .string(channel), "text": .string(text), "unfurl_links": false, "unfurl_media": false]
        if let blocks { body["blocks"] = .array(blocks) }
        if let threadTS { body["thread_ts"] = .string(threadTS) }
        let answer = try await send(.method("chat.postMessage", body: .object(body)))
        return try Self.string("ts", in: answer, method: "chat.postMessage")
    }

    /// Replaces the text (and blocks) of the message `ts` with `chat.update`; returns its `ts`.
    @discardableResult
    public func update(
        channel: String, ts: String, text: String, blocks: [JSONValue]? = nil
    ) async throws(SlackAPIError) -> String {
        var body: [String: JSONValue] = ["channel": .string(channel), "ts": .string(ts), "text": .string(text)]
        if let blocks { body["blocks"] = .array(blocks) }
        let answer = try await send(.method("chat.update", body: .object(body)))
        return answer["ts"]?.stringValue ?? ts
    }

    /// Shows a message only `user` can see with `chat.postEphemeral`; returns its
    /// `message_ts` (ephemeral messages cannot be edited through the Web API).
    @discardableResult
    public func postEphemeral(
        channel: String, user: String, text: String, blocks: [JSONValue]? = nil, threadTS: String? = nil
    ) async throws(SlackAPIError) -> String {
        var body: [String: JSONValue] = ["channel": .string(channel), "user": .string(user), "text": .string(text)]
        if let blocks { body["blocks"] = .array(blocks) }
        if let threadTS { body["thread_ts"] = .string(threadTS) }
        let answer = try await send(.method("chat.postEphemeral", body: .object(body)))
        return try Self.string("message_ts", in: answer, method: "chat.postEphemeral")
    }

    /// Posts `body` (`text`, `blocks`, `response_type`, `replace_original`…) to a slash
    /// command's or an interaction's `response_url`: no token, at most 5 times in 30 minutes.
    public func respond(to responseURL: String, body: JSONValue) async throws(SlackAPIError) {
        _ = try await send(SlackWebRequest(.responseURL(responseURL), body: body))
    }

    /// The member `key` of an answer, which Slack always sends on success.
    static func string(_ key: String, in answer: JSONValue, method: String) throws(SlackAPIError) -> String {
        guard let value = answer[key]?.stringValue, !value.isEmpty else {
            throw .malformed(endpoint: method, reason: "no \"\(key)\" in the answer")
        }
        return value
    }
}
