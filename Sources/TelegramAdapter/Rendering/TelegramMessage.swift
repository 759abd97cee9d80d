public import RelayCore

/// One message as the renderer builds it: HTML text, already escaped, and its inline keyboard.
public struct TelegramMessage: Sendable, Hashable {
    /// HTML (parse mode `HTML`): model and user text escaped, the relay's own `<b>` and `<i>`.
    public var text: String
    /// Rows of inline keyboard buttons; empty for none.
    public var buttons: [[TelegramButton]]

    public init(text: String, buttons: [[TelegramButton]] = []) {
        self.text = text
        self.buttons = buttons
    }

    /// The `sendMessage` body, as a reply to `replyTo` when given.
    ///
    /// Link previews are off: a model's answer must not make Telegram fetch (and show a card for)
    /// whatever address it names. The reply is sent even when the message it answers was deleted
    /// meanwhile (`allow_sending_without_reply`): the answer matters more than the thread.
    public func sendBody(chatID: Int64, replyTo: Int64?) -> JSONValue {
        var body = common(chatID: chatID)
        if let replyTo {
            body["reply_parameters"] = ["message_id": .int(Int(replyTo)), "allow_sending_without_reply": true]
        }
        if !buttons.isEmpty { body["reply_markup"] = keyboard }
        return .object(body)
    }

    /// The `editMessageText` body that turns message `messageID` into this one.
    ///
    /// Always carries `reply_markup`, an empty keyboard when there are no buttons: an edit that
    /// leaves it out keeps the old buttons (a progress message's, a result's "Post to chat").
    public func editBody(chatID: Int64, messageID: Int64) -> JSONValue {
        var body = common(chatID: chatID)
        body["message_id"] = .int(Int(messageID))
        body["reply_markup"] = keyboard
        return .object(body)
    }

    private func common(chatID: Int64) -> [String: JSONValue] {
        [
            "chat_id": .int(Int(chatID)), "text": .string(text), "parse_mode": "HTML",
            "link_preview_options": ["is_disabled": true],
        ]
    }

    /// `{"inline_keyboard": [[{"text", "callback_data"}]]}`.
    private var keyboard: JSONValue {
        [
            "inline_keyboard": .array(
                buttons.map { row in .array(row.map { ["text": .string($0.text), "callback_data": .string($0.callbackData)] }) })
        ]
    }
}

/// An inline keyboard button that comes back as a `callback_query` carrying `callbackData`.
public struct TelegramButton: Sendable, Hashable {
    /// The label.
    public var text: String
    /// At most `TelegramLimits.callbackData` bytes; the renderer leaves out a button whose data
    /// would not fit.
    public var callbackData: String

    public init(text: String, callbackData: String) {
        self.text = text
        self.callbackData = callbackData
    }

    /// What a button the renderer made asks for, read back from a `callback_query`'s `data`.
    ///
    /// Both carry an outbox entry id, not the command line: a command line rarely fits 64 bytes,
    /// and the entry holds the reply with its `.runAgain(commandLine:)` and where it was sent.
    public enum Action: Sendable, Hashable {
        /// "Post to chat": post the private result of entry `entryID` in the chat it came from.
        case postToChat(entryID: String)
        /// "Run again": run the command line of entry `entryID` again.
        case runAgain(entryID: String)

        /// `callback_data` prefix of "Post to chat".
        public static let postPrefix = "post:"
        /// `callback_data` prefix of "Run again".
        public static let againPrefix = "again:"

        /// Reads `callback_data`; nil for data the renderer does not write (or without an id).
        public init?(callbackData: String) {
            // By bytes: the prefixes are ASCII, and a combining mark after the `:` must not hide it.
            if let id = Self.id(in: callbackData, after: Self.postPrefix) {
                self = .postToChat(entryID: id)
            } else if let id = Self.id(in: callbackData, after: Self.againPrefix) {
                self = .runAgain(entryID: id)
            } else {
                return nil
            }
        }

        private static func id(in data: String, after prefix: String) -> String? {
            guard data.utf8.count > prefix.utf8.count, data.utf8.starts(with: prefix.utf8) else { return nil }
            return String(decoding: data.utf8.dropFirst(prefix.utf8.count), as: UTF8.self)
        }

        /// The `callback_data` this action is sent with; nil when it passes Telegram's 64 bytes.
        public var callbackData: String? {
            let data =
                switch self {
                case .postToChat(let id): Self.postPrefix + id
                case .runAgain(let id): Self.againPrefix + id
                }
            return data.utf8.count <= TelegramLimits.callbackData ? data : nil
        }
    }
}
