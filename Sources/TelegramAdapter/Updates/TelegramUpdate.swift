public import RelayCore

/// One Bot API `Update`, read into what the relay handles: a message (commands, mentions, DMs),
/// a button press, an inline query, a reaction. Everything else (edits, member changes…) is
/// `.other` and only advances the offset.
///
/// Read from `JSONValue` by hand: an update is small, and an unknown field or kind must never make
/// it unreadable (Telegram adds fields often).
public struct TelegramUpdate: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        case message(TelegramIncomingMessage)
        case callbackQuery(TelegramCallbackQuery)
        case inlineQuery(TelegramInlineQuery)
        case reaction(TelegramReaction)
        case other
    }

    /// Sequential per bot: the dedupe key, and what `getUpdates`' offset confirms.
    public var id: Int64
    public var kind: Kind

    /// Nil when the bytes are not an update (no `update_id`).
    public init?(json: JSONValue) {
        guard let id = json["update_id"]?.int64 else { return nil }
        self.id = id
        if let message = json["message"].flatMap(TelegramIncomingMessage.init(json:)) {
            kind = .message(message)
        } else if let query = json["callback_query"].flatMap(TelegramCallbackQuery.init(json:)) {
            kind = .callbackQuery(query)
        } else if let query = json["inline_query"].flatMap(TelegramInlineQuery.init(json:)) {
            kind = .inlineQuery(query)
        } else if let reaction = json["message_reaction"].flatMap(TelegramReaction.init(json:)) {
            kind = .reaction(reaction)
        } else {
            kind = .other
        }
    }
}

/// A chat: private (its id is the user's), group, supergroup or channel.
public struct TelegramChat: Sendable, Hashable {
    public var id: Int64
    public var type: String
    public var title: String?

    init?(json: JSONValue) {
        guard let id = json["id"]?.int64, let type = json["type"]?.stringValue else { return nil }
        self.id = id
        self.type = type
        self.title = json["title"]?.stringValue
    }

    public var isPrivate: Bool { type == "private" }
    public var isGroup: Bool { type == "group" || type == "supergroup" }
}

/// Who sent something.
public struct TelegramUser: Sendable, Hashable {
    public var id: Int64
    public var isBot: Bool
    public var name: String
    public var username: String?

    init?(json: JSONValue) {
        guard let id = json["id"]?.int64 else { return nil }
        self.id = id
        self.isBot = json["is_bot"]?.boolValue ?? false
        let first = json["first_name"]?.stringValue ?? ""
        let last = json["last_name"]?.stringValue
        self.name = [first, last].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " ")
        self.username = json["username"]?.stringValue
    }
}

/// A message with text (or a caption), or a voice note, audio file or video note: the only kinds
/// the relay reads.
public struct TelegramIncomingMessage: Sendable, Hashable {
    public var id: Int64
    public var chat: TelegramChat
    public var from: TelegramUser?
    public var text: String
    /// The message's entities (`bot_command`, `mention`…) with the text each covers, in order.
    public var entities: [Entity]
    /// The message this one answers, when it is one.
    public var replyTo: Replied?
    /// The message's voice note, audio file or video note, when it has one (its text is then
    /// the caption).
    public var clip: VoiceClip?

    public struct Entity: Sendable, Hashable {
        public var type: String
        public var text: String
    }

    public struct Replied: Sendable, Hashable {
        public var id: Int64
        public var text: String?
        public var fromBot: Bool
        public var fromID: Int64?
        /// The replied-to message's voice note, audio file or video note.
        public var clip: VoiceClip?
    }

    init?(json: JSONValue) {
        guard let id = json["message_id"]?.int64, let chat = json["chat"].flatMap(TelegramChat.init(json:)) else { return nil }
        let text = json["text"]?.stringValue ?? json["caption"]?.stringValue ?? ""
        self.id = id
        self.chat = chat
        self.from = json["from"].flatMap(TelegramUser.init(json:))
        self.text = text
        let raw = json["entities"]?.arrayValue ?? json["caption_entities"]?.arrayValue ?? []
        self.entities = raw.compactMap { entity in
            guard let type = entity["type"]?.stringValue, let offset = entity["offset"]?.intValue, let length = entity["length"]?.intValue else {
                return nil
            }
            return Self.slice(text, utf16Offset: offset, length: length).map { Entity(type: type, text: $0) }
        }
        self.clip = Self.clip(in: json, origin: .own)
        if let reply = json["reply_to_message"], let replyID = reply["message_id"]?.int64 {
            let author = reply["from"].flatMap(TelegramUser.init(json:))
            replyTo = Replied(
                id: replyID, text: reply["text"]?.stringValue ?? reply["caption"]?.stringValue, fromBot: author?.isBot ?? false, fromID: author?.id,
                clip: Self.clip(in: reply, origin: .repliedTo))
        }
    }

