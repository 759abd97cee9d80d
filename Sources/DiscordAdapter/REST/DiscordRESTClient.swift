import AsyncHTTPClient
import Foundation
public import Logging
import NIOCore
import NIOHTTP1
public import RelayCore
public import RelayHTTP
import RelayPipeline
public import RelayPlatform

/// One Discord REST call: its route (method, template, concrete path) and its JSON body.
public struct DiscordRequest: Sendable {
    public var route: DiscordRoute
    public var body: JSONValue?
    /// The query string without `?` (`wait=true`).
    public var query: String?

    public init(_ route: DiscordRoute, body: JSONValue? = nil, query: String? = nil) {
        self.route = route
        self.body = body
        self.query = query
    }
}

/// Discord's REST API: one `send` primitive; the typed calls the adapter makes are extensions,
/// so a fake implements one method.
public protocol DiscordREST: Sendable {
    /// Sends `request` and returns the JSON answer (`null` for 204).
    func send(_ request: DiscordRequest) async throws(DiscordAPIError) -> JSONValue
}

/// `DiscordREST` on the relay's shared `HTTPTransport`, behind the one `DiscordRateLimiter`.
///
/// Every request first asks the limiter (and waits, on the injected clock, while its bucket or
/// the global limit is used up — so the limits are never exceeded), then goes out with the bot
/// token in `Authorization` (not to interaction endpoints, which need none), and its answer's
/// `X-RateLimit-*` headers are recorded. A 429 throws `.rateLimited` with the wait Discord asked
/// for: the outbox then holds the conversation that long and tries again. There are no retries
/// here. Tokens (the bot's, and interactions' in webhook paths) never reach logs or errors.
public struct DiscordRESTClient: DiscordREST {
    public static let defaultTimeout: Duration = .seconds(10)
    /// Longest answer read; Discord's are a few kilobytes.
    static let maxResponseBytes = 1024 * 1024
    /// Discord asks bots to say who they are.
    static let userAgent = "DiscordBot (https://github.com/rhea-relay/rhea-relay, 1.0)"

    let transport: HTTPTransport
    /// The REST base without a trailing slash, e.g. `https://discord.com/api/v10`.
    public let apiURL: String
    let botToken: DiscordToken?
    let limiter: DiscordLimiterGate
    let clock: any RelayClock
    public let timeout: Duration
    /// How long a request may wait in the limiter before it is handed back as rate limited
    /// (the outbox then waits instead of a task).
    public let maximumQueueWait: Duration
    let logger: Logger

    public init(
        transport: HTTPTransport, apiURL: String = DiscordConfiguration.defaultAPIURL, botToken: DiscordToken?,
        limiter: DiscordRateLimiter = DiscordRateLimiter(), clock: any RelayClock = SystemClock(), timeout: Duration = DiscordRESTClient.defaultTimeout,
        maximumQueueWait: Duration = .seconds(10), logger: Logger
    ) {
        self.transport = transport
        var base = apiURL.trimmingCharacters(in: .whitespaces)
        while base.hasSuffix("/") { base.removeLast() }
        self.apiURL = base
        self.botToken = botToken
        self.limiter = DiscordLimiterGate(limiter)
        self.clock = clock
        self.timeout = timeout
        self.maximumQueueWait = maximumQueueWait
        var logger = logger
        logger[metadataKey: "platform"] = "discord"
        self.logger = logger
    }

    public func send(_ request: DiscordRequest) async throws(DiscordAPIError) -> JSONValue {
        let route = request.route
        let label = route.description
        let httpRequest = try makeRequest(request)
        try await waitForTurn(route)
        let answer: HTTPAnswer
        do throws(HTTPFailure) {
            answer = try await transport.exchange(httpRequest, timeout: timeout, maxBodyBytes: Self.maxResponseBytes)
        } catch {
            await limiter.abandon(route, now: clock.now)
            logger.debug("Discord call failed", metadata: ["discord.route": "\(label)", "discord.error": "\(error.label)"])
            throw DiscordAPIError(error, endpoint: label)
        }
        let verdict = await limiter.record(route, status: answer.status, headers: answer.headers, body: answer.body, now: clock.now)
        if case .retry(let after, let global) = verdict {
            logger.notice(
                "Discord rate limited a call", metadata: ["discord.route": "\(label)", "discord.retry_after": "\(after)", "discord.global": "\(global)"])
            throw .rateLimited(endpoint: label, retryAfter: after)
        }
        logger.debug("Discord answered", metadata: ["discord.route": "\(label)", "discord.status": "\(answer.status)"])
        return try Self.interpret(answer, route: label)
    }

