import AsyncHTTPClient
import Foundation
public import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
public import RelayCore
public import RelayHTTP
public import RelayPlatform

/// Slack's Web API as the adapter sees it: one primitive, with typed helpers in extensions
/// (`postMessage`, `update`, `postEphemeral`, `respond(to:body:)`; `threadReplies`,
/// `message(channel:ts:)`, `userInfo(user:)`; `openSocketModeConnection(appToken:)`), so a test
/// double implements a single method.
///
/// `SlackWebClient` is the implementation over HTTP.
public protocol SlackWebAPI: Sendable {
    /// Sends `request` and returns Slack's answer, a JSON object that said `"ok": true`
    /// (`{}` for a `response_url` that answered with plain text), for the caller to decode.
    ///
    /// - Throws: a `SlackAPIError` for every failure, `ok: false` answers included; its
    ///   `deliveryOutcome` says whether to retry.
    func send(_ request: SlackWebRequest) async throws(SlackAPIError) -> SlackAnswer

    /// Downloads a private file (`url_private_download`) with the bot token, at most `maxBytes`.
    func downloadFile(url: String, maxBytes: Int, timeout: Duration) async throws(SlackAPIError) -> HTTPTransport.Download
}

extension SlackWebAPI {
    /// Test doubles that serve no files.
    public func downloadFile(url: String, maxBytes: Int, timeout: Duration) async throws(SlackAPIError) -> HTTPTransport.Download {
        throw .invalidRequest(endpoint: "file", reason: "this Web API client downloads no files")
    }

    /// Asks `apps.connections.open` for a Socket Mode websocket URL.
    ///
    /// The URL carries a one-use ticket: connect to it soon, once, and never log it.
    ///
    /// - Parameter appToken: the app-level token (`xapp-…`, scope `connections:write`); a bot
    ///   token is refused with `not_allowed_token_type`.
    public func openSocketModeConnection(appToken: String) async throws(SlackAPIError) -> String {
        let method = "apps.connections.open"
        let answer = try await send(SlackWebRequest(.method(method, token: appToken), body: [:]))
        let url = try Self.nonEmpty(answer.decode(SlackConnectionAnswer.self, method: method).url, "url", method: method)
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
        return try Self.nonEmpty(answer.decode(SlackTSAnswer.self, method: "chat.postMessage").ts, "ts", method: "chat.postMessage")
    }

    /// Replaces the text (and blocks) of the message `ts` with `chat.update`; returns its `ts`.
    @discardableResult
    public func update(
        channel: String, ts: String, text: String, blocks: [JSONValue]? = nil
    ) async throws(SlackAPIError) -> String {
        var body: [String: JSONValue] = ["channel": .string(channel), "ts": .string(ts), "text": .string(text)]
        if let blocks { body["blocks"] = .array(blocks) }
        let answer = try await send(.method("chat.update", body: .object(body)))
        // The edit is done whatever the answer says of it: an answer without its `ts` keeps ours.
        return (try? answer.decode(SlackTSAnswer.self, method: "chat.update"))?.ts ?? ts
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
        let method = "chat.postEphemeral"
        return try Self.nonEmpty(answer.decode(SlackEphemeralAnswer.self, method: method).messageTS, "message_ts", method: method)
    }

    /// Posts `body` (`text`, `blocks`, `response_type`, `replace_original`…) to a slash
    /// command's or an interaction's `response_url`: no token, at most 5 times in 30 minutes.
    public func respond(to responseURL: String, body: JSONValue) async throws(SlackAPIError) {
        _ = try await send(SlackWebRequest(.responseURL(responseURL), body: body))
    }

    /// A member Slack always fills on success (an id, a URL): empty is as good as missing.
    static func nonEmpty(_ value: String, _ key: String, method: String) throws(SlackAPIError) -> String {
        guard !value.isEmpty else { throw .malformed(endpoint: method, reason: "field `\(key)` is null or empty") }
        return value
    }
}

