import AsyncHTTPClient
public import Logging
import NIOCore
import NIOHTTP1
public import RelayCore
public import RelayHTTP
import RelayPipeline
public import RelayPlatform

/// Telegram's Bot API as the adapter sees it: one primitive, `call`, with the typed methods the
/// adapter uses (`sendMessage`, `editMessageText`, `getUpdates`, `setMyCommands`, `getMe`…) in
/// extensions, so a test double implements a single method.
///
/// `TelegramBotClient` is the implementation over HTTP; it also paces messages to a chat
/// (`sendMessage`, `editMessageText`) within Telegram's limits, so every caller is paced alike.
public protocol TelegramBotAPI: Sendable {
    /// Calls `method` with `body` and returns its `result`.
    ///
    /// - Parameter timeout: the whole exchange's limit; the implementation's own when nil.
    /// - Throws: a `TelegramAPIError` for every failure, `ok:false` answers included; its
    ///   `deliveryOutcome` says whether to retry.
    func call(_ method: String, _ body: JSONValue, timeout: Duration?) async throws(TelegramAPIError) -> TelegramResult

    /// Downloads a file `getFile` named, from `<apiURL>/file/bot<token>/<filePath>`, at most
    /// `maxBytes` (read as it arrives, and cut off there).
    func downloadFile(path: String, maxBytes: Int, timeout: Duration) async throws(TelegramAPIError) -> TelegramFileDownload
}

/// What a capped file download brought back.
public enum TelegramFileDownload: Sendable, Hashable {
    case bytes([UInt8])
    /// Larger than the cap; `declared` is the size the answer announced, when it did.
    case tooLarge(declared: Int?)
}

/// Who the bot is, as `getMe` answers.
public struct TelegramBotIdentity: Sendable, Hashable {
    public var id: Int64
    /// Without `@`: what group commands carry (`/translate@RheaBot`) and inline queries start with.
    public var username: String
    /// Whether inline mode is switched on in @BotFather (`/setinline`).
    public var supportsInlineQueries: Bool

    public init(id: Int64, username: String, supportsInlineQueries: Bool) {
        self.id = id
        self.username = username
        self.supportsInlineQueries = supportsInlineQueries
    }
}

extension TelegramBotAPI {
    /// Test doubles that serve no files.
    public func downloadFile(path: String, maxBytes: Int, timeout: Duration) async throws(TelegramAPIError) -> TelegramFileDownload {
        throw .invalidRequest(endpoint: "file", reason: "this Bot API client downloads no files")
    }

    /// Calls `method` with `body` within the implementation's own time limit.
    public func call(_ method: String, _ body: JSONValue) async throws(TelegramAPIError) -> TelegramResult {
        try await call(method, body, timeout: nil)
    }

    /// How much longer than its long-poll timeout a `getUpdates` may take to answer.
    static var pollGrace: Duration { .seconds(10) }

    /// `getMe`: the bot's id and username.
    public func getMe() async throws(TelegramAPIError) -> TelegramBotIdentity {
        let me = try await call("getMe", [:]).decode(TelegramMe.self, method: "getMe")
        guard !me.username.isEmpty else { throw .malformed(endpoint: "getMe", reason: "field `result.username` is null or empty") }
        return TelegramBotIdentity(id: me.id, username: me.username, supportsInlineQueries: me.supportsInlineQueries ?? false)
    }

    /// `getUpdates`: waits up to `timeout` seconds for updates after `offset` (which confirms
    /// every update below it).
    ///
    /// The HTTP time limit is the long-poll timeout plus `pollGrace`. Cancelling the calling task
    /// ends the call at once (the transport cancels the request) with `.cancelled`.
    ///
    /// Each element is decoded on its own: one that cannot be read is handed back as such, with
    /// its `update_id` when it has one, and the others are still read.
    public func getUpdates(
        offset: Int64?, limit: Int, timeout: Int, allowedUpdates: [String]
    ) async throws(TelegramAPIError) -> [TelegramPolledUpdate] {
        let seconds = min(600, max(0, timeout))
        var body: [String: JSONValue] = [
            "limit": .int(min(100, max(1, limit))), "timeout": .int(seconds), "allowed_updates": .array(allowedUpdates.map { .string($0) }),
        ]
        if let offset { body["offset"] = .int(Int(offset)) }
        return try await call("getUpdates", .object(body), timeout: .seconds(seconds) + Self.pollGrace)
            .decode([TelegramPolledUpdate].self, method: "getUpdates")
    }