    /// Waits while the limiter says so; hands the request back as rate limited rather than wait
    /// longer than `maximumQueueWait`.
    private func waitForTurn(_ route: DiscordRoute) async throws(DiscordAPIError) {
        var waited = Duration.zero
        // Bounded: each pass waits at least a millisecond, and the total is capped.
        while true {
            // This replica lost the delivery lease meanwhile: the holder sends it, paced with its own.
            guard DeliveryPermit.isHeld else { throw .rateLimited(endpoint: route.description, retryAfter: .zero) }
            let wait = await limiter.acquire(route, now: clock.now)
            if wait == .zero { return }
            guard waited + wait <= maximumQueueWait else {
                throw .rateLimited(endpoint: route.description, retryAfter: wait)
            }
            do { try await clock.sleep(for: wait) } catch { throw .cancelled(endpoint: route.description) }
            waited += wait
        }
    }

    /// The HTTP request; the bot token goes into `Authorization` only.
    func makeRequest(_ request: DiscordRequest) throws(DiscordAPIError) -> HTTPClientRequest {
        let route = request.route
        let label = route.description
        // A path segment from a payload (an id, an interaction token) must not escape the path.
        guard route.path.hasPrefix("/"), route.path.utf8.allSatisfy(Self.isPathByte) else {
            throw .invalidRequest(endpoint: label, reason: "the path holds characters a Discord id or token never has")
        }
        let lowered = apiURL.lowercased()
        guard lowered.hasPrefix("https://") || lowered.hasPrefix("http://") else {
            throw .invalidRequest(endpoint: label, reason: "the Discord API URL is not an http(s) URL")
        }
        var httpRequest = HTTPClientRequest(url: apiURL + route.path + (request.query.map { "?" + $0 } ?? ""))
        httpRequest.method = HTTPMethod(rawValue: route.method)
        httpRequest.headers.add(name: "User-Agent", value: Self.userAgent)
        httpRequest.headers.add(name: "Accept", value: "application/json")
        if !route.exemptFromGlobalLimit {
            guard let botToken else { throw .invalidRequest(endpoint: label, reason: "no bot token is configured (DISCORD_BOT_TOKEN)") }
            httpRequest.headers.add(name: "Authorization", value: botToken.authorization)
        }
        if let body = request.body {
            guard let bytes = body.serialized() else { throw .invalidRequest(endpoint: label, reason: "the body holds a number JSON cannot express") }
            httpRequest.headers.add(name: "Content-Type", value: "application/json")
            httpRequest.body = .bytes(ByteBuffer(bytes: bytes))
        }
        return httpRequest
    }

    private static func isPathByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "/"), UInt8(ascii: "@"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"): true
        default: false
        }
    }

    /// A 2xx as JSON (`null` when empty); anything else as the matching error.
    static func interpret(_ answer: HTTPAnswer, route: String) throws(DiscordAPIError) -> JSONValue {
        if answer.isSuccess {
            if answer.body.isEmpty { return .null }
            guard let json = JSONValue.parse(answer.body) else { throw .malformed(endpoint: route, reason: "not JSON") }
            return json
        }
        if answer.status >= 500 { throw .server(endpoint: route, status: answer.status) }
        let json = JSONValue.parse(answer.body)
        let code = json?["code"]?.intValue
        let message = String((json?["message"]?.stringValue ?? "").prefix(200))
        throw .refused(endpoint: route, DiscordRefusal(status: answer.status, code: code, message: message))
    }
}

/// The one `DiscordRateLimiter` of a client, shared by its concurrent requests.
actor DiscordLimiterGate {
    private var limiter: DiscordRateLimiter

    init(_ limiter: DiscordRateLimiter) {
        self.limiter = limiter
    }

    func acquire(_ route: DiscordRoute, now: Date) -> Duration {
        limiter.acquire(route, now: now)
    }

    func record(_ route: DiscordRoute, status: Int, headers: HTTPHeaders, body: [UInt8], now: Date) -> DiscordRateLimiter.Verdict {
        limiter.record(route, status: status, header: { headers.first(name: $0) }, body: body, now: now)
    }

    func abandon(_ route: DiscordRoute, now: Date) {
        limiter.abandon(route, now: now)
    }
}

// MARK: - Typed calls

/// A message as `GET /channels/{c}/messages/{m}` answers it, reduced to what the relay reads.
public struct DiscordFetchedMessage: Sendable, Hashable {
    public var id: String
    public var channelID: String
    public var content: String
    public var authorID: String?
    /// Its embeds' descriptions and footers, where the relay's replies keep their text.
    public var embedText: String = ""
}

/// What `GET /gateway/bot` answers.
public struct DiscordGatewayInfo: Sendable, Hashable {
    /// `wss://gateway.discord.gg`.
    public var url: String
    /// IDENTIFYs left in the current window (1000 a day).
    public var remaining: Int
    /// When the window starts over.
    public var resetAfter: Duration
}

