import Foundation
import RelayCore

/// One answer of `FakeTelegramBotAPI` (an `Error` so that checks can return it as a `Result` failure).
struct FakeTelegramAnswer: Error, Sendable {
    var status: Int
    /// The JSON answered, for the record; nil for an HTML error page.
    var json: JSONValue?
    var body: [UInt8]
    var contentType: String

    static func ok(_ result: JSONValue, description: String? = nil) -> FakeTelegramAnswer {
        var object: [String: JSONValue] = ["ok": true, "result": result]
        if let description { object["description"] = .string(description) }
        return json(.object(object), status: 200)
    }

    static func error(_ code: Int, _ description: String, parameters: JSONValue? = nil) -> FakeTelegramAnswer {
        var object: [String: JSONValue] = ["ok": false, "error_code": .int(code), "description": .string(description)]
        if let parameters { object["parameters"] = parameters }
        return json(.object(object), status: code)
    }

    static func badRequest(_ description: String) -> FakeTelegramAnswer {
        error(400, description.hasPrefix("Bad Request: ") ? description : "Bad Request: \(description)")
    }

    static func json(_ value: JSONValue, status: Int) -> FakeTelegramAnswer {
        FakeTelegramAnswer(status: status, json: value, body: value.encoded(), contentType: "application/json")
    }

    /// The page Telegram's nginx front answers a 5xx with.
    static func gatewayPage(_ status: Int) -> FakeTelegramAnswer {
        let reasons = [502: "Bad Gateway", 503: "Service Temporarily Unavailable", 504: "Gateway Time-out"]
        let title = "\(status) \(reasons[status] ?? "Error")"
        let page =
            "<html>\r\n<head><title>\(title)</title></head>\r\n<body>\r\n<center><h1>\(title)</h1></center>\r\n"
            + "<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
        return FakeTelegramAnswer(status: status, json: nil, body: Array(page.utf8), contentType: "text/html")
    }
}

/// What the responder does with one request.
enum FakeTelegramStep: Sendable {
    case answer(FakeTelegramAnswer)
    case slow(Double, FakeTelegramAnswer)
    case drop
    /// A `getUpdates` that waits for updates until its deadline.
    case poll(FakeTelegramPoll)
}

struct FakeTelegramPoll: Sendable {
    var generation: Int
    var deadline: ContinuousClock.Instant
    var limit: Int
}

/// What `FakeTelegramBotAPI` keeps, and how it answers each method.
struct FakeTelegramBotAPIState: Sendable {
    struct MessageKey: Hashable, Sendable {
        var chat: Int64
        var id: Int
    }

    struct Send: Sendable {
        var chat: Int64
        var at: ContinuousClock.Instant
        var isEdit: Bool
    }

    struct Query: Sendable {
        var issued: ContinuousClock.Instant
        var answered = false
    }

    struct CommandsKey: Hashable, Sendable {
        var scope: String
        var languageCode: String
    }

    /// The methods served, by lower-cased name (Telegram's method names are case-insensitive).
    static let methods: [String: String] = Dictionary(
        uniqueKeysWithValues: [
            "getMe", "getUpdates", "setWebhook", "deleteWebhook", "getWebhookInfo", "sendMessage", "editMessageText",
            "editMessageReplyMarkup", "deleteMessage", "answerCallbackQuery", "answerInlineQuery", "sendChatAction", "setMyCommands",
            "getMyCommands", "deleteMyCommands", "setMessageReaction", "getFile", "getChatMember",
        ].map { ($0.lowercased(), $0) })

    /// Update kinds delivered when `allowed_updates` was never given (or given empty).
    static let defaultExcludedUpdates: Set<String> = ["chat_member", "message_reaction", "message_reaction_count"]

    static let chatActions: Set<String> = [
        "typing", "upload_photo", "record_video", "upload_video", "record_voice", "upload_voice", "upload_document", "choose_sticker",
        "find_location", "record_video_note", "upload_video_note",
    ]

    static let tooOld = "Bad Request: query is too old and response timeout expired or query ID is invalid"
    static let notModified =
        "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message"

    let token: String
    let botID: Int64
    let botUsername: String
    let botFirstName: String

    var calls: [RecordedTelegramCall] = []
    /// Failures to answer with, in order; one with `when` only for calls whose parameters it accepts.
    var failures: [(method: String, failure: FakeTelegramFailure, when: (@Sendable (JSONValue) -> Bool)?)] = []
    var strictHTMLEntities = true
    var allowsAnyWebhookURL = false

    // Updates.
    var pending: [JSONValue] = []
    var lastUpdateID = 0
    var offsets: [Int?] = []
    var confirmed: [Int] = []
    var delivered: [Int] = []
    var filtered: [Int] = []
    var pollGeneration = 0
    /// The most `getUpdates` calls ever waiting at once whose clients had not closed them.
    var mostPollsWaiting = 0
    var allowedUpdates: [String]?
    var webhook: FakeTelegramWebhook?

    // Messages.
    var messages: [FakeTelegramMessage] = []
    var messageIndex: [MessageKey: Int] = [:]
    var nextMessageID: [Int64: Int] = [:]
    var userMessages: [MessageKey: JSONValue] = [:]
    var chats: [Int64: JSONValue] = [:]
    /// Each group's administrators (`getChatMember` says `administrator`); everyone else is a
    /// `member`.
    var administrators: [Int64: Set<Int64>] = [:]
    var migrated: [Int64: Int64] = [:]