    /// `deleteWebhook`: needed before polling, which Telegram refuses while a webhook is set.
    public func deleteWebhook(dropPendingUpdates: Bool) async throws(TelegramAPIError) {
        _ = try await call("deleteWebhook", ["drop_pending_updates": .bool(dropPendingUpdates)])
    }

    /// `setWebhook`: Telegram then POSTs each update to `url` with `secretToken` (1–256 of
    /// `A-Z a-z 0-9 _ -`, see `TelegramWebhookSecret`) in `X-Telegram-Bot-Api-Secret-Token`.
    public func setWebhook(url: String, secretToken: String?, allowedUpdates: [String], maxConnections: Int? = nil) async throws(TelegramAPIError) {
        var body: [String: JSONValue] = ["url": .string(url), "allowed_updates": .array(allowedUpdates.map { .string($0) })]
        if let secretToken { body["secret_token"] = .string(secretToken) }
        if let maxConnections { body["max_connections"] = .int(min(100, max(1, maxConnections))) }
        _ = try await call("setWebhook", .object(body))
    }

    /// `setMyCommands` with a body built from the command table (`bots/telegram/commands.json`).
    public func setMyCommands(_ body: JSONValue) async throws(TelegramAPIError) {
        _ = try await call("setMyCommands", body)
    }

    /// `answerCallbackQuery`: stops the button's spinner, optionally with a toast or an alert.
    public func answerCallbackQuery(id: String, text: String? = nil, showAlert: Bool = false) async throws(TelegramAPIError) {
        var body: [String: JSONValue] = ["callback_query_id": .string(id)]
        if let text { body["text"] = .string(text) }
        if showAlert { body["show_alert"] = true }
        _ = try await call("answerCallbackQuery", .object(body))
    }

    /// `answerInlineQuery`: not paced; an inline answer is not a message in a chat.
    public func answerInlineQuery(_ body: JSONValue) async throws(TelegramAPIError) {
        _ = try await call("answerInlineQuery", body)
    }

    /// `sendChatAction` ("typing" for about 5 s, or until the next message): not paced.
    public func sendChatAction(chatID: Int64, action: String = "typing") async throws(TelegramAPIError) {
        _ = try await call("sendChatAction", ["chat_id": .int(Int(chatID)), "action": .string(action)])
    }

    /// `sendMessage` (paced for `body["chat_id"]`); the new message's id.
    public func sendMessage(_ body: JSONValue) async throws(TelegramAPIError) -> Int64 {
        try await call("sendMessage", body).decode(TelegramSentMessage.self, method: "sendMessage").messageID
    }

