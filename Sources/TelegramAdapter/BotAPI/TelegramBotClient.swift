import AsyncHTTPClient
public import Logging
import NIOCore
import NIOHTTP1
public import RelayCore
public import RelayHTTP
public import RelayPlatform

/// `TelegramBotAPI` on the relay's shared `HTTPTransport`.
///
/// Every call is `POST <apiURL>/bot<token>/<method>` with a JSON body, answered
/// `{"ok":true,"result":…}` or `{"ok":false,"error_code":…,"description":…,"parameters":…}`.
/// Messages (`sendMessage`, `editMessageText`) first wait their turn in the shared
/// `TelegramRateLimiter`, on the injected clock, so Telegram's limits are kept under load; a 429
/// still pauses the chat and is handed back as `.rateLimited` for the outbox to wait out. There
/// are no retries here. The token is in every URL, so neither URLs nor the token ever reach a
/// log or an error: those name the method only.
public struct TelegramBotClient: TelegramBotAPI {
    public static let defaultTimeout: Duration = .seconds(15)
    /// Longest answer read: a `getUpdates` of 100 updates is well under this.
    static let maxResponseBytes = 8 * 1024 * 1024

    let transport: HTTPTransport
    /// The Bot API base without a trailing slash, e.g. `https://api.telegram.org`.
    public let apiURL: String
    let token: TelegramToken
    /// Shared by every client of the bot, so concurrent senders share the limits.
    public let limiter: TelegramRateLimiter
    let clock: any RelayClock
    let logger: Logger
    public let timeout: Duration
    /// How long a message may wait for its turn before it is handed back as rate limited (the
    /// outbox then waits instead of a task).
    public let maxPacingWait: Duration

    public init(
        transport: HTTPTransport, apiURL: String, token: TelegramToken, limiter: TelegramRateLimiter = .init(), clock: any RelayClock = SystemClock(),
        logger: Logger, timeout: Duration = TelegramBotClient.defaultTimeout, maxPacingWait: Duration = .seconds(5)
    ) {
        self.transport = transport
        var base = apiURL.trimmingASCIIWhitespace()
        while base.hasSuffix("/") { base.removeLast() }
        self.apiURL = base
        self.token = token
        self.limiter = limiter
        self.clock = clock
        self.timeout = timeout
        self.maxPacingWait = maxPacingWait
        var logger = logger
        logger[metadataKey: "platform"] = "telegram"
        self.logger = logger
    }

    /// Calls `method` with `body` and returns its `result`; a message to a chat first waits its
    /// turn (see `pacedChat`), and a 429 for it pauses that chat for every sender of this bot.
    ///
    /// - Parameter timeout: the whole exchange's limit; `self.timeout` when nil.
    public func call(_ method: String, _ body: JSONValue, timeout: Duration?) async throws(TelegramAPIError) -> JSONValue {
        guard let chat = try Self.pacedChat(method, body) else { return try await exchange(method, body, timeout: timeout) }
        try await waitForTurn(chat: chat, method: method)
        do throws(TelegramAPIError) {
            return try await exchange(method, body, timeout: timeout)
        } catch {
            if case .rateLimited(_, let retryAfter) = error {
                limiter.pause(chat: chat, until: clock.now + retryAfter)
            }
            throw error
        }
    }

    /// One exchange with the Bot API, without pacing.
    private func exchange(_ method: String, _ body: JSONValue, timeout: Duration?) async throws(TelegramAPIError) -> JSONValue {
        let limit = timeout ?? self.timeout
        let request = try makeRequest(method, body)
        let answer: HTTPAnswer
        do throws(HTTPFailure) {
            answer = try await transport.exchange(request, timeout: limit, maxBodyBytes: Self.maxResponseBytes)
        } catch {
            let failure = TelegramAPIError(error, endpoint: method)
            log(failure)
            throw failure
        }
        do throws(TelegramAPIError) {
            let result = try Self.interpret(answer, method: method)
            logger.debug("Telegram answered", metadata: ["telegram.method": "\(method)", "telegram.status": "\(answer.status)"])
            return result
        } catch {
            let failure = error.redacting(token)
            log(failure)
            throw failure
        }
    }

