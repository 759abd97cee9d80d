public import RelayCore

/// Something `FakeTelegramBotAPI` does instead of its normal answer, once per call to a method.
public enum FakeTelegramFailure: Sendable, Hashable {
    /// HTTP 429 `Too Many Requests: retry after N` with `parameters.retry_after`, as Telegram's
    /// flood control answers.
    case tooManyRequests(retryAfter: Int)
    /// A server error: 500 is Telegram's JSON `Internal Server Error`; any other status is the
    /// HTML page its nginx front answers with (502 Bad Gateway, 504 Gateway Time-out…).
    case server(status: Int)
    /// HTTP 400 `Bad Request: group chat was upgraded to a supergroup chat` with
    /// `parameters.migrate_to_chat_id`.
    case migrate(to: Int64)
    /// HTTP 400 with this description (`Bad Request: ` is added when missing).
    case badRequest(String)
    /// HTTP 403 with this description (`Forbidden: ` is added when missing), e.g.
    /// `bot was blocked by the user`.
    case forbidden(String)
    /// The connection is closed without an answer.
    case drop
    /// The normal answer, after `seconds` (for client time limits).
    case slow(seconds: Double)
}

/// One call the fake received: the method, its parameters and what it answered.
public struct RecordedTelegramCall: Sendable, Hashable {
    /// The method as Telegram names it (`sendMessage`), whatever case the path used; the path's
    /// last segment for a method the fake does not know.
    public var method: String
    /// The parameters: the JSON body, with query items merged in; `{}` when there were none.
    public var body: JSONValue
    /// `POST` or `GET`.
    public var httpMethod: String
    /// The request's `Content-Type`, if any.
    public var contentType: String?
    /// Header names lower-cased; repeated headers joined with ", ".
    public var headers: [String: String]
    /// When the request arrived.
    public var arrived: ContinuousClock.Instant
    /// The HTTP status answered; nil when the connection was dropped (by a scripted `.drop`,
    /// or by the client while its `getUpdates` waited).
    public var status: Int?
    /// The JSON answered (`{"ok":…}`); nil when dropped or when the answer was not JSON.
    public var response: JSONValue?

    public init(
        method: String, body: JSONValue, httpMethod: String = "POST", contentType: String? = "application/json", headers: [String: String] = [:],
        arrived: ContinuousClock.Instant, status: Int?, response: JSONValue?
    ) {
        self.method = method
        self.body = body
        self.httpMethod = httpMethod
        self.contentType = contentType
        self.headers = headers
        self.arrived = arrived
        self.status = status
        self.response = response
    }

    /// A parameter, e.g. `call["chat_id"]?.intValue`.
    public subscript(field: String) -> JSONValue? {
        body[field]
    }

    /// The answer's `description`, for refusals.
    public var errorDescription: String? {
        response?["description"]?.stringValue
    }

    /// The answer's `parameters.retry_after`, for 429s.
    public var retryAfter: Int? {
        response?["parameters"]?["retry_after"]?.intValue
    }
}

/// A message entity as the Bot API describes it (offsets and lengths in UTF-16 code units).
public struct FakeTelegramEntity: Sendable, Hashable {
    /// `bold`, `italic`, `underline`, `strikethrough`, `spoiler`, `code`, `pre`, `text_link`,
    /// `text_mention`, `custom_emoji`, `blockquote`, `expandable_blockquote`.
    public var type: String
    public var offset: Int
    public var length: Int
    /// For `text_link`.
    public var url: String?
    /// For `pre` with a `<code class="language-…">` inside.
    public var language: String?
    /// For `custom_emoji`.
    public var customEmojiID: String?
    /// For `text_mention` (`tg://user?id=…`).
    public var userID: Int64?

    public init(
        type: String, offset: Int, length: Int, url: String? = nil, language: String? = nil, customEmojiID: String? = nil,
        userID: Int64? = nil
    ) {
        self.type = type
        self.offset = offset
        self.length = length
        self.url = url
        self.language = language
        self.customEmojiID = customEmojiID
        self.userID = userID
    }

    /// The Bot API's `MessageEntity` object.
    public var json: JSONValue {
        var object: [String: JSONValue] = ["type": .string(type), "offset": .int(offset), "length": .int(length)]
        if let url { object["url"] = .string(url) }
        if let language { object["language"] = .string(language) }
        if let customEmojiID { object["custom_emoji_id"] = .string(customEmojiID) }
        if let userID { object["user"] = ["id": .int(Int(userID)), "is_bot": false, "first_name": "User"] }
        return .object(object)
    }

    /// Reads a `MessageEntity` object; nil when it lacks a type, offset or length.
    public init?(json: JSONValue) {
        guard let type = json["type"]?.stringValue, let offset = json["offset"]?.intValue, let length = json["length"]?.intValue else {
            return nil
        }
        self.init(
            type: type, offset: offset, length: length, url: json["url"]?.stringValue, language: json["language"]?.stringValue,
            customEmojiID: json["custom_emoji_id"]?.stringValue, userID: json["user"]?["id"]?.intValue.map(Int64.init))
    }

    /// The text this entity covers in `text`.
    public func covered(in text: String) -> String {
        let units = Array(text.utf16)
        let start = min(max(0, offset), units.count)
        let end = min(units.count, start + max(0, length))
        return String(decoding: units[start..<end], as: UTF16.self)
    }
}

