import Foundation
public import RelayCore

/// Telegram `Update` objects in their real shape, to enqueue on a `FakeTelegramBotAPI` (long
/// polling) or to deliver to the relay's webhook.
///
/// Chats: a private chat's id is the user's; groups are negative, supergroups `-100…`. Texts
/// carry the entities Telegram's clients add: `bot_command` for `/command` and
/// `/command@BotName` (at the start or after whitespace) and `mention` for `@username`, with
/// offsets and lengths in UTF-16 code units.
public enum TelegramUpdates {
    /// A Telegram `User`.
    public static func user(id: Int64, firstName: String = "Alice", username: String? = "alice", isBot: Bool = false) -> JSONValue {
        var object: [String: JSONValue] = ["id": .int(Int(id)), "is_bot": .bool(isBot), "first_name": .string(firstName)]
        if let username { object["username"] = .string(username) }
        if !isBot { object["language_code"] = "en" }
        return .object(object)
    }

    /// A Telegram `Chat`: `private` (named after the user), `group` or `supergroup` (titled).
    public static func chat(
        id: Int64, type: String? = nil, title: String? = nil, firstName: String = "Alice", username: String? = "alice"
    ) -> JSONValue {
        let type = type ?? (id > 0 ? "private" : (id <= -1_000_000_000_000 ? "supergroup" : "group"))
        var object: [String: JSONValue] = ["id": .int(Int(id)), "type": .string(type)]
        switch type {
        case "private":
            object["first_name"] = .string(firstName)
            if let username { object["username"] = .string(username) }
        case "group":
            object["title"] = .string(title ?? "Test Group")
            object["all_members_are_administrators"] = true
        default:
            object["title"] = .string(title ?? "Test Group")
        }
        return .object(object)
    }

    /// A `message` update (or `edited_message`, with `edited`) from a person.
    ///
    /// - Parameter replyTo: the message this one replies to: its id, text, author, and whether
    ///   the author is the bot (then named `botUsername`).
    public static func message(
        updateID: Int, messageID: Int, chat: Int64, chatType: String = "private", chatTitle: String? = nil, from: Int64,
        firstName: String = "Alice", username: String? = "alice", text: String,
        replyTo: (messageID: Int, text: String, fromID: Int64, isBot: Bool)? = nil, date: Int? = nil, edited: Bool = false,
        botUsername: String = FakeTelegramBotAPI.defaultBotUsername
    ) -> JSONValue {
        let date = date ?? Int(Date().timeIntervalSince1970)
        let chatObject = Self.chat(id: chat, type: chatType, title: chatTitle, firstName: firstName, username: username)
        var message: [String: JSONValue] = [
            "message_id": .int(messageID), "from": user(id: from, firstName: firstName, username: username), "chat": chatObject,
            "date": .int(date), "text": .string(text),
        ]
        let found = entities(in: text)
        if !found.isEmpty { message["entities"] = .array(found) }
        if let replyTo {
            let author =
                replyTo.isBot
                ? user(id: replyTo.fromID, firstName: FakeTelegramBotAPI.defaultBotFirstName, username: botUsername, isBot: true)
                : user(id: replyTo.fromID, firstName: "Bob", username: "bob")
            var replied: [String: JSONValue] = [
                "message_id": .int(replyTo.messageID), "from": author, "chat": chatObject, "date": .int(date - 60), "text": .string(replyTo.text),
            ]
            let repliedEntities = entities(in: replyTo.text)
            if !repliedEntities.isEmpty { replied["entities"] = .array(repliedEntities) }
            message["reply_to_message"] = .object(replied)
        }
        if edited { message["edit_date"] = .int(date + 1) }
        return ["update_id": .int(updateID), edited ? "edited_message" : "message": .object(message)]
    }

