import RelayCore
import RelayTestSupport
import Testing

@testable import TelegramAdapter

/// Which Telegram messages carry a voice note the relay hears, and which are its business.
@Suite("Telegram voice notes in updates")
struct TelegramVoiceUpdateTests {
    static let voice = TelegramUpdates.voiceObject(fileID: "AwACAgIAAxkBAAF1voice", duration: 7, size: 21_000)

    static func message(_ update: JSONValue) throws -> TelegramIncomingMessage {
        guard case .message(let message)? = (try? TelegramUpdate.decode(update.encoded()))?.kind else { throw DecodingFailed() }
        return message
    }

    struct DecodingFailed: Error {}

    @Test func aVoiceNoteAndItsCaptionAreRead() throws {
        let message = try Self.message(TelegramUpdates.voiceMessage(updateID: 1, messageID: 2, chat: 42, from: 42, voice: Self.voice, caption: "/translate fr"))
        #expect(message.text == "/translate fr")
        #expect(message.entities.first?.type == "bot_command")
        #expect(message.clip == VoiceClip(file: "AwACAgIAAxkBAAF1voice", mimeType: "audio/ogg", byteSize: 21_000, duration: 7, origin: .own))
    }

    @Test func audioFilesAndVideoNotesAreClipsToo() throws {
        for (key, type) in [("audio", "audio/mpeg"), ("video_note", "video/mp4")] {
            var object: [String: JSONValue] = ["file_id": "F1", "duration": 12, "file_size": 3000]
            if key == "audio" { object["mime_type"] = .string(type) }
            let update: JSONValue = [
                "update_id": 3,
                "message": ["message_id": 4, "chat": ["id": 42, "type": "private"], "from": ["id": 42, "first_name": "A"], key: .object(object)],
            ]
            let clip = try #require(try Self.message(update).clip, "\(key)")
            #expect(clip.mimeType == type && clip.duration == 12 && clip.byteSize == 3000)
        }
    }

    @Test func aRepliedToVoiceNoteIsTheRepliedToClip() throws {
        let message = try Self.message(
            TelegramUpdates.replyToVoice(
                updateID: 5, messageID: 6, chat: 42, from: 42, text: "/transcribe", voiceMessageID: 5, voiceFrom: 43, voice: Self.voice))
        #expect(message.clip == nil)
        #expect(message.replyTo?.clip?.origin == .repliedTo)
    }

    @Test func declaredNumbersOutOfRangeAreDropped() throws {
        let voice = TelegramUpdates.voiceObject(fileID: "F2", duration: -5, size: -1)
        let clip = try #require(try Self.message(TelegramUpdates.voiceMessage(updateID: 7, messageID: 8, chat: 42, from: 42, voice: voice)).clip)
        #expect(clip.duration == nil && clip.byteSize == nil)
    }

    @Test func whichVoiceNotesAreTheRelays() throws {
        let bot = "RheaTestBot"
        func line(_ update: JSONValue) throws -> String? { TelegramInbound.commandLine(try Self.message(update), botUsername: bot) }
        // Private: alone or with a note, transcribed (""); with a command, that command.
        #expect(try line(TelegramUpdates.voiceMessage(updateID: 1, messageID: 1, chat: 42, from: 42, voice: Self.voice)) == "")
        #expect(try line(TelegramUpdates.voiceMessage(updateID: 1, messageID: 1, chat: 42, from: 42, voice: Self.voice, caption: "for later")) == "")
        #expect(
            try line(TelegramUpdates.voiceMessage(updateID: 1, messageID: 1, chat: 42, from: 42, voice: Self.voice, caption: "translate fr")) == "translate fr")
        // A group: only when addressed.
        let group: Int64 = -1_001_234_567_890
        #expect(try line(TelegramUpdates.voiceMessage(updateID: 1, messageID: 1, chat: group, from: 42, voice: Self.voice)) == nil)
        #expect(try line(TelegramUpdates.voiceMessage(updateID: 1, messageID: 1, chat: group, from: 42, voice: Self.voice, caption: "@\(bot)")) == "")
        #expect(
            try line(TelegramUpdates.voiceMessage(updateID: 1, messageID: 1, chat: group, from: 42, voice: Self.voice, caption: "@\(bot) translate fr"))
                == "/translate fr")
        #expect(
            try line(
                TelegramUpdates.replyToVoice(
                    updateID: 1, messageID: 2, chat: group, from: 42, text: "@\(bot)", voiceMessageID: 1, voiceFrom: 43, voice: Self.voice)) == "/transcribe")
    }
}