    // Pacing.
    var enforceRateLimits = true
    /// `FakeTelegramBotAPI.fileLimit`.
    var fileLimit = FakeTelegramBotAPI.botFileLimit
    var rateLimits = FakeTelegramRateLimits()
    var sends: [Send] = []
    var sendsByChat: [Int64: [Send]] = [:]

    // Queries.
    var inlineQueries: [String: Query] = [:]
    var callbackQueries: [String: Query] = [:]
    var inlineQueryDeadline: Duration = .seconds(10)
    var callbackQueryDeadline: Duration = .seconds(15)
    var inlineAnswers: [FakeTelegramInlineAnswer] = []
    var callbackAnswers: [FakeTelegramCallbackAnswer] = []
    var queriesIssued = 0

    // Files people sent (voice notes…), by file_id; served by `getFile` and `/file/bot<token>/…`.
    var files: [String: FakeTelegramFile] = [:]

    // Commands, by scope and language.
    var commands: [CommandsKey: [JSONValue]] = [:]

    init(token: String, botID: Int64, botUsername: String, botFirstName: String) {
        self.token = token
        self.botID = botID
        self.botUsername = botUsername
        self.botFirstName = botFirstName
    }

    // MARK: - Routing

    /// The method name, the parameters and what to do for `request`.
    mutating func begin(_ request: RecordedRequest, now: ContinuousClock.Instant) -> (method: String, parameters: JSONValue, step: FakeTelegramStep) {
        let segments = request.path.split(separator: "/").map(String.init)
        if segments.first == "file" { return ("file", [:], .answer(fileDownload(segments))) }
        let requested = segments.last ?? ""
        guard segments.count == 2, segments[0].hasPrefix("bot") else {
            return (requested, [:], .answer(.error(404, "Not Found")))
        }
        guard String(segments[0].dropFirst(3)) == token else {
            return (Self.methods[requested.lowercased()] ?? requested, [:], .answer(.error(401, "Unauthorized")))
        }
        guard let method = Self.methods[requested.lowercased()] else {
            return (requested, [:], .answer(.error(404, "Not Found")))
        }
        guard let parameters = Self.parameters(request) else {
            return (method, [:], .answer(.badRequest("can't parse JSON object")))
        }
        if let index = failures.firstIndex(where: { $0.method == method && ($0.when?(parameters) ?? true) }) {
            let failure = failures.remove(at: index).failure
            switch failure {
            case .tooManyRequests(let retryAfter):
                return (method, parameters, .answer(Self.tooManyRequests(retryAfter)))
            case .server(let status):
                return (method, parameters, .answer(status == 500 ? .error(500, "Internal Server Error") : .gatewayPage(status)))
            case .migrate(let chat):
                return (method, parameters, .answer(Self.migrateAnswer(chat)))
            case .badRequest(let description):
                return (method, parameters, .answer(.badRequest(description)))
            case .forbidden(let description):
                return (method, parameters, .answer(.error(403, description.hasPrefix("Forbidden: ") ? description : "Forbidden: \(description)")))
            case .drop:
                return (method, parameters, .drop)
            case .slow(let seconds):
                let step = handle(method, parameters, now: now)
                if case .answer(let answer) = step { return (method, parameters, .slow(seconds, answer)) }
                return (method, parameters, step)
            }
        }
        return (method, parameters, handle(method, parameters, now: now))
    }

    private mutating func handle(_ method: String, _ p: JSONValue, now: ContinuousClock.Instant) -> FakeTelegramStep {
        switch method {
        case "getMe":
            return .answer(
                .ok([
                    "id": .int(Int(botID)), "is_bot": true, "first_name": .string(botFirstName), "username": .string(botUsername),
                    "can_join_groups": true, "can_read_all_group_messages": false, "supports_inline_queries": true,
                    "can_connect_to_business": false, "has_main_web_app": false,
                ]))
        case "getUpdates": return getUpdates(p, now: now)
        case "setWebhook": return .answer(setWebhook(p, now: now))
        case "deleteWebhook": return .answer(deleteWebhook(p))
        case "getWebhookInfo": return .answer(webhookInfo())
        case "sendMessage": return .answer(sendMessage(p, now: now))
        case "editMessageText": return .answer(editMessageText(p, now: now))
        case "editMessageReplyMarkup": return .answer(editMessageReplyMarkup(p, now: now))
        case "deleteMessage": return .answer(deleteMessage(p))
        case "answerCallbackQuery": return .answer(answerCallbackQuery(p, now: now))
        case "answerInlineQuery": return .answer(answerInlineQuery(p, now: now))
        case "sendChatAction": return .answer(sendChatAction(p))
        case "getChatMember": return .answer(getChatMember(p))
        case "setMyCommands": return .answer(setMyCommands(p))
        case "getMyCommands": return .answer(getMyCommands(p))
        case "deleteMyCommands": return .answer(deleteMyCommands(p))
        case "setMessageReaction": return .answer(setMessageReaction(p))
        case "getFile": return .answer(getFile(p))
        default: return .answer(.error(404, "Not Found"))
        }
    }

    // MARK: - Updates

