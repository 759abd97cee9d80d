public import RelayCore

/// One Bot API `Update`, decoded into what the relay handles: a message (commands, mentions,
/// DMs), a button press, an inline query, a reaction. Everything else (edits, member changes…) is
/// `.other` and only advances the offset.
///
/// Telegram adds fields and update kinds often: unknown keys are ignored, and a kind the relay
/// does not handle — or one it does whose object lacks what it needs — is `.other`, never an
/// unreadable update. Only an update without its `update_id` fails to decode.
public struct TelegramUpdate: Sendable, Hashable, Decodable {
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

    private enum CodingKeys: String, CodingKey {
        case id = "update_id"
        case message
        case callbackQuery = "callback_query"
        case inlineQuery = "inline_query"
        case reaction = "message_reaction"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        if let message = container.lenient(TelegramIncomingMessage.self, .message) {
            kind = .message(message)
        } else if let query = container.lenient(TelegramCallbackQuery.self, .callbackQuery) {
            kind = .callbackQuery(query)
        } else if let query = container.lenient(TelegramInlineQuery.self, .inlineQuery) {
            kind = .inlineQuery(query)
        } else if let reaction = container.lenient(TelegramReaction.self, .reaction) {
            kind = .reaction(reaction)
        } else {
            kind = .other
        }
    }

    /// The update in `body` (a webhook's request, a test's fixture), or what is wrong with it.
    public static func decode(_ body: some Collection<UInt8>) throws(PayloadProblem) -> TelegramUpdate {
        try PayloadDecoding.json(TelegramUpdate.self, from: body, as: "Telegram update")
    }
}

/// One element of `getUpdates`' list: its `update_id` whenever it has one (the offset moves past
/// it whatever else is wrong), and the update or why it could not be read.
public struct TelegramPolledUpdate: Sendable, Hashable, Decodable {
    public var id: Int64?
    public var update: Result<TelegramUpdate, PayloadProblem>

    private enum CodingKeys: String, CodingKey {
        case id = "update_id"
    }

    public init(from decoder: any Decoder) throws {
        id = (try? decoder.container(keyedBy: CodingKeys.self))?.lenient(Int64.self, .id)
        do {
            update = .success(try TelegramUpdate(from: decoder))
        } catch let error as DecodingError {
            update = .failure(PayloadProblem("Telegram update", PayloadDecoding.describe(error)))
        }
    }

    public init(id: Int64?, update: Result<TelegramUpdate, PayloadProblem>) {
        self.id = id
        self.update = update
    }
}

/// A chat: private (its id is the user's), group, supergroup or channel.
public struct TelegramChat: Sendable, Hashable, Decodable {
    public var id: Int64
    public var type: String
    public var title: String?

    private enum CodingKeys: String, CodingKey {
        case id, type, title
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        type = try container.decode(String.self, forKey: .type)
        title = container.lenient(String.self, .title)
    }

    public var isPrivate: Bool { type == "private" }
    public var isGroup: Bool { type == "group" || type == "supergroup" }
}

/// Who sent something.
public struct TelegramUser: Sendable, Hashable, Decodable {
    public var id: Int64
    public var isBot: Bool
    public var name: String
    public var username: String?

    private enum CodingKeys: String, CodingKey {
        case id, username
        case isBot = "is_bot"
        case firstName = "first_name"
        case lastName = "last_name"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        isBot = container.lenient(Bool.self, .isBot) ?? false
        let first = container.lenient(String.self, .firstName) ?? ""
        let last = container.lenient(String.self, .lastName)
        name = [first, last].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " ")
        username = container.lenient(String.self, .username)
    }
}