extension DiscordREST {
    /// `POST /channels/{c}/messages`; the new message's id.
    public func createMessage(channelID: String, body: JSONValue) async throws(DiscordAPIError) -> String {
        try Self.messageID(try await send(DiscordRequest(.createMessage(channelID: channelID), body: body)), route: "POST /channels/{channel_id}/messages")
    }

    /// `PATCH /channels/{c}/messages/{m}`.
    public func editMessage(channelID: String, messageID: String, body: JSONValue) async throws(DiscordAPIError) -> String {
        let route = DiscordRoute.editMessage(channelID: channelID, messageID: messageID)
        return try Self.messageID(try await send(DiscordRequest(route, body: body)), route: route.description)
    }

    /// `PATCH /webhooks/{app}/{token}/messages/@original`: completes a deferred response.
    public func editOriginalResponse(applicationID: String, token: DiscordToken, body: JSONValue) async throws(DiscordAPIError) -> String? {
        try await send(DiscordRequest(.editOriginalResponse(applicationID: applicationID, token: token.secret), body: body))["id"]?.stringValue
    }

    /// `POST /webhooks/{app}/{token}?wait=true`: a follow-up message.
    public func createFollowup(applicationID: String, token: DiscordToken, body: JSONValue) async throws(DiscordAPIError) -> String? {
        try await send(DiscordRequest(.createFollowup(applicationID: applicationID, token: token.secret), body: body, query: "wait=true"))["id"]?
            .stringValue
    }

    /// `GET /channels/{c}/messages/{m}`.
    public func message(channelID: String, messageID: String) async throws(DiscordAPIError) -> DiscordFetchedMessage {
        let route = DiscordRoute.getMessage(channelID: channelID, messageID: messageID)
        let json = try await send(DiscordRequest(route))
        guard let id = json["id"]?.stringValue else { throw .malformed(endpoint: route.description, reason: "no message id") }
        return DiscordFetchedMessage(
            id: id, channelID: json["channel_id"]?.stringValue ?? channelID, content: json["content"]?.stringValue ?? "",
            authorID: json["author"]?["id"]?.stringValue,
            embedText: (json["embeds"]?.arrayValue ?? []).flatMap { embed in
                [embed["description"]?.stringValue, embed["footer"]?["text"]?.stringValue].compactMap { $0 }
            }.joined(separator: "\n"))
    }

    /// `POST /users/@me/channels`: the DM channel with `userID`.
    public func directMessageChannel(userID: String) async throws(DiscordAPIError) -> String {
        let route = DiscordRoute(method: "POST", template: "/users/@me/channels", path: "/users/@me/channels", majorParameter: "")
        let json = try await send(DiscordRequest(route, body: ["recipient_id": .string(userID)]))
        guard let id = json["id"]?.stringValue else { throw .malformed(endpoint: route.description, reason: "no channel id") }
        return id
    }

    /// `GET /gateway/bot`: where to connect, and how many IDENTIFYs are left.
    public func gatewayBot() async throws(DiscordAPIError) -> DiscordGatewayInfo {
        let json = try await send(DiscordRequest(.gatewayBot))
        guard let url = json["url"]?.stringValue, !url.isEmpty else { throw .malformed(endpoint: DiscordRoute.gatewayBot.description, reason: "no url") }
        let limit = json["session_start_limit"]
        let remaining = UntrustedNumber.checked(limit?["remaining"]?.intValue, in: 0...100_000, source: "discord", field: "session_start_remaining")
        let resetMilliseconds =
            UntrustedNumber.clamped(
                limit?["reset_after"]?.doubleValue ?? 0, to: 0...86_400_000, source: "discord", field: "session_start_reset_after") ?? 0
        return DiscordGatewayInfo(url: url, remaining: remaining ?? 1, resetAfter: .milliseconds(Int64(resetMilliseconds)))
    }

    /// `PUT /applications/{app}/commands` (or the guild's): replaces every command; how many
    /// Discord now has.
    public func overwriteCommands(applicationID: String, guildID: String?, commands: JSONValue) async throws(DiscordAPIError) -> Int {
        let route = DiscordRoute.bulkOverwriteCommands(applicationID: applicationID, guildID: guildID)
        let json = try await send(DiscordRequest(route, body: commands))
        guard let list = json.arrayValue else { throw .malformed(endpoint: route.description, reason: "not a list of commands") }
        return list.count
    }

    static func messageID(_ json: JSONValue, route: String) throws(DiscordAPIError) -> String {
        guard let id = json["id"]?.stringValue else { throw .malformed(endpoint: route, reason: "no message id") }
        return id
    }
}