    /// Notes what an update tells about chats, messages and queries, before it is handed over.
    mutating func note(_ update: JSONValue, now: ContinuousClock.Instant) {
        if let id = update["update_id"]?.intValue { lastUpdateID = max(lastUpdateID, id) }
        if let id = update["inline_query"]?["id"]?.stringValue, inlineQueries[id] == nil { inlineQueries[id] = Query(issued: now) }
        if let id = update["callback_query"]?["id"]?.stringValue, callbackQueries[id] == nil { callbackQueries[id] = Query(issued: now) }
        for key in ["message", "edited_message", "channel_post"] {
            if let message = update[key] { noteMessage(message) }
        }
        if let message = update["callback_query"]?["message"] { noteMessage(message) }
        if let chat = update["message_reaction"]?["chat"], let id = Self.int64(chat["id"]) { chats[id] = chat }
    }

    private mutating func noteMessage(_ message: JSONValue) {
        guard let chat = message["chat"], let chatID = Self.int64(chat["id"]), let id = message["message_id"]?.intValue else { return }
        chats[chatID] = chat
        if message["from"]?["id"].flatMap(Self.int64) != botID { userMessages[MessageKey(chat: chatID, id: id)] = message }
        nextMessageID[chatID] = max(nextMessageID[chatID] ?? 1, id + 1)
        if let reply = message["reply_to_message"] { noteMessage(reply) }
    }

    /// Queues an update for `getUpdates`, in `update_id` order (one without an id gets the next).
    mutating func enqueue(_ update: JSONValue, now: ContinuousClock.Instant) {
        var update = update
        if update["update_id"]?.intValue == nil, case .object(var object) = update {
            object["update_id"] = .int(lastUpdateID + 1)
            update = .object(object)
        }
        note(update, now: now)
        let id = update["update_id"]?.intValue ?? 0
        let index = pending.firstIndex { ($0["update_id"]?.intValue ?? 0) > id } ?? pending.endIndex
        pending.insert(update, at: index)
    }

    /// Whether Telegram would deliver an update of this kind under the current `allowed_updates`.
    func isAllowed(_ update: JSONValue) -> Bool {
        guard let kind = update.objectValue?.keys.first(where: { $0 != "update_id" }) else { return true }
        if let allowedUpdates { return allowedUpdates.contains(kind) }
        return !Self.defaultExcludedUpdates.contains(kind)
    }

