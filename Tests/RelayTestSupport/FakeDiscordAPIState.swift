import RelayCore

/// What the fake Discord REST API keeps, and how it answers one request.
struct FakeDiscordAPIState: Sendable {
    struct Answer: Sendable {
        var status: Int
        var headers: [(String, String)] = []
        var body: JSONValue = .null
        /// Seconds to hold the answer back after the request took effect (`Failure.slow`).
        var delay = 0.0
    }

    struct Filed: Sendable {
        var route: String
        var request: RecordedRequest
        var arrived: ContinuousClock.Instant
        /// Refused by the rate limits (429).
        var refused = false
    }

    let botToken: String
    var gatewayURL = "ws://127.0.0.1:1"
    var sessionStart = (remaining: 1000, resetAfter: 86_400_000)
    var messages: [String: FakeDiscordMessage] = [:]
    /// Each interaction's original response as its last edit left it, by interaction token.
    var originals: [String: FakeDiscordMessage] = [:]
    /// Channel messages created with `enforce_nonce`, by channel and nonce: the message and when.
    var nonces: [String: (id: String, at: ContinuousClock.Instant)] = [:]
    /// How long a nonce is enforced ("the past few minutes", Discord says).
    var nonceWindow: Duration = .seconds(120)
    var expiredTokens: Set<String> = []
    /// Members holding `FakeDiscordAPI.adminRole`.
    var guildAdmins: Set<String> = []
    /// The users `GET /users/{id}` knows besides the asker and the bot: name and whether a bot.
    var users: [String: (name: String, bot: Bool)] = [:]
    var failures: [(route: String, failure: FakeDiscordAPI.Failure)] = []
    var requests: [Filed] = []
    var nextID = 1_300_000_000_000_000_000
    /// Discord's limits, enforced when set (`FakeDiscordAPI.rateLimits`).
    var rateLimits: FakeDiscordRateLimits?
    /// Each bucket's window (per route and major parameter): when it started, how many it took.
    var buckets: [String: (start: ContinuousClock.Instant, count: Int)] = [:]
    /// Arrivals of accepted requests on routes the global limit counts.
    var globalArrivals: [ContinuousClock.Instant] = []
    /// Requests the limits refused with 429, by route name, "(global)" after it for the global limit.
    var refusals: [String] = []

    init(botToken: String) {
        self.botToken = botToken
    }

    /// The route name and the answer for `request`.
    mutating func answer(_ request: RecordedRequest) -> (String, Answer) {
        let segments = request.path.split(separator: "/").map(String.init)
        guard segments.count >= 2, segments[0] == "api", segments[1] == "v10" else { return ("unknown", Self.error(404, 0, "404: Not Found")) }
        let parts = Array(segments.dropFirst(2))
        let (route, needsBot) = Self.route(method: request.method, parts)
        requests.append(Filed(route: route, request: request, arrived: .now))
        if route == "unknown" { return (route, Self.error(404, 0, "404: Not Found")) }
        var limitHeaders: [(String, String)] = []
        if let limits = rateLimits {
            switch limit(route: route, parts: parts, limits: limits, now: .now) {
            case .refused(let answer):
                refusals.append(answer.headers.contains { $0 == ("X-RateLimit-Global", "true") } ? route + " (global)" : route)
                requests[requests.count - 1].refused = true
                return (route, answer)
            case .allowed(let headers):
                limitHeaders = headers
            }
        }
        if let index = failures.firstIndex(where: { $0.route == route }) {
            let failure = failures.remove(at: index).failure
            switch failure {
            case .slow(let seconds):
                var answer = self.answer(route: route, parts: parts, needsBot: needsBot, request: request)
                answer.delay = seconds
                return (route, answer)
            case .rateLimited(let retryAfter, let global):
                var answer = Self.error(429, 0, "You are being rate limited.")
                answer.body = ["message": "You are being rate limited.", "retry_after": .double(retryAfter), "global": .bool(global)]
                answer.headers = [("Retry-After", String(Int(retryAfter.rounded(.up)))), ("Via", "1.1 google")]
                if global { answer.headers.append(("X-RateLimit-Global", "true")) }
                return (route, answer)
            case .status(let status, let code, let message):
                return (route, Self.error(status, code, message))
            }
        }
        var answer = answer(route: route, parts: parts, needsBot: needsBot, request: request)
        answer.headers += limitHeaders
        return (route, answer)
    }