/// Slack's Web API over HTTP: `SlackWebAPI` on a shared AsyncHTTPClient.
///
/// It sends through the relay's shared `HTTPTransport` (one pool, no redirects: a redirect
/// would carry the token elsewhere). There are no retries here: a failed call throws at once and its
/// `deliveryOutcome` tells the outbox when to try again. Tokens and `response_url`s never
/// reach logs or errors.
public struct SlackWebClient: SlackWebAPI {
    /// The time limit of one call when neither the client nor the request says otherwise.
    public static let defaultTimeout: Duration = .seconds(10)
    /// Largest answer read; Slack's answers are a few kilobytes.
    static let maxResponseBytes = 1024 * 1024

    let transport: HTTPTransport
    /// The Web API base without a trailing slash, e.g. `https://slack.com/api`.
    public let apiURL: String
    let botToken: String?
    /// The time limit of a whole call (sending, waiting, reading) unless the request says otherwise.
    public let timeout: Duration
    /// Where a `response_url` may be (`SlackConfiguration.responseURLRule`), checked again before
    /// every call: an outbox entry stored before the rule, or any later caller, cannot send a
    /// request elsewhere either.
    let responseURLRule: CallbackRule
    let logger: Logger

    /// Creates a client.
    ///
    /// - Parameters:
    ///   - transport: the relay's shared transport.
    ///   - apiURL: the Web API base; a fake's in tests.
    ///   - botToken: the `xoxb-…` token for `chat.*`; nil makes those calls fail with
    ///     `.invalidRequest` (a `response_url` and Socket Mode need none).
    ///   - timeout: the default time limit per call.
    public init(
        transport: HTTPTransport,
        apiURL: String = SlackConfiguration.defaultAPIURL,
        botToken: String?,
        timeout: Duration = SlackWebClient.defaultTimeout,
        logger: Logger
    ) {
        self.transport = transport
        var base = apiURL.trimmingCharacters(in: .whitespaces)
        while base.hasSuffix("/") { base.removeLast() }
        self.apiURL = base
        self.responseURLRule = SlackConfiguration.responseURLRule(apiURL: base)
        self.botToken = botToken.flatMap { $0.isEmpty ? nil : $0 }
        self.timeout = timeout
        var logger = logger
        logger[metadataKey: "platform"] = "slack"
        self.logger = logger
    }

    /// A client for `configuration`'s API URL and bot token.
    public init(
        transport: HTTPTransport, configuration: SlackConfiguration, timeout: Duration = SlackWebClient.defaultTimeout,
        logger: Logger
    ) {
        self.init(
            transport: transport, apiURL: configuration.apiURL, botToken: configuration.botToken, timeout: timeout,
            logger: logger)
    }

    public func send(_ request: SlackWebRequest) async throws(SlackAPIError) -> SlackAnswer {
        let label = request.label
        let limit = request.timeout ?? timeout
        let httpRequest = try makeRequest(request)
        let started = ContinuousClock.now
        let response: HTTPAnswer
        do {
            response = try await exchange(httpRequest, label: label, timeout: limit)
        } catch {
            logger.debug(
                "Slack call failed",
                metadata: ["slack.method": "\(label)", "slack.error": "\(error.label)", "slack.elapsed": "\(elapsed(since: started))"])
            throw error
        }
        let answer = Self.interpret(
            status: response.status, retryAfter: response.retryAfter(), body: response.body, method: label,
            isResponseURL: request.isResponseURL)
        switch answer {
        case .success(let answer):
            logger.debug(
                "Slack call succeeded",
                metadata: ["slack.method": "\(label)", "slack.status": "\(response.status)", "slack.elapsed": "\(elapsed(since: started))"])
            let warnings = answer.warnings
            if !warnings.isEmpty {
                // `message_truncated` and friends: the call worked but not quite as asked.
                logger.notice(
                    "Slack answered with warnings",
                    metadata: ["slack.method": "\(label)", "slack.warnings": "\(warnings.joined(separator: ","))"])
            }
            return answer
        case .failure(let error):
            logger.debug(
                "Slack refused a call",
                metadata: [
                    "slack.method": "\(label)", "slack.status": "\(response.status)", "slack.error": "\(error.label)",
                    "slack.elapsed": "\(elapsed(since: started))",
                ])
            throw error
        }
    }

