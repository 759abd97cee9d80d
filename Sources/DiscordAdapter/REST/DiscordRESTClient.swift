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
    /// Sends `request` and returns the answer's body (empty for 204), as Discord sent it: the
    /// typed calls below decode it into the answer's model.
    func send(_ request: DiscordRequest) async throws(DiscordAPIError) -> [UInt8]
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

    public func send(_ request: DiscordRequest) async throws(DiscordAPIError) -> [UInt8] {
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

    /// A 2xx's body; anything else as the matching error.
    static func interpret(_ answer: HTTPAnswer, route: String) throws(DiscordAPIError) -> [UInt8] {
        if answer.isSuccess { return answer.body }
        if answer.status >= 500 { throw .server(endpoint: route, status: answer.status) }
        let error = try? PayloadDecoding.json(DiscordErrorBody.self, from: answer.body, as: "Discord error")
        throw .refused(endpoint: route, DiscordRefusal(status: answer.status, code: error?.code, message: String((error?.message ?? "").prefix(200))))
    }
}

/// Discord's error body: `{"code": 50001, "message": "Missing Access", "errors": …}`.
struct DiscordErrorBody: Decodable {
    var code: Int?
    var message: String?

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: DiscordKey.self)
        code = container.lenient(Int.self, "code")
        message = container.lenient(String.self, "message")
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

/// `GET /gateway/bot`'s body.
private struct GatewayBotAnswer: Decodable {
    var url: String
    var remaining: Int?
    var resetAfter: Double?

    private struct Limit: Decodable {
        var remaining: Int?
        var resetAfter: Double?
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: DiscordKey.self)
            remaining = container.lenient(Int.self, "remaining")
            resetAfter = container.lenient(Double.self, "reset_after")
        }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: DiscordKey.self)
        url = try container.decode(String.self, forKey: "url")
        guard !url.isEmpty else { throw DecodingError.dataCorruptedError(forKey: "url", in: container, debugDescription: "empty") }
        let limit = container.lenient(Limit.self, "session_start_limit")
        remaining = limit?.remaining
        resetAfter = limit?.resetAfter
    }
}

/// A body of which only a list's length is read (`PUT …/commands` answers the commands).
private struct ListAnswer: Decodable {
    var count: Int
    init(from decoder: any Decoder) throws {
        var list = try decoder.unkeyedContainer()
        count = 0
        while !list.isAtEnd {
            _ = try list.decode(Skipped.self)
            count += 1
        }
    }

    private struct Skipped: Decodable {
        init(from decoder: any Decoder) throws {}
    }
}

extension DiscordREST {
    /// Sends `request` and decodes its answer as `T`; an answer that does not decode is
    /// `.malformed`, naming the field at fault.
    func send<T: Decodable>(_ request: DiscordRequest, as type: T.Type) async throws(DiscordAPIError) -> T {
        let body = try await send(request)
        do throws(PayloadProblem) {
            return try PayloadDecoding.json(type, from: body, as: "Discord answer")
        } catch {
            throw .malformed(endpoint: request.route.description, reason: error.problem)
        }
    }

    /// `POST /channels/{c}/messages`; the new message's id.
    public func createMessage(channelID: String, body: JSONValue) async throws(DiscordAPIError) -> String {
        try await send(DiscordRequest(.createMessage(channelID: channelID), body: body), as: DiscordObjectID.self).id
    }

    /// `PATCH /channels/{c}/messages/{m}`.
    public func editMessage(channelID: String, messageID: String, body: JSONValue) async throws(DiscordAPIError) -> String {
        try await send(DiscordRequest(.editMessage(channelID: channelID, messageID: messageID), body: body), as: DiscordObjectID.self).id
    }

    /// `PATCH /webhooks/{app}/{token}/messages/@original`: completes a deferred response.
    public func editOriginalResponse(applicationID: String, token: DiscordToken, body: JSONValue) async throws(DiscordAPIError) -> String? {
        let answer = try await send(DiscordRequest(.editOriginalResponse(applicationID: applicationID, token: token.secret), body: body))
        return Self.messageID(in: answer)
    }

    /// `POST /webhooks/{app}/{token}?wait=true`: a follow-up message.
    public func createFollowup(applicationID: String, token: DiscordToken, body: JSONValue) async throws(DiscordAPIError) -> String? {
        let answer = try await send(DiscordRequest(.createFollowup(applicationID: applicationID, token: token.secret), body: body, query: "wait=true"))
        return Self.messageID(in: answer)
    }

    /// `GET /channels/{c}/messages/{m}`.
    public func message(channelID: String, messageID: String) async throws(DiscordAPIError) -> DiscordFetchedMessage {
        let message = try await send(DiscordRequest(.getMessage(channelID: channelID, messageID: messageID)), as: DiscordMessagePayload.self)
        return DiscordFetchedMessage(
            id: message.id, channelID: message.channelID ?? channelID, content: message.content, authorID: message.author?.id,
            embedText: message.embedText)
    }