/// A message with text (or a caption), or a voice note, audio file or video note: the only kinds
/// the relay reads.
public struct TelegramIncomingMessage: Sendable, Hashable, Decodable {
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
        /// The person a `text_mention` names (one without a username, picked after `@`).
        public var user: TelegramUser?
    }

    public struct Replied: Sendable, Hashable {
        public var id: Int64
        public var text: String?
        public var fromBot: Bool
        public var fromID: Int64?
        /// Who wrote the replied-to message.
        public var from: TelegramUser?
        /// The replied-to message's voice note, audio file or video note.
        public var clip: VoiceClip?
    }

    private enum CodingKeys: String, CodingKey {
        case id = "message_id"
        case chat, from, text, caption, entities
        case captionEntities = "caption_entities"
        case replyTo = "reply_to_message"
        case voice, audio
        case videoNote = "video_note"
    }

    /// An entity as Telegram sends it: a span in UTF-16 code units.
    private struct RawEntity: Decodable {
        var type: String
        var offset: Int
        var length: Int
        var user: TelegramUser?
    }

    /// The replied-to message: any message, read only for what a reply needs.
    private struct RawReplied: Decodable {
        var id: Int64
        var text: String?
        var from: TelegramUser?
        var clip: RawClip?

        private enum CodingKeys: String, CodingKey {
            case id = "message_id"
            case text, caption, from, voice, audio
            case videoNote = "video_note"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(Int64.self, forKey: .id)
            text = container.lenient(String.self, .text) ?? container.lenient(String.self, .caption)
            from = container.lenient(TelegramUser.self, .from)
            clip = RawClip.first(in: container, [(.voice, false), (.audio, false), (.videoNote, true)])
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        chat = try container.decode(TelegramChat.self, forKey: .chat)
        let text = container.lenient(String.self, .text) ?? container.lenient(String.self, .caption) ?? ""
        self.text = text
        from = container.lenient(TelegramUser.self, .from)
        // One odd entity (a kind with other fields) leaves the others readable.
        let raw = container.lenient([Lenient<RawEntity>].self, .entities) ?? container.lenient([Lenient<RawEntity>].self, .captionEntities) ?? []
        entities = raw.compactMap(\.value).compactMap { entity in
            Self.slice(text, utf16Offset: entity.offset, length: entity.length).map { Entity(type: entity.type, text: $0, user: entity.user) }
        }
        clip = RawClip.first(in: container, [(.voice, false), (.audio, false), (.videoNote, true)])?.clip(origin: .own)
        if let reply = container.lenient(RawReplied.self, .replyTo) {
            replyTo = Replied(
                id: reply.id, text: reply.text, fromBot: reply.from?.isBot ?? false, fromID: reply.from?.id, from: reply.from,
                clip: reply.clip?.clip(origin: .repliedTo))
        }
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

/// A message's `voice` (a voice note, OGG/Opus), `audio` (a music or audio file) or `video_note`
/// (a round video, MP4): its `file_id` and what Telegram declares of it. Declared numbers come
/// from outside: only sane ones are kept.
struct RawClip: Decodable {
    var fileID: String
    var fileSize: Int?
    var duration: Int?
    var mimeType: String?
    var isVideoNote = false

    private enum CodingKeys: String, CodingKey {
        case fileID = "file_id"
        case fileSize = "file_size"
        case duration
        case mimeType = "mime_type"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        fileID = try container.decode(String.self, forKey: .fileID)
        fileSize = container.lenient(Int.self, .fileSize)
        duration = container.lenient(Int.self, .duration)
        mimeType = container.lenient(String.self, .mimeType)
    }

    /// The first of `keys` that holds a clip with a `file_id` (a video note's flag beside it).
    static func first<Key: CodingKey>(in container: KeyedDecodingContainer<Key>, _ keys: [(Key, Bool)]) -> RawClip? {
        for (key, isVideoNote) in keys {
            guard var clip = container.lenient(RawClip.self, key), !clip.fileID.isEmpty else { continue }
            clip.isVideoNote = isVideoNote
            return clip
        }
        return nil
    }

    func clip(origin: VoiceClip.Origin) -> VoiceClip {
        let size = UntrustedNumber.checked(fileSize, in: 0...(4 << 30), source: "telegram", field: "file_size")
        let seconds = UntrustedNumber.checked(duration, in: 0...(7 * 24 * 3600), source: "telegram", field: "duration")
        return VoiceClip(file: fileID, mimeType: mimeType ?? (isVideoNote ? "video/mp4" : nil), byteSize: size, duration: seconds, origin: origin)
    }
}

/// A press of one of the relay's inline keyboard buttons.
public struct TelegramCallbackQuery: Sendable, Hashable, Decodable {
    public var id: String
    public var from: TelegramUser
    /// The message holding the button (absent for buttons on inline results).
    public var chat: TelegramChat?
    public var messageID: Int64?
    public var data: String?

    private enum CodingKeys: String, CodingKey {
        case id, from, message, data
    }

    /// The message holding the button; possibly "inaccessible" (only its chat and id), so
    /// nothing else of it is read.
    private struct Holder: Decodable {
        var chat: TelegramChat?
        var messageID: Int64?

        private enum CodingKeys: String, CodingKey {
            case chat
            case messageID = "message_id"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            chat = container.lenient(TelegramChat.self, .chat)
            messageID = container.lenient(Int64.self, .messageID)
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        from = try container.decode(TelegramUser.self, forKey: .from)
        let holder = container.lenient(Holder.self, .message)
        chat = holder?.chat
        messageID = holder?.messageID
        data = container.lenient(String.self, .data)
    }
}

/// `@Bot …` typed in any chat.
public struct TelegramInlineQuery: Sendable, Hashable, Decodable {
    public var id: String
    public var from: TelegramUser
    public var query: String

    private enum CodingKeys: String, CodingKey {
        case id, from, query
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        from = try container.decode(TelegramUser.self, forKey: .from)
        query = container.lenient(String.self, .query) ?? ""
    }
}

/// A reaction a person added to a message (`message_reaction`: the bot must be an admin of a
/// group to get these).
public struct TelegramReaction: Sendable, Hashable, Decodable {
    public var chat: TelegramChat
    public var messageID: Int64
    public var user: TelegramUser?
    /// The emoji newly added (in `new_reaction` and not in `old_reaction`).
    public var added: [String]

    private enum CodingKeys: String, CodingKey {
        case chat, user
        case messageID = "message_id"
        case oldReaction = "old_reaction"
        case newReaction = "new_reaction"
    }

    /// A `ReactionType`: an emoji, or a custom emoji or paid reaction, which carry no `emoji`.
    private struct Reaction: Decodable {
        var type: String?
        var emoji: String?
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        chat = try container.decode(TelegramChat.self, forKey: .chat)
        messageID = try container.decode(Int64.self, forKey: .messageID)
        user = container.lenient(TelegramUser.self, .user)
        func emoji(_ key: CodingKeys) -> [String] {
            (container.lenient([Lenient<Reaction>].self, key) ?? []).compactMap { $0.value?.type == "emoji" ? $0.value?.emoji : nil }
        }
        let old = Set(emoji(.oldReaction))
        added = emoji(.newReaction).filter { !old.contains($0) }
    }
}
