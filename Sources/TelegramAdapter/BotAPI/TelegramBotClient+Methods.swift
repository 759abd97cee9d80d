import Logging
public import RelayCore
public import RelayPlatform

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

extension TelegramBotClient {
    /// `getMe`: the bot's id and username.
    public func getMe() async throws(TelegramAPIError) -> TelegramBotIdentity {
        let result = try await call("getMe", [:])
        guard let id = result["id"]?.intValue, let username = result["username"]?.stringValue, !username.isEmpty else {
            throw .malformed(endpoint: "getMe", reason: "no id or username")
        }
        return TelegramBotIdentity(id: Int64(id), username: username, supportsInlineQueries: result["supports_inline_queries"]?.boolValue ?? false)
    }

    /// `getUpdates`: waits up to `timeout` seconds for updates after `offset` (which confirms
    /// every update below it).
    ///
    /// The HTTP time limit is the long-poll timeout plus `pollGrace`. Cancelling the calling task
    /// ends the call at once (the transport cancels the request) with `.cancelled`.
    public func getUpdates(offset: Int64?, limit: Int, timeout: Int, allowedUpdates: [String]) async throws(TelegramAPIError) -> [JSONValue] {
        let seconds = min(600, max(0, timeout))
        var body: [String: JSONValue] = [
            "limit": .int(min(100, max(1, limit))), "timeout": .int(seconds), "allowed_updates": .array(allowedUpdates.map { .string($0) }),
        ]
        if let offset { body["offset"] = .int(Int(offset)) }
        let result = try await call("getUpdates", .object(body), timeout: .seconds(seconds) + Self.pollGrace)
        guard let updates = result.arrayValue else { throw .malformed(endpoint: "getUpdates", reason: "result is not a list") }
        return updates
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

    /// `sendMessage`, paced for `body["chat_id"]`; the new message's id.
    public func sendMessage(_ body: JSONValue) async throws(TelegramAPIError) -> Int64 {
        let result = try await paced("sendMessage", body)
        guard let id = result["message_id"]?.intValue else { throw .malformed(endpoint: "sendMessage", reason: "no message_id") }
        return Int64(id)
    }

    /// `editMessageText`, paced for `body["chat_id"]` (an inline message's edit, by
    /// `inline_message_id`, is not in a chat the bot paces). An edit to the text the message
    /// already has succeeds: the message shows what it should.
    public func editMessageText(_ body: JSONValue) async throws(TelegramAPIError) {
        do throws(TelegramAPIError) {
            if body["chat_id"] == nil, body["inline_message_id"] != nil {
                _ = try await call("editMessageText", body)
            } else {
                _ = try await paced("editMessageText", body)
            }
        } catch {
            guard error.isMessageNotModified else { throw error }
            logger.debug("Telegram edit left the message as it was", metadata: ["telegram.method": "editMessageText"])
        }
    }

    // MARK: - Pacing

    /// Calls `method` once the limiter allows a message to the body's chat; a 429 pauses that
    /// chat for every sender of this bot.
    func paced(_ method: String, _ body: JSONValue) async throws(TelegramAPIError) -> JSONValue {
        let chat = try Self.chatID(in: body, method: method)
        try await waitForTurn(chat: chat, method: method)
        do throws(TelegramAPIError) {
            return try await call(method, body)
        } catch {
            if case .rateLimited(_, let retryAfter) = error {
                limiter.pause(chat: chat, until: clock.now + retryAfter)
            }
            throw error
        }
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
}
