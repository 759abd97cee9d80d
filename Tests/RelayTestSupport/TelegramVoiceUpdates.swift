import Foundation
public import RelayCore

/// Voice notes in Telegram's shape: a `message` with `voice` (and a `caption` with its
/// `caption_entities`), and a text message that replies to one.
extension TelegramUpdates {
    /// A `Voice` object: the file id the fake Bot API serves (`FakeTelegramBotAPI.addFile`), its
    /// length in seconds, type and size as Telegram declares them.
    public static func voiceObject(fileID: String, duration: Int = 3, size: Int? = nil, mimeType: String = "audio/ogg") -> JSONValue {
        var object: [String: JSONValue] = [
            "file_id": .string(fileID), "file_unique_id": .string("AgAD" + String(fileID.suffix(6))), "duration": .int(duration),
            "mime_type": .string(mimeType),
        ]
        if let size { object["file_size"] = .int(size) }
        return .object(object)
    }

    /// A voice note from a person, captioned or not.
    public static func voiceMessage(
        updateID: Int, messageID: Int, chat: Int64, chatType: String? = nil, from: Int64, voice: JSONValue, caption: String? = nil
    ) -> JSONValue {
        var message = messageObject(messageID: messageID, chat: chat, chatType: chatType, from: from)
        message["voice"] = voice
        if let caption {
            message["caption"] = .string(caption)
            let found = entities(in: caption)
            if !found.isEmpty { message["caption_entities"] = .array(found) }
        }
        return ["update_id": .int(updateID), "message": .object(message)]
    }

    /// A text message (a command) that replies to someone's voice note.
    public static func replyToVoice(
        updateID: Int, messageID: Int, chat: Int64, chatType: String? = nil, from: Int64, text: String, voiceMessageID: Int, voiceFrom: Int64,
        voice: JSONValue
    ) -> JSONValue {
        var message = messageObject(messageID: messageID, chat: chat, chatType: chatType, from: from)
        message["text"] = .string(text)
        let found = entities(in: text)
        if !found.isEmpty { message["entities"] = .array(found) }
        var replied = messageObject(messageID: voiceMessageID, chat: chat, chatType: chatType, from: voiceFrom, firstName: "Bob", username: "bob")
        replied["voice"] = voice
        message["reply_to_message"] = .object(replied)
        return ["update_id": .int(updateID), "message": .object(message)]
    }

    private static func messageObject(
        messageID: Int, chat: Int64, chatType: String?, from: Int64, firstName: String = "Alice", username: String = "alice"
    ) -> [String: JSONValue] {
        [
            "message_id": .int(messageID), "from": user(id: from, firstName: firstName, username: username),
            "chat": Self.chat(id: chat, type: chatType), "date": .int(Int(Date().timeIntervalSince1970)),
        ]
    }
}