    // MARK: - Rate limits

    enum Limited {
        case allowed(headers: [(String, String)])
        case refused(Answer)
    }

    /// Counts the request against its bucket and the global limit, as Discord does: a bucket is
    /// a fixed window from its first request, keyed by route and major parameter (a channel, an
    /// interaction's webhook); the global limit is a sliding second over the bot's routes, which
    /// interaction webhooks are exempt from. Every answer in a bucket carries its headers.
    mutating func limit(route: String, parts: [String], limits: FakeDiscordRateLimits, now: ContinuousClock.Instant) -> Limited {
        let exempt = route == FakeDiscordAPI.editOriginal || route == FakeDiscordAPI.followup
        if !exempt {
            let span = limits.globalWindow - limits.tolerance
            globalArrivals.removeAll { $0.duration(to: now) >= span }
            if globalArrivals.count >= limits.global, let oldest = globalArrivals.first {
                let wait = now.duration(to: oldest.advanced(by: span))
                var answer = Self.error(429, 0, "You are being rate limited.")
                answer.body = ["message": "You are being rate limited.", "retry_after": .double(Self.seconds(wait)), "global": true]
                answer.headers = [
                    ("Retry-After", String(Int(Self.seconds(wait).rounded(.up)))), ("X-RateLimit-Global", "true"), ("X-RateLimit-Scope", "global"),
                ]
                return .refused(answer)
            }
        }
        guard let (bucket, limit, window) = Self.bucket(route: route, parts: parts, limits: limits) else {
            if !exempt { globalArrivals.append(now) }
            return .allowed(headers: [])
        }
        var current = buckets[bucket] ?? (now, 0)
        if current.start.duration(to: now) >= window { current = (now, 0) }
        let resetAfter = Self.seconds(now.duration(to: current.start.advanced(by: window)))
        var headers = [
            ("X-RateLimit-Limit", String(limit)), ("X-RateLimit-Reset-After", String((resetAfter * 1000).rounded(.up) / 1000)),
            ("X-RateLimit-Bucket", "fake-\(route)"),
        ]
        guard current.count < limit else {
            headers.append(("X-RateLimit-Remaining", "0"))
            headers.append(("X-RateLimit-Scope", "user"))
            var answer = Self.error(429, 0, "You are being rate limited.")
            answer.body = ["message": "You are being rate limited.", "retry_after": .double(resetAfter), "global": false]
            answer.headers = headers + [("Retry-After", String(Int(resetAfter.rounded(.up))))]
            return .refused(answer)
        }
        current.count += 1
        buckets[bucket] = current
        if !exempt { globalArrivals.append(now) }
        headers.append(("X-RateLimit-Remaining", String(limit - current.count)))
        return .allowed(headers: headers)
    }