    private func elapsed(since start: ContinuousClock.Instant) -> String {
        "\(start.duration(to: .now))"
    }
}

extension SlackWebRequest {
    var isResponseURL: Bool {
        if case .responseURL = destination { return true }
        return false
    }
}

extension SlackWebClient {
    /// Longest error code kept from an answer; Slack's are short snake_case words.
    static let maxCodeLength = 64

    /// Reads one answer the way Slack means it.
    ///
    /// - HTTP 429, or `ok: false` with `ratelimited`: rate limited for `retryAfter` (the
    ///   `Retry-After` header as `RetryAfter` reads it; 1 s when missing or unreadable, as
    ///   slack_sdk waits then too).
    /// - 2xx: `ok: true` is success and `ok: false` is Slack's refusal, whatever the status.
    ///   A `response_url` may answer plain text (`ok`), which is success too.
    /// - 5xx: a server error; other statuses: refused, with the body's `error` when it has one
    ///   (`expired_url` for a 404 from a `response_url` that says nothing).
    static func interpret(
        status: Int, retryAfter: @autoclosure () -> Duration?, body: [UInt8], method: String, isResponseURL: Bool
    ) -> Result<SlackAnswer, SlackAPIError> {
        // Nil when the body is not JSON at all.
        let envelope = try? JSONDecoder().decode(SlackAnswerEnvelope.self, from: Data(body))
        let ok = envelope?.ok
        let code = envelope?.error.map(sanitized)

        if status == 429 || (ok == false && code == "ratelimited") {
            // The header is read only here: a successful answer costs no parsing of it.
            return .failure(.rateLimited(endpoint: method, retryAfter: retryAfter() ?? .seconds(1)))
        }
        switch status {
        case 200..<300:
            if ok == true, let envelope { return .success(SlackAnswer(body: body, warnings: warnings(in: envelope))) }
            if ok == false { return .failure(.refused(endpoint: method, SlackRefusal(code: code ?? "unknown_error", status: status))) }
            if isResponseURL {
                if envelope?.isObject == true { return .success(SlackAnswer(body: body)) }
                return .success(SlackAnswer(body: Array("{}".utf8)))
            }
            return .failure(
                .malformed(endpoint: method, reason: envelope == nil ? "the body is not JSON" : "the body has no \"ok\""))
        case 500...:
            return .failure(.server(endpoint: method, status: status))
        default:
            let fallback = isResponseURL && (status == 404 || status == 410) ? "expired_url" : "http_\(status)"
            return .failure(.refused(endpoint: method, SlackRefusal(code: code ?? fallback, status: status)))
        }
    }

    /// Warnings on a successful answer: `warning` ("a,b") and `response_metadata.warnings`.
    static func warnings(in envelope: SlackAnswerEnvelope) -> [String] {
        var found: [String] = []
        if let text = envelope.warning {
            found += text.split(separator: ",").map { sanitized(String($0)) }
        }
        found += envelope.metadataWarnings.map(sanitized)
        var seen = Set<String>()
        return found.filter { !$0.isEmpty && seen.insert($0).inserted }
    }

    /// An error code as Slack spells them (`[a-z0-9_.-]`), cut short: a proxy's body must not
    /// put arbitrary text into logs or metric labels.
    static func sanitized(_ code: String) -> String {
        let kept = code.lowercased().unicodeScalars.filter {
            ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "." || $0 == "-"
        }
        let text = String(String.UnicodeScalarView(kept.prefix(maxCodeLength)))
        return text.isEmpty ? "unknown_error" : text
    }
}