    /// `editMessageText` (paced for `body["chat_id"]`; an inline message's edit, by
    /// `inline_message_id`, is not in a chat the bot paces). An edit to the text the message
    /// already has succeeds: the message shows what it should.
    public func editMessageText(_ body: JSONValue) async throws(TelegramAPIError) {
        do throws(TelegramAPIError) {
            _ = try await call("editMessageText", body)
        } catch {
            guard error.isMessageNotModified else { throw error }
        }
    }
}

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
    public func call(_ method: String, _ body: JSONValue, timeout: Duration?) async throws(TelegramAPIError) -> TelegramResult {
        guard let chat = try Self.pacedChat(method, body) else { return try await exchange(method, body, timeout: timeout) }
        try await waitForTurn(chat: chat, method: method)
        // However the exchange ends, Telegram may have counted the message by now.
        defer { limiter.sent(chat: chat, at: clock.now) }
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
    private func exchange(_ method: String, _ body: JSONValue, timeout: Duration?) async throws(TelegramAPIError) -> TelegramResult {
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

    /// Downloads a file `getFile` answered with: `GET <apiURL>/file/bot<token>/<path>`, under the
    /// configured API base only (the path is Telegram's, checked to stay a relative path of
    /// plain segments), streamed and cut off at `maxBytes`.
    public func downloadFile(path: String, maxBytes: Int, timeout: Duration) async throws(TelegramAPIError) -> TelegramFileDownload {
        let endpoint = "file"
        guard Self.isFilePath(path) else { throw .malformed(endpoint: "getFile", reason: "file_path is not a plain relative path") }
        var request = try makeRequest(endpoint, [:])
        request.url = apiURL + "/file/bot" + token.secret + "/" + path
        request.method = .GET
        request.headers = ["User-Agent": "rhea-relay"]
        request.body = nil
        let download: HTTPTransport.Download
        do throws(HTTPFailure) {
            download = try await transport.download(request, timeout: timeout, maxBytes: maxBytes)
        } catch {
            let failure = TelegramAPIError(error, endpoint: endpoint)
            log(failure)
            throw failure
        }
        switch download {
        case .tooLarge(let declared):
            return .tooLarge(declared: declared)
        case .complete(let answer) where answer.isSuccess:
            return .bytes(answer.body)
        case .complete(let answer):
            // Telegram answers a file it does not know with its JSON error; a proxy with a page.
            do throws(TelegramAPIError) {
                _ = try Self.interpret(answer, method: endpoint)
                throw .malformed(endpoint: endpoint, reason: "HTTP \(answer.status)")
            } catch {
                let failure = error.redacting(token)
                log(failure)
                throw failure
            }
        }
    }

    /// `voice/file_12.oga`: segments of letters, digits, `_ - .`, none of them `.` or `..`.
    static func isFilePath(_ path: String) -> Bool {
        guard (1...512).contains(path.utf8.count) else { return false }
        return path.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { segment in
            !segment.isEmpty && segment != "." && segment != ".."
                && segment.utf8.allSatisfy { isMethodByte($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }
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

    static func isMethodByte(_ byte: UInt8) -> Bool {
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
            // This replica lost the delivery lease meanwhile: the holder sends it, paced with its own.
            guard DeliveryPermit.isHeld else { throw .rateLimited(endpoint: method, retryAfter: .zero) }
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
    static let lateTolerance = TelegramRateLimiter.lateTolerance
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

extension TelegramBotClient {
    /// The longest `description` kept from Telegram's answer.
    static let maxDescriptionLength = 200

    /// The `result` of an `ok:true` answer; anything else as the matching error.
    ///
    /// - 429 (status or `error_code`): `.rateLimited`, waiting `parameters.retry_after`, else
    ///   `Retry-After`, else 1 s (each read and clamped by `RetryAfter`).
    /// - 5xx: `.server`.
    /// - `parameters.migrate_to_chat_id`: refused, `.migrated`.
    /// - Other `ok:false` (or a 4xx without JSON): refused, `.error` with `error_code` and `description`.
    /// - A 2xx that is not the Bot API's JSON, or has no `result`: `.malformed`.
    public static func interpret(_ answer: HTTPAnswer, method: String) throws(TelegramAPIError) -> TelegramResult {
        try interpret(status: answer.status, retryAfter: answer.headers.first(name: "Retry-After"), body: answer.body, method: method)
    }

    /// `interpret` from the parts of an answer that matter: its status, its `Retry-After` header
    /// and its body.
    static func interpret(status: Int, retryAfter: String?, body: [UInt8], method: String) throws(TelegramAPIError) -> TelegramResult {
        let isSuccess = (200..<300).contains(status)
        let json = TelegramAnswerEnvelope.read(body)
        let errorCode = UntrustedNumber.checked(json?.errorCode, in: 100...599, source: "telegram", field: "error_code")
        if status == 429 || errorCode == 429 {
            let fromBody = json?.retryAfter.flatMap { RetryAfter.clamp(seconds: $0, source: "telegram") }
            let fromHeader = RetryAfter.parse(retryAfter, source: "telegram")
            throw .rateLimited(endpoint: method, retryAfter: fromBody ?? fromHeader ?? .seconds(1))
        }
        let ok = json?.ok
        if isSuccess, ok == true {
            guard json?.hasResult == true else { throw .malformed(endpoint: method, reason: "no result") }
            return TelegramResult(body: body)
        }
        let code = errorCode ?? status
        if status >= 500 || code >= 500 { throw .server(endpoint: method, status: max(status, code)) }
        guard ok != nil else {
            if isSuccess { throw .malformed(endpoint: method, reason: json == nil ? "not JSON" : "no \"ok\"") }
            // A 4xx from a proxy in front of the Bot API: no description to keep.
            throw .refused(endpoint: method, .error(code: status, description: ""))
        }
        if let newChatID = json?.migrateToChatID {
            throw .refused(endpoint: method, .migrated(newChatID: newChatID))
        }
        throw .refused(endpoint: method, .error(code: code, description: boundedDescription(json?.description ?? "")))
    }

    /// Telegram's description as one printable line of at most `maxDescriptionLength`
    /// characters: it goes into logs and the outbox.
    static func boundedDescription(_ text: String) -> String {
        let line = String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : Character($0) })
        return line.count > maxDescriptionLength ? String(line.prefix(maxDescriptionLength)) + "…" : line
    }
}