    /// The HTTP request: the token goes into the path, and nowhere else.
    func makeRequest(_ method: String, _ body: JSONValue) throws(TelegramAPIError) -> HTTPClientRequest {
        // A method name is one path segment of letters; anything else could leave `/bot<token>/`.
        guard (1...64).contains(method.utf8.count), method.utf8.allSatisfy(Self.isMethodByte) else {
            throw .invalidRequest(endpoint: "unknown", reason: "not a Bot API method name")
        }
        let lowered = apiURL.lowercased()
        guard lowered.hasPrefix("https://") || lowered.hasPrefix("http://") else {
            throw .invalidRequest(endpoint: method, reason: "the Telegram API URL is not an http(s) URL (TELEGRAM_API_URL)")
        }
        guard !token.secret.isEmpty, token.secret.utf8.allSatisfy(Self.isTokenByte) else {
            throw .invalidRequest(endpoint: method, reason: "the bot token is not a Bot API token (TELEGRAM_BOT_TOKEN)")
        }
        guard let bytes = body.serialized() else {
            throw .invalidRequest(endpoint: method, reason: "the body holds a number JSON cannot express")
        }
        var request = HTTPClientRequest(url: apiURL + "/bot" + token.secret + "/" + method)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "rhea-relay")
        request.body = .bytes(ByteBuffer(bytes: bytes))
        return request
    }

    private static func isMethodByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: false
        }
    }

    /// `123456:ABC-def_…`; anything else (a slash, a space) would change the URL's meaning.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        isMethodByte(byte) || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }

    // MARK: - Pacing

    /// The chat a call's message is paced for: `sendMessage` and `editMessageText` to a chat, by
    /// its numeric `chat_id`. Nil for every other method, and for an inline message's edit (by
    /// `inline_message_id`), which is in no chat the bot paces.
    static func pacedChat(_ method: String, _ body: JSONValue) throws(TelegramAPIError) -> Int64? {
        guard method == "sendMessage" || method == "editMessageText" else { return nil }
        if method == "editMessageText", body["chat_id"] == nil, body["inline_message_id"] != nil { return nil }
        return try chatID(in: body, method: method)
    }

    /// Books the chat's next instant and sleeps until it; hands the message back as rate limited
    /// when that is more than `maxPacingWait` away, or when a 429 paused the chat meanwhile.
    ///
    /// A task that wakes well after its instant (a busy process) books again instead of sending
    /// late: messages that all woke late together would otherwise reach Telegram together, more
    /// than its limits allow in one second, though each was booked within them.
    func waitForTurn(chat: Int64, method: String) async throws(TelegramAPIError) {
        for attempt in 0...Self.lateRebookings {
            let booked = clock.now
            switch limiter.reserve(chat: chat, now: booked, maxWait: maxPacingWait) {
            case .refused(let wait):
                logger.debug("Telegram pacing handed a message back", metadata: ["telegram.method": "\(method)", "telegram.wait": "\(wait)"])
                throw .rateLimited(endpoint: method, retryAfter: wait)
            case .granted(let wait) where wait > .zero:
                do { try await clock.sleep(for: wait) } catch { throw .cancelled(endpoint: method) }
                if attempt < Self.lateRebookings, clock.now.duration(since: booked + wait) > Self.lateTolerance { continue }
            case .granted:
                break
            }
            break
        }
        let now = clock.now
        if let until = limiter.pausedUntil(chat: chat, now: now) {
            throw .rateLimited(endpoint: method, retryAfter: until.duration(since: now))
        }
    }

    /// How late a woken message may be and still go; and how often it books again when later.
    static let lateTolerance: Duration = .milliseconds(100)
    static let lateRebookings = 2

    /// The numeric `chat_id` a message goes to (an integer, or one written as a string).
    static func chatID(in body: JSONValue, method: String) throws(TelegramAPIError) -> Int64 {
        switch body["chat_id"] {
        case .int(let id): return Int64(id)
        case .string(let text): if let id = Int64(text) { return id }
        default: break
        }
        throw .invalidRequest(endpoint: method, reason: "chat_id is not a numeric chat id")
    }

    /// One line per failed call: a notice for a 429 (Telegram's limits were hit despite the
    /// pacing), debug for the rest (the outbox reports delivery failures).
    private func log(_ error: TelegramAPIError) {
        if case .rateLimited(let method, let retryAfter) = error {
            logger.notice(
                "Telegram rate limited a call", metadata: ["telegram.method": "\(method)", "telegram.retry_after": "\(TelegramAPIError.seconds(retryAfter))"])
        } else {
            logger.debug("Telegram call failed", metadata: ["telegram.method": "\(error.endpoint)", "telegram.error": "\(error.label)"])
        }
    }
}

extension String {
    fileprivate func trimmingASCIIWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        let start = firstIndex { !isSpace($0) } ?? endIndex
        let end = lastIndex { !isSpace($0) }.map { index(after: $0) } ?? start
        return String(self[start..<end])
    }
}