    /// `POST /users/@me/channels`: the DM channel with `userID`.
    public func directMessageChannel(userID: String) async throws(DiscordAPIError) -> String {
        let route = DiscordRoute(method: "POST", template: "/users/@me/channels", path: "/users/@me/channels", majorParameter: "")
        return try await send(DiscordRequest(route, body: ["recipient_id": .string(userID)]), as: DiscordObjectID.self).id
    }

    /// `GET /gateway/bot`: where to connect, and how many IDENTIFYs are left.
    public func gatewayBot() async throws(DiscordAPIError) -> DiscordGatewayInfo {
        let answer = try await send(DiscordRequest(.gatewayBot), as: GatewayBotAnswer.self)
        let remaining = UntrustedNumber.checked(answer.remaining, in: 0...100_000, source: "discord", field: "session_start_remaining")
        let resetMilliseconds =
            UntrustedNumber.clamped(answer.resetAfter ?? 0, to: 0...86_400_000, source: "discord", field: "session_start_reset_after") ?? 0
        return DiscordGatewayInfo(url: answer.url, remaining: remaining ?? 1, resetAfter: .milliseconds(Int64(resetMilliseconds)))
    }

    /// `PUT /applications/{app}/commands` (or the guild's): replaces every command; how many
    /// Discord now has.
    public func overwriteCommands(applicationID: String, guildID: String?, commands: JSONValue) async throws(DiscordAPIError) -> Int {
        let route = DiscordRoute.bulkOverwriteCommands(applicationID: applicationID, guildID: guildID)
        return try await send(DiscordRequest(route, body: commands), as: ListAnswer.self).count
    }

    /// `GET /guilds/{g}` and `GET /guilds/{g}/members/{u}`: whether the member manages the
    /// server — its owner, or holding a role (@everyone counts) with Administrator or Manage
    /// Server (`DiscordInbound.adminPermissions`). Those are server-wide: no channel overwrite
    /// takes them away.
    public func administers(guildID: String, userID: String) async throws(DiscordAPIError) -> Bool {
        for id in [guildID, userID] where id.isEmpty || !id.allSatisfy({ $0.isASCII && $0.isNumber }) {
            throw .malformed(endpoint: "GET /guilds/{guild.id}", reason: "`\(id)` is not a Discord id")
        }
        let guildRoute = DiscordRoute(method: "GET", template: "/guilds/{guild.id}", path: "/guilds/\(guildID)", majorParameter: guildID)
        let guild = try await send(DiscordRequest(guildRoute), as: DiscordGuild.self)
        if guild.ownerID == userID { return true }
        let memberRoute = DiscordRoute(
            method: "GET", template: "/guilds/{guild.id}/members/{user.id}", path: "/guilds/\(guildID)/members/\(userID)", majorParameter: guildID)
        let member = try await send(DiscordRequest(memberRoute), as: DiscordGuildMember.self)
        let held = Set(member.roles).union([guildID])
        let permissions = guild.roles.filter { held.contains($0.id) }.reduce(UInt64(0)) { $0 | (UInt64($1.permissions) ?? 0) }
        return permissions & DiscordInbound.adminPermissions != 0
    }

    /// `GET /users/{u}`: a user, by id.
    public func user(id: String) async throws(DiscordAPIError) -> DiscordUser {
        guard !id.isEmpty, id.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw .malformed(endpoint: "GET /users/{user.id}", reason: "`\(id)` is not a Discord id")
        }
        let route = DiscordRoute(method: "GET", template: "/users/{user.id}", path: "/users/\(id)", majorParameter: "")
        return try await send(DiscordRequest(route), as: DiscordUser.self)
    }

    /// `GET /users/@me`: the bot's own name, to check its token.
    public func currentUser() async throws(DiscordAPIError) -> String {
        let route = DiscordRoute(method: "GET", template: "/users/@me", path: "/users/@me", majorParameter: "")
        return try await send(DiscordRequest(route), as: DiscordCurrentUser.self).username
    }

    /// The id of the message a webhook call answered with, when it answered one.
    static func messageID(in body: [UInt8]) -> String? {
        try? PayloadDecoding.json(DiscordObjectID.self, from: body, as: "Discord answer").id
    }
}

/// `GET /guilds/{g}`'s answer, as far as it is read: who owns the server and what its roles allow.
struct DiscordGuild: Decodable {
    struct Role: Decodable {
        var id: String
        /// A bit set, as a decimal string.
        var permissions: String
    }
    var ownerID: String
    var roles: [Role]

    enum CodingKeys: String, CodingKey {
        case ownerID = "owner_id"
        case roles
    }
}

/// `GET /guilds/{g}/members/{u}`'s answer, as far as it is read: the member's roles.
struct DiscordGuildMember: Decodable {
    var roles: [String]
}

/// `GET /users/@me`'s answer, as far as it is read.
struct DiscordCurrentUser: Decodable {
    var username: String
}
