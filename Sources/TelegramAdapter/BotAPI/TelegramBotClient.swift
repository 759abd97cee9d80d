import AsyncHTTPClient
public import Logging
import NIOCore
import NIOHTTP1
public import RelayCore
public import RelayHTTP
public import RelayPlatform

/// The Bot API on the relay's shared `HTTPTransport`: `call` is the one primitive; the typed
/// methods the adapter uses are in `TelegramBotClient+Methods.swift`.
///
/// Every call is `POST <apiURL>/bot<token>/<method>` with a JSON body, answered
/// `{"ok":true,"result":…}` or `{"ok":false,"error_code":…,"description":…,"parameters":…}`.
/// Messages (`sendMessage`, `editMessageText`) first wait their turn in the shared
/// `TelegramRateLimiter`, on the injected clock, so Telegram's limits are kept under load; a 429
/// still pauses the chat and is handed back as `.rateLimited` for the outbox to wait out. There
/// are no retries here. The token is in every URL, so neither URLs nor the token ever reach a
/// log or an error: those name the method only.
public struct TelegramBotClient: Sendable {
    public static let defaultTimeout: Duration = .seconds(15)
    /// Longest answer read: a `getUpdates` of 100 updates is well under this.
    static let maxResponseBytes = 8 * 1024 * 1024
    /// How much longer than its long-poll timeout a `getUpdates` may take to answer.
    static let pollGrace: Duration = .seconds(10)

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

    /// Calls `method` with `body` and returns its `result`.
    ///
    /// - Parameter timeout: the whole exchange's limit; `self.timeout` when nil.
    public func call(_ method: String, _ body: JSONValue, timeout: Duration? = nil) async throws(TelegramAPIError) -> JSONValue {
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