extension SlackWebClient {
    /// `GET url` with the bot token, streamed and cut off at `maxBytes`. The caller checks the
    /// URL is on Slack's file host: the token goes wherever the URL points.
    public func downloadFile(url: String, maxBytes: Int, timeout: Duration) async throws(SlackAPIError) -> HTTPTransport.Download {
        guard let token = botToken else { throw .invalidRequest(endpoint: "file", reason: "no bot token is configured (SLACK_BOT_TOKEN)") }
        var request = HTTPClientRequest(url: url)
        request.method = .GET
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "User-Agent", value: "rhea-relay")
        do throws(HTTPFailure) {
            return try await transport.download(request, timeout: timeout, maxBytes: maxBytes)
        } catch {
            throw SlackAPIError(error, endpoint: "file")
        }
    }

    /// The HTTP request for `request`; the token goes into the `Authorization` header only.
    func makeRequest(_ request: SlackWebRequest) throws(SlackAPIError) -> HTTPClientRequest {
        let label = request.label
        let url: String
        var authorization: String?
        switch request.destination {
        case .method(let method, let token):
            // A method name is a path segment; anything else could escape `{apiURL}/`.
            guard !method.isEmpty, method.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == ".") }) else {
                throw .invalidRequest(endpoint: "unknown", reason: "not a Web API method name")
            }
            guard let token = token ?? botToken, !token.isEmpty else {
                throw .invalidRequest(endpoint: label, reason: "no bot token is configured (SLACK_BOT_TOKEN)")
            }
            guard Self.isHTTPURL(apiURL) else {
                throw .invalidRequest(endpoint: label, reason: "the Slack API URL is not an http(s) URL")
            }
            url = "\(apiURL)/\(method)"
            authorization = "Bearer \(token)"
        case .responseURL(let responseURL):
            do throws(CallbackRefusal) {
                url = try responseURLRule.check(responseURL)
            } catch {
                throw .invalidRequest(endpoint: label, reason: "the response_url is refused: \(error.reason)")
            }
        }
        let body: [UInt8]
        let contentType: String
        switch request.encoding {
        case .json:
            guard let bytes = request.body.serialized() else {
                throw .invalidRequest(endpoint: label, reason: "the body holds a number JSON cannot express")
            }
            body = bytes
            contentType = "application/json; charset=utf-8"
        case .form:
            body = Array(Self.formEncoded(request.body).utf8)
            contentType = "application/x-www-form-urlencoded"
        }
        var httpRequest = HTTPClientRequest(url: url)
        httpRequest.method = .POST
        httpRequest.headers.add(name: "Content-Type", value: contentType)
        httpRequest.headers.add(name: "Accept", value: "application/json")
        httpRequest.headers.add(name: "User-Agent", value: "rhea-relay")
        if let authorization {
            httpRequest.headers.add(name: "Authorization", value: authorization)
        }
        httpRequest.body = .bytes(ByteBuffer(bytes: body))
        return httpRequest
    }

    /// `a=1&b=x%20y` from an object's top-level scalars, in key order.
    static func formEncoded(_ body: JSONValue) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let pairs = (body.objectValue ?? [:]).sorted { $0.key < $1.key }.compactMap { key, value -> String? in
            let text: String
            switch value {
            case .string(let string): text = string
            case .int(let number): text = String(number)
            case .double(let number): text = String(number)
            case .bool(let flag): text = flag ? "true" : "false"
            default: return nil
            }
            let name = key.addingPercentEncoding(withAllowedCharacters: allowed) ?? key
            return name + "=" + (text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text)
        }
        return pairs.joined(separator: "&")
    }

    /// Sends `request` through the shared transport and reads the whole answer within
    /// `timeout`; any status comes back as an answer, for `interpret` to read.
    func exchange(_ request: HTTPClientRequest, label: String, timeout: Duration) async throws(SlackAPIError) -> HTTPAnswer {
        do throws(HTTPFailure) {
            return try await transport.exchange(request, timeout: timeout, maxBodyBytes: Self.maxResponseBytes)
        } catch {
            throw SlackAPIError(error, endpoint: label)
        }
    }

    static func isHTTPURL(_ url: String) -> Bool {
        let lowered = url.lowercased()
        return lowered.hasPrefix("https://") || lowered.hasPrefix("http://")
    }
}