    /// A message's `voice` (a voice note, OGG/Opus), `audio` (a music or audio file) or
    /// `video_note` (a round video, MP4): its `file_id` and what Telegram declares of it.
    /// Declared numbers come from outside: only sane ones are kept.
    static func clip(in message: JSONValue, origin: VoiceClip.Origin) -> VoiceClip? {
        for key in ["voice", "audio", "video_note"] {
            guard let object = message[key], let file = object["file_id"]?.stringValue, !file.isEmpty else { continue }
            let size = UntrustedNumber.checked(object["file_size"]?.intValue, in: 0...(4 << 30), source: "telegram", field: "file_size")
            let duration = UntrustedNumber.checked(object["duration"]?.intValue, in: 0...(7 * 24 * 3600), source: "telegram", field: "duration")
            let mimeType = object["mime_type"]?.stringValue ?? (key == "video_note" ? "video/mp4" : nil)
            return VoiceClip(file: file, mimeType: mimeType, byteSize: size, duration: duration, origin: origin)
        }
        return nil
    }

    /// Entities count in UTF-16 code units. The numbers come from outside: compared without
    /// adding them, so no value can overflow.
    static func slice(_ text: String, utf16Offset offset: Int, length: Int) -> String? {
        let utf16 = text.utf16
        guard offset >= 0, length >= 0, offset <= utf16.count, length <= utf16.count - offset else { return nil }
        let start = utf16.index(utf16.startIndex, offsetBy: offset)
        let end = utf16.index(start, offsetBy: length)
        return String(utf16[start..<end])
    }
}

/// A press of one of the relay's inline keyboard buttons.
public struct TelegramCallbackQuery: Sendable, Hashable {
    public var id: String
    public var from: TelegramUser
    /// The message holding the button (absent for buttons on inline results).
    public var chat: TelegramChat?
    public var messageID: Int64?
    public var data: String?

    init?(json: JSONValue) {
        guard let id = json["id"]?.stringValue, let from = json["from"].flatMap(TelegramUser.init(json:)) else { return nil }
        self.id = id
        self.from = from
        self.chat = json["message"]?["chat"].flatMap(TelegramChat.init(json:))
        self.messageID = json["message"]?["message_id"]?.int64
        self.data = json["data"]?.stringValue
    }
}

/// `@Bot …` typed in any chat.
public struct TelegramInlineQuery: Sendable, Hashable {
    public var id: String
    public var from: TelegramUser
    public var query: String

    init?(json: JSONValue) {
        guard let id = json["id"]?.stringValue, let from = json["from"].flatMap(TelegramUser.init(json:)) else { return nil }
        self.id = id
        self.from = from
        self.query = json["query"]?.stringValue ?? ""
    }
}

/// A reaction a person added to a message (`message_reaction`: the bot must be an admin of a
/// group to get these).
public struct TelegramReaction: Sendable, Hashable {
    public var chat: TelegramChat
    public var messageID: Int64
    public var user: TelegramUser?
    /// The emoji newly added (in `new_reaction` and not in `old_reaction`).
    public var added: [String]

    init?(json: JSONValue) {
        guard let chat = json["chat"].flatMap(TelegramChat.init(json:)), let messageID = json["message_id"]?.int64 else { return nil }
        self.chat = chat
        self.messageID = messageID
        self.user = json["user"].flatMap(TelegramUser.init(json:))
        let emoji = { (list: JSONValue?) in (list?.arrayValue ?? []).compactMap { $0["type"]?.stringValue == "emoji" ? $0["emoji"]?.stringValue : nil } }
        let old = Set(emoji(json["old_reaction"]))
        self.added = emoji(json["new_reaction"]).filter { !old.contains($0) }
    }
}

extension JSONValue {
    /// Telegram's ids: up to 52 significant bits, negative for groups.
    var int64: Int64? { intValue.map(Int64.init) }
}