    private mutating func getUpdates(_ p: JSONValue, now: ContinuousClock.Instant) -> FakeTelegramStep {
        pollGeneration += 1
        if webhook != nil {
            return .answer(.error(409, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"))
        }
        let offset = Self.int(p["offset"])
        offsets.append(offset)
        if let offset { confirm(below: offset) }
        if let allowed = Self.array(p["allowed_updates"]) {
            let kinds = allowed.compactMap(\.stringValue)
            allowedUpdates = kinds.isEmpty ? nil : kinds
        }
        let limit = min(100, max(1, Self.int(p["limit"]) ?? 100))
        let timeout = min(50, max(0, Self.double(p["timeout"]) ?? 0))
        return .poll(FakeTelegramPoll(generation: pollGeneration, deadline: now.advanced(by: .seconds(timeout)), limit: limit))
    }

    /// One look at the queue for a waiting `getUpdates`: its answer, or nil to keep waiting.
    mutating func pollStep(_ poll: FakeTelegramPoll, now: ContinuousClock.Instant) -> FakeTelegramAnswer? {
        if poll.generation != pollGeneration {
            return .error(409, "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running")
        }
        if webhook != nil {
            return .error(409, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first")
        }
        // Telegram never queues kinds the bot did not ask for.
        let refused = pending.filter { !isAllowed($0) }
        if !refused.isEmpty {
            filtered += refused.compactMap { $0["update_id"]?.intValue }
            pending = pending.filter { isAllowed($0) }
        }
        if !pending.isEmpty || now >= poll.deadline {
            let batch = Array(pending.prefix(poll.limit))
            delivered += batch.compactMap { $0["update_id"]?.intValue }
            return .ok(.array(batch))
        }
        return nil
    }

    /// `offset` confirms every update below it; a negative one keeps only the last `-offset`.
    private mutating func confirm(below offset: Int) {
        if offset > 0 {
            let gone = pending.filter { ($0["update_id"]?.intValue ?? 0) < offset }
            confirmed += gone.compactMap { $0["update_id"]?.intValue }
            pending.removeAll { ($0["update_id"]?.intValue ?? 0) < offset }
        } else if offset < 0 {
            let keep = min(pending.count, -offset)
            confirmed += pending.dropLast(keep).compactMap { $0["update_id"]?.intValue }
            pending = Array(pending.suffix(keep))
        }
    }

    private mutating func dropPending() {
        confirmed += pending.compactMap { $0["update_id"]?.intValue }
        pending.removeAll()
    }

    // MARK: - Webhook

    private mutating func setWebhook(_ p: JSONValue, now: ContinuousClock.Instant) -> FakeTelegramAnswer {
        let url = Self.string(p["url"]) ?? ""
        let drop = Self.bool(p["drop_pending_updates"]) ?? false
        if url.isEmpty {
            if drop { dropPending() }
            let had = webhook != nil
            webhook = nil
            return .ok(true, description: had ? "Webhook was deleted" : "Webhook is already deleted")
        }
        if !allowsAnyWebhookURL {
            guard let components = URLComponents(string: url), components.scheme?.lowercased() == "https", components.host?.isEmpty == false else {
                return .badRequest("bad webhook: An HTTPS URL must be provided for webhook")
            }
            guard [443, 80, 88, 8443].contains(components.port ?? 443) else {
                return .badRequest("bad webhook: Webhook can be set up only on ports 80, 88, 443 or 8443")
            }
        }
        var secret: String?
        if let value = p["secret_token"], !value.isNull {
            guard let text = Self.string(value), Self.isSecretToken(text) else {
                return .badRequest("secret token contains unallowed characters")
            }
            secret = text
        }
        let maxConnections = Self.int(p["max_connections"]) ?? 40
        guard (1...100).contains(maxConnections) else { return .badRequest("bad webhook: max_connections must be between 1 and 100") }
        var allowed: [String]?
        if let list = Self.array(p["allowed_updates"]) {
            allowed = list.compactMap(\.stringValue)
            allowedUpdates = allowed?.isEmpty == true ? nil : allowed
        }
        if drop { dropPending() }
        let same = webhook?.url == url && webhook?.secretToken == secret
        webhook = FakeTelegramWebhook(
            url: url, secretToken: secret, allowedUpdates: allowed, maxConnections: maxConnections, dropPendingUpdates: drop,
            ipAddress: Self.string(p["ip_address"]), setAt: now)
        return .ok(true, description: same ? "Webhook is already set" : "Webhook was set")
    }

    private mutating func deleteWebhook(_ p: JSONValue) -> FakeTelegramAnswer {
        if Self.bool(p["drop_pending_updates"]) ?? false { dropPending() }
        let had = webhook != nil
        webhook = nil
        return .ok(true, description: had ? "Webhook was deleted" : "Webhook is already deleted")
    }

    private func webhookInfo() -> FakeTelegramAnswer {
        var info: [String: JSONValue] = [
            "url": .string(webhook?.url ?? ""), "has_custom_certificate": false, "pending_update_count": .int(pending.count),
        ]
        if let webhook {
            info["max_connections"] = .int(webhook.maxConnections)
            if let ip = webhook.ipAddress { info["ip_address"] = .string(ip) }
        }
        if let allowedUpdates { info["allowed_updates"] = .array(allowedUpdates.map(JSONValue.string)) }
        return .ok(.object(info))
    }

    static func isSecretToken(_ text: String) -> Bool {
        (1...256).contains(text.utf8.count)
            && text.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == "-") }
    }

    // MARK: - Messages

    /// The text of a message or inline result, parsed and checked as Telegram does.
    private struct Content {
        var text: String
        var rawText: String
        var parseMode: String?
        var entities: [FakeTelegramEntity]
    }

    private func content(_ p: JSONValue, textField: String = "text", empty: String, tooLong: String) -> Result<Content, FakeTelegramAnswer> {
        guard let raw = Self.string(p[textField]) else { return .failure(.badRequest(empty)) }
        let mode = Self.string(p["parse_mode"]) ?? ""
        var parsed: FakeTelegramHTML.Parsed
        switch mode.lowercased() {
        case "":
            let entities = (Self.array(p["entities"]) ?? []).compactMap(FakeTelegramEntity.init(json:))
            parsed = FakeTelegramHTML.Parsed(text: raw, entities: entities)
        case "html":
            do {
                parsed = try FakeTelegramHTML.parse(raw, strictEntities: strictHTMLEntities)
            } catch {
                return .failure(.badRequest("can't parse entities: \(error.message)"))
            }
        default:
            // The relay uses HTML; the fake does not implement Markdown.
            return .failure(.badRequest("unsupported parse_mode"))
        }
        parsed = FakeTelegramHTML.trimmed(parsed)
        if parsed.text.isEmpty { return .failure(.badRequest(empty)) }
        if parsed.text.utf16.count > 4096 { return .failure(.badRequest(tooLong)) }
        return .success(Content(text: parsed.text, rawText: raw, parseMode: mode.isEmpty ? nil : "HTML", entities: parsed.entities))
    }

    private mutating func sendMessage(_ p: JSONValue, now: ContinuousClock.Instant) -> FakeTelegramAnswer {
        let chat: Int64
        switch Self.chatID(p["chat_id"]) {
        case .success(let id): chat = id
        case .failure(let answer): return answer
        }
        if let target = migrated[chat] { return Self.migrateAnswer(target) }
        let content: Content
        switch self.content(p, empty: "message text is empty", tooLong: "message is too long") {
        case .success(let value): content = value
        case .failure(let answer): return answer
        }
        let markup = Self.object(p["reply_markup"])
        if let refusal = Self.checkMarkup(markup) { return refusal }
        if let refusal = rateRefusal(chat: chat, now: now, isEdit: false) { return refusal }
        recordSend(chat: chat, now: now, isEdit: false)
        let id = nextMessageID[chat] ?? 1
        nextMessageID[chat] = id + 1
        let replyTo = Self.int(Self.object(p["reply_parameters"])?["message_id"]) ?? Self.int(p["reply_to_message_id"])
        let message = FakeTelegramMessage(
            chatID: chat, messageID: id, text: content.text, rawText: content.rawText, parseMode: content.parseMode, entities: content.entities,
            replyToMessageID: replyTo, replyMarkup: markup, body: p, date: Self.unixNow, sentAt: now, history: [], deleted: false)
        messageIndex[MessageKey(chat: chat, id: id)] = messages.count
        messages.append(message)
        return .ok(json(message))
    }

    /// The stored message an edit or delete names, or the answer refusing it.
    private func target(_ p: JSONValue, missing: String) -> Result<Int, FakeTelegramAnswer> {
        let chat: Int64
        switch Self.chatID(p["chat_id"]) {
        case .success(let id): chat = id
        case .failure(let answer): return .failure(answer)
        }
        if let target = migrated[chat] { return .failure(Self.migrateAnswer(target)) }
        guard let id = Self.int(p["message_id"]) else { return .failure(.badRequest("message identifier is not specified")) }
        guard let index = messageIndex[MessageKey(chat: chat, id: id)], !messages[index].deleted else { return .failure(.badRequest(missing)) }
        return .success(index)
    }

    private mutating func editMessageText(_ p: JSONValue, now: ContinuousClock.Instant) -> FakeTelegramAnswer {
        if Self.string(p["inline_message_id"]) != nil {
            // Messages sent via inline mode are not kept; Telegram answers `true` for them.
            if case .failure(let answer) = content(p, empty: "message text is empty", tooLong: "MESSAGE_TOO_LONG") { return answer }
            return .ok(true)
        }
        let index: Int
        switch target(p, missing: "message to edit not found") {
        case .success(let value): index = value
        case .failure(let answer): return answer
        }
        let content: Content
        switch self.content(p, empty: "message text is empty", tooLong: "MESSAGE_TOO_LONG") {
        case .success(let value): content = value
        case .failure(let answer): return answer
        }
        let markup = Self.object(p["reply_markup"])
        if let refusal = Self.checkMarkup(markup) { return refusal }
        let current = messages[index]
        if current.text == content.text && current.entities == content.entities && current.replyMarkup == markup {
            return .badRequest(Self.notModified)
        }
        if let refusal = rateRefusal(chat: current.chatID, now: now, isEdit: true) { return refusal }
        recordSend(chat: current.chatID, now: now, isEdit: true)
        archive(index, now: now)
        messages[index].text = content.text
        messages[index].rawText = content.rawText
        messages[index].parseMode = content.parseMode
        messages[index].entities = content.entities
        messages[index].replyMarkup = markup
        return .ok(json(messages[index]))
    }

    private mutating func editMessageReplyMarkup(_ p: JSONValue, now: ContinuousClock.Instant) -> FakeTelegramAnswer {
        if Self.string(p["inline_message_id"]) != nil { return .ok(true) }
        let index: Int
        switch target(p, missing: "message to edit not found") {
        case .success(let value): index = value
        case .failure(let answer): return answer
        }
        let markup = Self.object(p["reply_markup"])
        if let refusal = Self.checkMarkup(markup) { return refusal }
        if messages[index].replyMarkup == markup { return .badRequest(Self.notModified) }
        if let refusal = rateRefusal(chat: messages[index].chatID, now: now, isEdit: true) { return refusal }
        recordSend(chat: messages[index].chatID, now: now, isEdit: true)
        archive(index, now: now)
        messages[index].replyMarkup = markup
        return .ok(json(messages[index]))
    }

    private mutating func archive(_ index: Int, now: ContinuousClock.Instant) {
        let message = messages[index]
        messages[index].history.append(
            FakeTelegramMessage.Version(
                text: message.text, rawText: message.rawText, entities: message.entities, replyMarkup: message.replyMarkup,
                at: message.editedAt ?? message.sentAt))
        messages[index].editDate = Self.unixNow
        messages[index].editedAt = now
    }

    private mutating func deleteMessage(_ p: JSONValue) -> FakeTelegramAnswer {
        switch target(p, missing: "message to delete not found") {
        case .success(let index):
            messages[index].deleted = true
            return .ok(true)
        case .failure(let answer):
            return answer
        }
    }

    private func getChatMember(_ p: JSONValue) -> FakeTelegramAnswer {
        let chat: Int64
        switch Self.chatID(p["chat_id"]) {
        case .success(let id): chat = id
        case .failure(let answer): return answer
        }
        guard let user = p["user_id"]?.intValue else { return .badRequest("Bad Request: user_id is required") }
        let status = administrators[chat]?.contains(Int64(user)) == true ? "administrator" : "member"
        return .ok(["status": .string(status), "user": ["id": .int(user), "is_bot": false, "first_name": "Person"]])
    }

    private func sendChatAction(_ p: JSONValue) -> FakeTelegramAnswer {
        let chat: Int64
        switch Self.chatID(p["chat_id"]) {
        case .success(let id): chat = id
        case .failure(let answer): return answer
        }
        if let target = migrated[chat] { return Self.migrateAnswer(target) }
        guard let action = Self.string(p["action"]), Self.chatActions.contains(action) else {
            return .badRequest("wrong parameter action in request")
        }
        return .ok(true)
    }

    private func setMessageReaction(_ p: JSONValue) -> FakeTelegramAnswer {
        if case .failure(let answer) = Self.chatID(p["chat_id"]) { return answer }
        guard Self.int(p["message_id"]) != nil else { return .badRequest("message identifier is not specified") }
        return .ok(true)
    }

    /// The Bot API's `Message` for a stored message.
    func json(_ message: FakeTelegramMessage, withReply: Bool = true) -> JSONValue {
        var object: [String: JSONValue] = [
            "message_id": .int(message.messageID), "from": botUser, "chat": chatJSON(message.chatID), "date": .int(message.date),
            "text": .string(message.text),
        ]
        if !message.entities.isEmpty { object["entities"] = .array(message.entities.map(\.json)) }
        if let editDate = message.editDate { object["edit_date"] = .int(editDate) }
        if let markup = message.replyMarkup, markup["inline_keyboard"] != nil { object["reply_markup"] = markup }
        if withReply, let reply = message.replyToMessageID {
            let key = MessageKey(chat: message.chatID, id: reply)
            if let index = messageIndex[key] {
                object["reply_to_message"] = json(messages[index], withReply: false)
            } else if case .object(var user) = userMessages[key] {
                user["reply_to_message"] = nil
                object["reply_to_message"] = .object(user)
            } else {
                object["reply_to_message"] = ["message_id": .int(reply), "chat": chatJSON(message.chatID), "date": .int(message.date)]
            }
        }
        return .object(object)
    }

    var botUser: JSONValue {
        ["id": .int(Int(botID)), "is_bot": true, "first_name": .string(botFirstName), "username": .string(botUsername)]
    }

    /// A chat as updates showed it, or as its id suggests (private, group, or -100… supergroup).
    func chatJSON(_ chat: Int64) -> JSONValue {
        if let known = chats[chat] { return known }
        if chat > 0 { return ["id": .int(Int(chat)), "type": "private", "first_name": "User"] }
        if chat <= -1_000_000_000_000 { return ["id": .int(Int(chat)), "type": "supergroup", "title": "Group"] }
        return ["id": .int(Int(chat)), "type": "group", "title": "Group", "all_members_are_administrators": false]
    }

    /// Checks an `InlineKeyboardMarkup` as Telegram does; other keyboards pass.
    static func checkMarkup(_ markup: JSONValue?) -> FakeTelegramAnswer? {
        guard let markup else { return nil }
        guard markup.objectValue != nil else { return .badRequest("can't parse reply keyboard markup JSON object") }
        guard let keyboard = markup["inline_keyboard"] else { return nil }
        guard let rows = keyboard.arrayValue, rows.allSatisfy({ $0.arrayValue != nil }) else {
            return .badRequest("can't parse inline keyboard button: Field \"inline_keyboard\" must be of type Array")
        }
        let actions = [
            "url", "callback_data", "switch_inline_query", "switch_inline_query_current_chat", "switch_inline_query_chosen_chat", "web_app",
            "login_url", "callback_game", "pay", "copy_text",
        ]
        for button in rows.flatMap({ $0.arrayValue ?? [] }) {
            guard button.objectValue != nil else { return .badRequest("can't parse inline keyboard button: InlineKeyboardButton must be an Object") }
            guard let text = button["text"]?.stringValue, !text.isEmpty else {
                return .badRequest("can't parse inline keyboard button: Field \"text\" must be of type String")
            }
            guard actions.contains(where: { button[$0] != nil }) else {
                return .badRequest("can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard")
            }
            if let data = button["callback_data"] {
                guard let text = data.stringValue, (1...64).contains(text.utf8.count) else { return .badRequest("BUTTON_DATA_INVALID") }
            }
            if let url = button["url"] {
                guard let text = url.stringValue, FakeTelegramHTML.checkedLink(text) != nil else { return .badRequest("BUTTON_URL_INVALID") }
            }
        }
        return nil
    }

    // MARK: - Pacing

    /// A 429 when a send to `chat` now would break the per-chat, per-group or overall limit.
    private func rateRefusal(chat: Int64, now: ContinuousClock.Instant, isEdit: Bool) -> FakeTelegramAnswer? {
        guard enforceRateLimits, !isEdit || rateLimits.countsEdits else { return nil }
        let limits = rateLimits
        let counted: (Send) -> Bool = { limits.countsEdits || !$0.isEdit }
        var wait: Duration = .zero
        func check(_ sends: [Send], limit: Int, window: Duration) {
            let span = window - limits.tolerance
            var recent: [ContinuousClock.Instant] = []
            for send in sends.reversed() {
                guard send.at.duration(to: now) < span else { break }
                if counted(send) { recent.append(send.at) }
            }
            guard recent.count >= limit, limit > 0 else { return }
            // recent is newest first: the one that must leave the window is `limit` from the end.
            let leaving = recent[limit - 1]
            wait = max(wait, now.duration(to: leaving.advanced(by: span)))
        }
        let chatSends = sendsByChat[chat] ?? []
        check(chatSends, limit: limits.perChat, window: limits.perChatWindow)
        if chat < 0 { check(chatSends, limit: limits.perGroup, window: limits.perGroupWindow) }
        check(sends, limit: limits.overall, window: limits.overallWindow)
        guard wait > .zero else { return nil }
        let seconds = Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18
        return Self.tooManyRequests(max(1, Int(seconds.rounded(.up))))
    }

    private mutating func recordSend(chat: Int64, now: ContinuousClock.Instant, isEdit: Bool) {
        let send = Send(chat: chat, at: now, isEdit: isEdit)
        sends.append(send)
        sendsByChat[chat, default: []].append(send)
    }

    /// The most sends in any window of `window` (less the tolerance).
    func maximum(_ sends: [Send], window: Duration, includingEdits: Bool) -> Int {
        // Sorted: two calls can take the lock in the other order than they arrived.
        let times = sends.filter { includingEdits || !$0.isEdit }.map(\.at).sorted()
        let span = window - rateLimits.tolerance
        var best = 0
        var start = 0
        for end in times.indices {
            while times[start].duration(to: times[end]) >= span { start += 1 }
            best = max(best, end - start + 1)
        }
        return best
    }

    static func tooManyRequests(_ retryAfter: Int) -> FakeTelegramAnswer {
        .error(429, "Too Many Requests: retry after \(retryAfter)", parameters: ["retry_after": .int(retryAfter)])
    }

    static func migrateAnswer(_ chat: Int64) -> FakeTelegramAnswer {
        .error(400, "Bad Request: group chat was upgraded to a supergroup chat", parameters: ["migrate_to_chat_id": .int(Int(chat))])
    }

    // MARK: - Queries

    mutating func issueQueryID() -> String {
        queriesIssued += 1
        return String(4_100_000_000_000_000_000 + queriesIssued * 7919)
    }

    private mutating func answerCallbackQuery(_ p: JSONValue, now: ContinuousClock.Instant) -> FakeTelegramAnswer {
        let id = Self.string(p["callback_query_id"]) ?? ""
        let query = callbackQueries[id]
        var answer = FakeTelegramCallbackAnswer(
            callbackQueryID: id, text: Self.string(p["text"]), showAlert: Self.bool(p["show_alert"]), url: Self.string(p["url"]), arrived: now,
            issued: query?.issued, error: nil)
        var refusal: FakeTelegramAnswer?
        if id.isEmpty {
            refusal = .badRequest(Self.tooOld)
        } else if (answer.text?.utf16.count ?? 0) > 200 {
            refusal = .badRequest("MESSAGE_TOO_LONG")
        } else if let query, query.answered || query.issued.duration(to: now) > callbackQueryDeadline {
            refusal = .badRequest(Self.tooOld)
        }
        answer.error = refusal?.json?["description"]?.stringValue
        callbackAnswers.append(answer)
        if let refusal { return refusal }
        callbackQueries[id, default: Query(issued: now)].answered = true
        return .ok(true)
    }

    private mutating func answerInlineQuery(_ p: JSONValue, now: ContinuousClock.Instant) -> FakeTelegramAnswer {
        let id = Self.string(p["inline_query_id"]) ?? ""
        let results = Self.array(p["results"])
        let query = inlineQueries[id]
        var answer = FakeTelegramInlineAnswer(
            inlineQueryID: id, results: results ?? [], cacheTime: Self.int(p["cache_time"]), isPersonal: Self.bool(p["is_personal"]),
            nextOffset: Self.string(p["next_offset"]), button: Self.object(p["button"]), arrived: now, issued: query?.issued, error: nil)
        // The Bot API checks the results before Telegram looks at the query id.
        var refusal = results == nil ? FakeTelegramAnswer.badRequest("can't parse inline query results JSON object") : checkResults(results ?? [])
        if refusal == nil, let button = answer.button {
            if let start = button["start_parameter"] {
                let text = start.stringValue ?? ""
                if !(1...64).contains(text.utf8.count) || !Self.isSecretToken(text) { refusal = .badRequest("START_PARAM_INVALID") }
            }
            if (button["text"]?.stringValue ?? "").isEmpty {
                refusal = .badRequest("can't parse InlineQueryResultsButton: Field \"text\" must be of type String")
            }
        }
        if refusal == nil {
            if let query, !query.answered, query.issued.duration(to: now) <= inlineQueryDeadline {
                inlineQueries[id]?.answered = true
            } else {
                refusal = .badRequest(Self.tooOld)
            }
        }
        answer.error = refusal?.json?["description"]?.stringValue
        inlineAnswers.append(answer)
        return refusal ?? .ok(true)
    }

    private func checkResults(_ results: [JSONValue]) -> FakeTelegramAnswer? {
        if results.count > 50 { return .badRequest("RESULTS_TOO_MUCH") }
        let types: Set<String> = [
            "article", "photo", "gif", "mpeg4_gif", "video", "audio", "voice", "document", "location", "venue", "contact", "game", "sticker",
        ]
        var ids: Set<String> = []
        for result in results {
            func missing(_ field: String) -> FakeTelegramAnswer { .badRequest("can't parse inline query result: Can't find field \"\(field)\"") }
            guard result.objectValue != nil else { return .badRequest("can't parse inline query result: InlineQueryResult must be an Object") }
            guard let type = result["type"]?.stringValue else { return missing("type") }
            guard types.contains(type) else { return .badRequest("can't parse inline query result: Unsupported inline query result type \"\(type)\"") }
            guard let id = result["id"]?.stringValue else { return missing("id") }
            guard (1...64).contains(id.utf8.count) else { return .badRequest("RESULT_ID_INVALID") }
            guard ids.insert(id).inserted else { return .badRequest("RESULT_ID_DUPLICATE") }
            if type == "article" {
                guard let title = result["title"]?.stringValue, !title.isEmpty else { return missing("title") }
                guard result["input_message_content"] != nil else { return missing("input_message_content") }
            }
            if let input = result["input_message_content"] {
                guard input.objectValue != nil else { return .badRequest("can't parse InputMessageContent: must be an Object") }
                if input["message_text"] != nil || type == "article" {
                    if case .failure(let answer) = content(input, textField: "message_text", empty: "MESSAGE_EMPTY", tooLong: "MESSAGE_TOO_LONG") {
                        return answer
                    }
                }
            }
            if let refusal = Self.checkMarkup(result["reply_markup"]) { return refusal }
        }
        return nil
    }

    // MARK: - Commands

    static func commandsKey(_ p: JSONValue) -> Result<CommandsKey, FakeTelegramAnswer> {
        let scope = object(p["scope"]) ?? ["type": "default"]
        let scopes: Set<String> = [
            "default", "all_private_chats", "all_group_chats", "all_chat_administrators", "chat", "chat_administrators", "chat_member",
        ]
        guard let type = scope["type"]?.stringValue, scopes.contains(type) else {
            return .failure(.badRequest("can't parse BotCommandScope JSON object"))
        }
        let language = string(p["language_code"]) ?? ""
        guard language.isEmpty || (language.count == 2 && language.allSatisfy { $0.isASCII && $0.isLowercase }) else {
            return .failure(.badRequest("LANG_CODE_INVALID"))
        }
        return .success(CommandsKey(scope: String(decoding: scope.encoded(), as: UTF8.self), languageCode: language))
    }

    private mutating func setMyCommands(_ p: JSONValue) -> FakeTelegramAnswer {
        guard let list = Self.array(p["commands"]) else { return .badRequest("parameter \"commands\" is required") }
        if list.count > 100 { return .badRequest("BOT_COMMANDS_TOO_MUCH") }
        var normalized: [JSONValue] = []
        for item in list {
            guard let name = item["command"]?.stringValue, let description = item["description"]?.stringValue,
                (1...32).contains(name.utf8.count),
                name.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }),
                (1...256).contains(description.trimmedOfSpaces.utf16.count)
            else { return .badRequest("BOT_COMMAND_INVALID") }
            normalized.append(["command": .string(name), "description": .string(description)])
        }
        let key: CommandsKey
        switch Self.commandsKey(p) {
        case .success(let value): key = value
        case .failure(let answer): return answer
        }
        commands[key] = normalized.isEmpty ? nil : normalized
        return .ok(true)
    }

    private func getMyCommands(_ p: JSONValue) -> FakeTelegramAnswer {
        switch Self.commandsKey(p) {
        case .success(let key): return .ok(.array(commands[key] ?? []))
        case .failure(let answer): return answer
        }
    }

    private mutating func deleteMyCommands(_ p: JSONValue) -> FakeTelegramAnswer {
        switch Self.commandsKey(p) {
        case .success(let key):
            commands[key] = nil
            return .ok(true)
        case .failure(let answer):
            return answer
        }
    }

    // MARK: - Parameters

    /// The JSON body (or form body), with query items merged in; nil when a JSON body is broken.
    static func parameters(_ request: RecordedRequest) -> JSONValue? {
        var object: [String: JSONValue] = [:]
        for (key, value) in form(request.query ?? "") { object[key] = value }
        let contentType = request.header("content-type")?.lowercased() ?? ""
        if contentType.contains("x-www-form-urlencoded") {
            for (key, value) in form(request.rawBody) { object[key] = value }
        } else if !request.rawBody.isEmpty {
            guard let members = request.body?.objectValue else { return nil }
            for (key, value) in members { object[key] = value }
        }
        return .object(object)
    }

    /// `a=1&b=%5B%22x%22%5D` → `["a": 1, "b": ["x"]]`: values that read as JSON are JSON.
    static func form(_ text: String) -> [(String, JSONValue)] {
        text.split(separator: "&").compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            guard let key = parts.first, !key.isEmpty else { return nil }
            let value = parts.count > 1 ? parts[1] : ""
            return (key, JSONValue.parse(Array(value.utf8)) ?? .string(value))
        }
    }

    /// A chat id: an integer, or a string of one; `@username`s name no chat the fake knows.
    static func chatID(_ value: JSONValue?) -> Result<Int64, FakeTelegramAnswer> {
        guard let value, !value.isNull, string(value)?.isEmpty == false else { return .failure(.badRequest("chat_id is empty")) }
        guard let id = int64(value), id != 0 else { return .failure(.badRequest("chat not found")) }
        return .success(id)
    }

    static func string(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let text): text
        case .int(let number): String(number)
        case .double(let number): String(number)
        case .bool(let flag): String(flag)
        default: nil
        }
    }

    static func int(_ value: JSONValue?) -> Int? {
        if let number = value?.intValue { return number }
        return value?.stringValue.flatMap { Int($0.strippedOfSpaces) }
    }

    static func int64(_ value: JSONValue?) -> Int64? {
        int(value).map(Int64.init)
    }

    static func double(_ value: JSONValue?) -> Double? {
        value?.doubleValue ?? value?.stringValue.flatMap { Double($0) }
    }

    static func bool(_ value: JSONValue?) -> Bool? {
        switch value {
        case .bool(let flag): flag
        case .string(let text): ["true", "1"].contains(text.lowercased()) ? true : (["false", "0"].contains(text.lowercased()) ? false : nil)
        case .int(let number): number != 0
        default: nil
        }
    }

    /// An array, or a string holding a JSON array (as form and query values do).
    static func array(_ value: JSONValue?) -> [JSONValue]? {
        if let items = value?.arrayValue { return items }
        return value?.stringValue.flatMap { JSONValue.parse(Array($0.utf8))?.arrayValue }
    }

    /// An object, or a string holding one; nil for absent or `null`.
    static func object(_ value: JSONValue?) -> JSONValue? {
        guard let value, !value.isNull else { return nil }
        if let text = value.stringValue { return JSONValue.parse(Array(text.utf8)) ?? value }
        return value
    }

    static var unixNow: Int { Int(Date().timeIntervalSince1970) }
}

extension String {
    /// Without leading and trailing spaces and newlines.
    fileprivate var trimmedOfSpaces: String { trimmingCharacters(in: .whitespacesAndNewlines) }
    fileprivate var strippedOfSpaces: String { trimmedOfSpaces }
}