/// A message the bot sent, as the fake keeps it.
public struct FakeTelegramMessage: Sendable, Hashable {
    /// One earlier state of an edited message.
    public struct Version: Sendable, Hashable {
        public var text: String
        /// The `text` parameter as sent (the HTML, with parse mode HTML).
        public var rawText: String
        public var entities: [FakeTelegramEntity]
        public var replyMarkup: JSONValue?
        /// When the call that produced this version arrived.
        public var at: ContinuousClock.Instant
    }

    public var chatID: Int64
    /// Numbered per chat, from 1 (past every message id the fake has seen in that chat).
    public var messageID: Int
    /// The text after entity parsing (and Telegram's trim of surrounding whitespace).
    public var text: String
    /// The `text` parameter as sent: the HTML, with parse mode HTML.
    public var rawText: String
    /// `HTML`, or nil for plain text.
    public var parseMode: String?
    public var entities: [FakeTelegramEntity]
    /// `reply_parameters.message_id` (or the older `reply_to_message_id`).
    public var replyToMessageID: Int?
    /// The `reply_markup` as sent (an edit without one removes it, as on Telegram).
    public var replyMarkup: JSONValue?
    /// The `sendMessage` parameters as sent.
    public var body: JSONValue
    /// Unix time of sending.
    public var date: Int
    /// When the `sendMessage` call arrived.
    public var sentAt: ContinuousClock.Instant
    /// Earlier versions, oldest first: empty until the first edit, then the sent one first.
    public var history: [Version]
    /// When the last edit arrived; nil until one did.
    public var editedAt: ContinuousClock.Instant? = nil
    /// Whether `deleteMessage` removed it.
    public var deleted: Bool
    /// Unix time of the last edit.
    public var editDate: Int?

    /// How often it was edited.
    public var edits: Int { history.count }

    /// What it shows now, as a version, timed by the call that made it.
    public var current: Version {
        Version(text: text, rawText: rawText, entities: entities, replyMarkup: replyMarkup, at: editedAt ?? sentAt)
    }

    /// The inline keyboard's buttons, row by row.
    public var buttons: [[JSONValue]] {
        (replyMarkup?["inline_keyboard"]?.arrayValue ?? []).map { $0.arrayValue ?? [] }
    }

    /// Every inline button's `callback_data`, in order.
    public var callbackData: [String] {
        buttons.joined().compactMap { $0["callback_data"]?.stringValue }
    }

    /// The entities of one type.
    public func entities(_ type: String) -> [FakeTelegramEntity] {
        entities.filter { $0.type == type }
    }
}

/// An `answerInlineQuery` call, accepted or refused.
public struct FakeTelegramInlineAnswer: Sendable, Hashable {
    public var inlineQueryID: String
    public var results: [JSONValue]
    public var cacheTime: Int?
    public var isPersonal: Bool?
    public var nextOffset: String?
    public var button: JSONValue?
    /// When the answer arrived.
    public var arrived: ContinuousClock.Instant
    /// When the query was issued to the bot (nil for an id the fake never issued).
    public var issued: ContinuousClock.Instant?
    /// Why it was refused; nil when accepted.
    public var error: String?

    /// Time from issuing the query to the answer's arrival.
    public var latency: Duration? { issued.map { $0.duration(to: arrived) } }
    public var accepted: Bool { error == nil }

    /// The `input_message_content.message_text` of each result, in order.
    public var messageTexts: [String] {
        results.compactMap { $0["input_message_content"]?["message_text"]?.stringValue }
    }
}

/// An `answerCallbackQuery` call, accepted or refused.
public struct FakeTelegramCallbackAnswer: Sendable, Hashable {
    public var callbackQueryID: String
    public var text: String?
    public var showAlert: Bool?
    public var url: String?
    public var arrived: ContinuousClock.Instant
    /// When the query was issued (nil for an id the fake never saw: such answers are accepted).
    public var issued: ContinuousClock.Instant?
    /// Why it was refused; nil when accepted.
    public var error: String?

    public var accepted: Bool { error == nil }
}

/// The webhook `setWebhook` configured.
public struct FakeTelegramWebhook: Sendable, Hashable {
    public var url: String
    public var secretToken: String?
    /// As sent; nil when not given.
    public var allowedUpdates: [String]?
    public var maxConnections: Int
    public var dropPendingUpdates: Bool
    public var ipAddress: String?
    public var setAt: ContinuousClock.Instant
}

/// The pacing the fake enforces when `enforceRateLimits` is on (Telegram's documented flood
/// limits), and the windows its rate helpers measure.
public struct FakeTelegramRateLimits: Sendable, Hashable {
    /// Sends (and edits, with `countsEdits`) allowed to one chat per `perChatWindow`.
    public var perChat = 1
    public var perChatWindow: Duration = .seconds(1)
    /// Sends allowed to one group (negative chat id) per `perGroupWindow`.
    public var perGroup = 20
    public var perGroupWindow: Duration = .seconds(60)
    /// Sends allowed across all chats per `overallWindow`.
    public var overall = 30
    public var overallWindow: Duration = .seconds(1)
    /// Whether `editMessageText` and `editMessageReplyMarkup` count as sends.
    public var countsEdits = true
    /// Arrival jitter forgiven: a window of 1 s counts arrivals less than 1 s − tolerance apart.
    public var tolerance: Duration = .milliseconds(50)

    public init() {}
}
