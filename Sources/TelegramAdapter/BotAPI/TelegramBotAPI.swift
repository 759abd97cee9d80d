public import RelayCore
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
    func call(_ method: String, _ body: JSONValue, timeout: Duration?) async throws(TelegramAPIError) -> JSONValue
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
    /// Calls `method` with `body` within the implementation's own time limit.
    public func call(_ method: String, _ body: JSONValue) async throws(TelegramAPIError) -> JSONValue {
        try await call(method, body, timeout: nil)
    }

    /// How much longer than its long-poll timeout a `getUpdates` may take to answer.
    static var pollGrace: Duration { .seconds(10) }

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

    /// `sendMessage` (paced for `body["chat_id"]`); the new message's id.
    public func sendMessage(_ body: JSONValue) async throws(TelegramAPIError) -> Int64 {
        let result = try await call("sendMessage", body)
        guard let id = result["message_id"]?.intValue else { throw .malformed(endpoint: "sendMessage", reason: "no message_id") }
        return Int64(id)
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