    /// A `callback_query` update: `from` pressed a button carrying `data` on the bot's message
    /// `messageID` in `chat`.
    public static func callbackQuery(
        updateID: Int, id: String, from: Int64, firstName: String = "Alice", username: String? = "alice", chat: Int64, chatType: String? = nil,
        messageID: Int, messageText: String = "…", data: String, botID: Int64 = FakeTelegramBotAPI.defaultBotID,
        botUsername: String = FakeTelegramBotAPI.defaultBotUsername
    ) -> JSONValue {
        let message: JSONValue = [
            "message_id": .int(messageID),
            "from": user(id: botID, firstName: FakeTelegramBotAPI.defaultBotFirstName, username: botUsername, isBot: true),
            "chat": Self.chat(id: chat, type: chatType, firstName: firstName, username: username), "date": .int(Int(Date().timeIntervalSince1970) - 5),
            "text": .string(messageText),
        ]
        return [
            "update_id": .int(updateID),
            "callback_query": [
                "id": .string(id), "from": user(id: from, firstName: firstName, username: username), "message": message,
                "chat_instance": .string(String(-7_000_000_000_000_000_000 + abs(chat) % 1_000_000)), "data": .string(data),
            ],
        ]
    }

    /// An `inline_query` update: `from` typed `@Bot query` in a chat of `chatType` (`sender`,
    /// `private`, `group`, `supergroup`, `channel`; nil leaves it out, as for secret chats).
    ///
    /// `FakeTelegramBotAPI.issueInlineQuery` makes one whose id the fake knows; enqueueing or
    /// delivering this one through the fake registers its id too.
    public static func inlineQuery(
        updateID: Int, id: String, from: Int64, firstName: String = "Alice", username: String? = "alice", query: String,
        chatType: String? = "sender", offset: String = ""
    ) -> JSONValue {
        var inline: [String: JSONValue] = [
            "id": .string(id), "from": user(id: from, firstName: firstName, username: username), "query": .string(query), "offset": .string(offset),
        ]
        if let chatType { inline["chat_type"] = .string(chatType) }
        return ["update_id": .int(updateID), "inline_query": .object(inline)]
    }

    /// A `message_reaction` update: `user` changed their reactions on `messageID` from `old` to
    /// `new` (emoji). Telegram sends these only to bots that list `message_reaction` in
    /// `allowed_updates`, and only where the bot is an administrator.
    public static func messageReaction(
        updateID: Int, chat: Int64, chatType: String? = nil, chatTitle: String? = nil, messageID: Int, user userID: Int64,
        firstName: String = "Alice", username: String? = "alice", new: [String], old: [String] = [], date: Int? = nil
    ) -> JSONValue {
        [
            "update_id": .int(updateID),
            "message_reaction": [
                "chat": Self.chat(id: chat, type: chatType, title: chatTitle, firstName: firstName, username: username), "message_id": .int(messageID),
                "user": user(id: userID, firstName: firstName, username: username), "date": .int(date ?? Int(Date().timeIntervalSince1970)),
                "old_reaction": .array(old.map { ["type": "emoji", "emoji": .string($0)] }),
                "new_reaction": .array(new.map { ["type": "emoji", "emoji": .string($0)] }),
            ],
        ]
    }

    /// The `bot_command` and `mention` entities Telegram marks in `text`.
    public static func entities(in text: String) -> [JSONValue] {
        let scalars = Array(text.unicodeScalars)
        var offsets = [0]
        for scalar in scalars { offsets.append(offsets[offsets.count - 1] + UTF16.width(scalar)) }
        func isWord(_ index: Int) -> Bool {
            guard index < scalars.count else { return false }
            let scalar = scalars[index]
            return scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_")
        }
        func word(from start: Int) -> Int {
            var end = start
            while isWord(end) { end += 1 }
            return end
        }
        var found: [JSONValue] = []
        var index = 0
        while index < scalars.count {
            let startsToken = index == 0 || scalars[index - 1].properties.isWhitespace
            if scalars[index] == "/", startsToken {
                var end = word(from: index + 1)
                if (1...64).contains(end - index - 1) {
                    if end < scalars.count, scalars[end] == "@" {
                        let botEnd = word(from: end + 1)
                        if (3...32).contains(botEnd - end - 1) { end = botEnd }
                    }
                    found.append(["type": "bot_command", "offset": .int(offsets[index]), "length": .int(offsets[end] - offsets[index])])
                    index = end
                    continue
                }
            }
            if scalars[index] == "@", index == 0 || !isWord(index - 1) {
                let end = word(from: index + 1)
                if (3...32).contains(end - index - 1) {
                    found.append(["type": "mention", "offset": .int(offsets[index]), "length": .int(offsets[end] - offsets[index])])
                    index = end
                    continue
                }
            }
            index += 1
        }
        return found
    }
}