    /// The bucket of a route that has one (channel messages, interaction webhooks), with its limit.
    static func bucket(route: String, parts: [String], limits: FakeDiscordRateLimits) -> (String, Int, Duration)? {
        switch route {
        case FakeDiscordAPI.createMessage, FakeDiscordAPI.editMessage:
            return ("\(route)/\(parts[1])", limits.channelMessages, limits.channelWindow)
        case FakeDiscordAPI.editOriginal, FakeDiscordAPI.followup:
            return ("\(route)/\(parts[1])/\(parts[2])", limits.webhook, limits.webhookWindow)
        default:
            return nil
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// The answer of `route` once no scripted failure applies.
    private mutating func answer(route: String, parts: [String], needsBot: Bool, request: RecordedRequest) -> Answer {
        if needsBot, request.header("authorization") != "Bot \(botToken)" { return Self.error(401, 0, "401: Unauthorized") }
        if route == FakeDiscordAPI.editOriginal || route == FakeDiscordAPI.followup, expiredTokens.contains(parts[2]) {
            return Self.error(404, 10015, "Unknown Webhook")
        }
        switch route {
        case FakeDiscordAPI.gatewayBot:
            return Answer(
                status: 200,
                body: [
                    "url": .string(gatewayURL), "shards": 1,
                    "session_start_limit": [
                        "total": 1000, "remaining": .int(sessionStart.remaining), "reset_after": .int(sessionStart.resetAfter), "max_concurrency": 1,
                    ],
                ])
        case FakeDiscordAPI.createMessage:
            return post(channel: parts[1], request: request)
        case FakeDiscordAPI.editMessage:
            guard var message = messages[parts[3]], message.channel == parts[1] else { return Self.error(404, 10008, "Unknown Message") }
            message.body = request.body ?? .null
            message.content = request.body?["content"]?.stringValue ?? message.content
            messages[message.id] = message
            return Answer(status: 200, body: Self.json(message))
        case FakeDiscordAPI.getMessage:
            guard let message = messages[parts[3]], message.channel == parts[1] else { return Self.error(404, 10008, "Unknown Message") }
            return Answer(status: 200, body: Self.json(message))
        case FakeDiscordAPI.editOriginal:
            guard let body = request.body, body.objectValue != nil else { return Self.error(400, 50035, "Invalid Form Body") }
            // What people see: the deferred "thinking…" replaced by this edit's content.
            let original = FakeDiscordMessage(
                id: "original-\(parts[2].prefix(8))", channel: "interaction", content: body["content"]?.stringValue ?? "",
                author: FakeDiscordAPI.botUserID, body: body)
            originals[parts[2]] = original
            return Answer(status: 200, body: ["id": .string(original.id), "content": body["content"] ?? ""])
        case FakeDiscordAPI.followup:
            return post(channel: "webhook", request: request)
        case FakeDiscordAPI.currentUser:
            return Answer(status: 200, body: ["id": .string(FakeDiscordAPI.botUserID), "username": "rhea", "bot": true])
        case FakeDiscordAPI.guild:
            // Every member has @everyone (the guild's own id): Send Messages and little else.
            return Answer(
                status: 200,
                body: [
                    "id": .string(parts[1]), "name": "Rhea test server", "owner_id": .string(FakeDiscordAPI.guildOwner),
                    "roles": [
                        ["id": .string(parts[1]), "name": "@everyone", "permissions": "2048"],
                        ["id": .string(FakeDiscordAPI.adminRole), "name": "Admins", "permissions": "32"],
                        ["id": "1200000000000000002", "name": "Helpers", "permissions": "8192"],
                    ],
                ])
        case FakeDiscordAPI.user:
            let known = users.merging([FakeDiscordInteractions.asker: ("ada", false), FakeDiscordAPI.botUserID: ("rhea", true)]) { mine, _ in mine }
            guard let user = known[parts[1]] else { return Self.error(404, 10013, "Unknown User") }
            return Answer(
                status: 200,
                body: ["id": .string(parts[1]), "username": .string(user.name), "global_name": .string(user.name.uppercased()), "bot": .bool(user.bot)])
        case FakeDiscordAPI.guildMember:
            guard parts[3].allSatisfy(\.isNumber) else { return Self.error(404, 10013, "Unknown User") }
            let roles: [JSONValue] = guildAdmins.contains(parts[3]) ? [.string(FakeDiscordAPI.adminRole)] : ["1200000000000000002"]
            return Answer(status: 200, body: ["user": ["id": .string(parts[3])], "roles": .array(roles)])
        case FakeDiscordAPI.createDM:
            let user = request.body?["recipient_id"]?.stringValue ?? "0"
            return Answer(status: 200, body: ["id": .string("9\(user.suffix(18))"), "type": 1])
        case FakeDiscordAPI.commands:
            let commands = (request.body?.arrayValue ?? []).enumerated().map { index, command -> JSONValue in
                guard case .object(var object) = command else { return command }
                object["id"] = .string(String(1_400_000_000_000_000_000 + index))
                return .object(object)
            }
            return Answer(status: 200, body: .array(commands))
        default:
            return Self.error(404, 0, "404: Not Found")
        }
    }

    private mutating func post(channel: String, request: RecordedRequest) -> Answer {
        guard let body = request.body, body.objectValue != nil else { return Self.error(400, 50035, "Invalid Form Body") }
        // `enforce_nonce`: a create with a nonce used in the channel within the window answers
        // the message it made then, and makes none (Discord's idempotent create).
        let nonce = body["enforce_nonce"]?.boolValue == true ? body["nonce"]?.stringValue : nil
        if let nonce {
            guard nonce.count <= 25 else { return Self.error(400, 50035, "Invalid Form Body") }
            if let seen = nonces["\(channel)/\(nonce)"], seen.at.duration(to: .now) < nonceWindow, let message = messages[seen.id] {
                return Answer(status: 200, body: Self.json(message))
            }
        }
        nextID += 1
        let message = FakeDiscordMessage(
            id: String(nextID), channel: channel, content: body["content"]?.stringValue ?? "", author: FakeDiscordAPI.botUserID, body: body)
        messages[message.id] = message
        if let nonce { nonces["\(channel)/\(nonce)"] = (message.id, .now) }
        return Answer(status: 200, body: Self.json(message))
    }

    static func json(_ message: FakeDiscordMessage) -> JSONValue {
        [
            "id": .string(message.id), "channel_id": .string(message.channel), "content": .string(message.content), "author": ["id": .string(message.author)],
            "embeds": message.body["embeds"] ?? [],
        ]
    }

    static func error(_ status: Int, _ code: Int, _ message: String) -> Answer {
        Answer(status: status, body: ["code": .int(code), "message": .string(message)])
    }

    /// The route name of a method and path (after `/api/v10`), and whether it needs the bot token.
    static func route(method: String, _ parts: [String]) -> (String, Bool) {
        switch (method, parts.count, parts.first) {
        case ("GET", 2, "gateway") where parts[1] == "bot": (FakeDiscordAPI.gatewayBot, true)
        case ("POST", 3, "channels") where parts[2] == "messages": (FakeDiscordAPI.createMessage, true)
        case ("PATCH", 4, "channels") where parts[2] == "messages": (FakeDiscordAPI.editMessage, true)
        case ("GET", 4, "channels") where parts[2] == "messages": (FakeDiscordAPI.getMessage, true)
        case ("PATCH", 5, "webhooks") where parts[3] == "messages" && parts[4] == "@original": (FakeDiscordAPI.editOriginal, false)
        case ("POST", 3, "webhooks"): (FakeDiscordAPI.followup, false)
        case ("POST", 3, "users") where parts[1] == "@me" && parts[2] == "channels": (FakeDiscordAPI.createDM, true)
        case ("GET", 2, "users") where parts[1] == "@me": (FakeDiscordAPI.currentUser, true)
        case ("GET", 2, "users"): (FakeDiscordAPI.user, true)
        case ("GET", 2, "guilds"): (FakeDiscordAPI.guild, true)
        case ("GET", 4, "guilds") where parts[2] == "members": (FakeDiscordAPI.guildMember, true)
        case ("PUT", 3, "applications") where parts[2] == "commands": (FakeDiscordAPI.commands, true)
        case ("PUT", 5, "applications") where parts[2] == "guilds" && parts[4] == "commands": (FakeDiscordAPI.commands, true)
        default: ("unknown", false)
        }
    }
}
