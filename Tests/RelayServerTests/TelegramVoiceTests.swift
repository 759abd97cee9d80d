import Foundation
import Hummingbird
import HummingbirdTesting
import RelayCore
import RelayServer
import RelayTestSupport
import RelayTestTags
import RelayTribunal
import Testing

/// Telegram voice notes through the real server, with a real speech model: the fake Bot API
/// serves the voice note (`getFile`, then the file), faster-whisper-server transcribes it
/// (`SpeechTestServer`), the fake Rhea Tribunal answers the command (it echoes its input, so the
/// reply shows what reached the model). Every check is about what Telegram was sent.
@Suite("Telegram voice notes, through the server", .serialized, .timeLimit(.minutes(5)), .tags(.peers))
struct TelegramVoiceTests {
    typealias Fakes = TelegramFakes
    static let sentence = "Please translate good morning into French."

    /// The fakes' configuration with the real speech model as the transcription service.
    static func configuration(_ fakes: Fakes, transcription: TranscriptionConfiguration?) -> AppConfiguration {
        var configuration = fakes.configuration()
        configuration.transcription = transcription
        return configuration
    }

    static func speech(timeout: Duration = .seconds(60), limits: TranscriptionLimits = TranscriptionLimits()) async throws -> TranscriptionConfiguration {
        let server = try await SpeechTestServer.shared()
        return TranscriptionConfiguration(baseURL: server.baseURL, model: SpeechTestServer.model, limits: limits, timeout: timeout)
    }

    /// A spoken sentence, kept by the fake Bot API as a voice note: its `Voice` object.
    static func voiceNote(_ telegram: FakeTelegramBotAPI, saying text: String = sentence, duration: Int = 3) async throws -> JSONValue {
        let audio = try await SpeechSample.oggOpus(text)
        return TelegramUpdates.voiceObject(fileID: telegram.addFile(audio), duration: duration, size: audio.count)
    }

    /// The texts posted to `chat`, once the relay is idle.
    static func posted(_ relay: TelegramRelay, chat: Int64) async throws -> [String] {
        try await relay.settled(safety: .seconds(180))
        return relay.telegram.messages(chat: chat).map(\.text)
    }

    @Test func aVoiceNoteCaptionedWithACommandRunsItOnTheTranscript() async throws {
        try await Fakes.with { fakes in
            try await fakes.withRelay(Self.configuration(fakes, transcription: try await Self.speech())) { relay in
                let voice = try await Self.voiceNote(relay.telegram)
                let update = TelegramUpdates.voiceMessage(
                    updateID: 1, messageID: 10, chat: Fakes.alice, from: Fakes.alice, voice: voice, caption: "/translate fr")
                #expect(try await relay.deliver(update).status == .ok)
                let posted = try await Self.posted(relay, chat: Fakes.alice)
                #expect(posted.count == 1, "\(posted)")
                // The fake backend answers "[translate:fr] <its input>": the transcript reached it.
                let reply = try #require(posted.first).lowercased()
                #expect(reply.contains("[translate:fr]") && reply.contains("translate good morning"), "\(posted)")
                #expect(relay.telegram.calls("getFile").count == 1)
                #expect(relay.telegram.calls("file").count == 1)
            }
        }
    }

    @Test func transcribeSentAsAReplyToAVoiceNotePostsItsTranscript() async throws {
        try await Fakes.with { fakes in
            try await fakes.withRelay(Self.configuration(fakes, transcription: try await Self.speech())) { relay in
                let voice = try await Self.voiceNote(relay.telegram)
                let update = TelegramUpdates.replyToVoice(
                    updateID: 2, messageID: 21, chat: Fakes.group, chatType: "supergroup", from: Fakes.alice, text: "/transcribe", voiceMessageID: 20,
                    voiceFrom: Fakes.bob, voice: voice)
                #expect(try await relay.deliver(update).status == .ok)
                let posted = try await Self.posted(relay, chat: Fakes.group)
                let reply = try #require(relay.telegram.messages(chat: Fakes.group).first { $0.replyToMessageID == 21 })
                #expect(reply.text.contains("Transcript"), "\(posted)")
                #expect(reply.text.lowercased().contains("good morning"), "\(posted)")
                #expect(await relay.tribunal.requests(path: FakeRheaTribunal.quickPath).isEmpty, "transcribing asks no model")
            }
        }
    }

    @Test func aPrivateTranscriptGoesToTheAskerAlone() async throws {
        try await Fakes.with { fakes in
            try await fakes.withRelay(Self.configuration(fakes, transcription: try await Self.speech())) { relay in
                let voice = try await Self.voiceNote(relay.telegram)
                let update = TelegramUpdates.replyToVoice(
                    updateID: 12, messageID: 121, chat: Fakes.group, chatType: "supergroup", from: Fakes.alice, text: "/transcribe --private",
                    voiceMessageID: 120, voiceFrom: Fakes.bob, voice: voice)
                _ = try await relay.deliver(update)
                try await relay.settled(safety: .seconds(180))
                let inGroup = relay.telegram.messages(chat: Fakes.group).map(\.text)
                let inPrivate = relay.telegram.messages(chat: Fakes.alice).map(\.text)
                #expect(inGroup.allSatisfy { !$0.lowercased().contains("good morning") }, "\(inGroup)")
                #expect(inPrivate.contains { $0.contains("Transcript") && $0.lowercased().contains("good morning") }, "\(inPrivate)")
            }
        }
    }

    @Test func aVoiceNoteAloneInAPrivateChatIsAnsweredWithItsTranscript() async throws {
        try await Fakes.with { fakes in
            try await fakes.withRelay(Self.configuration(fakes, transcription: try await Self.speech())) { relay in
                let voice = try await Self.voiceNote(relay.telegram, saying: "The meeting moves to Thursday morning.")
                #expect(
                    try await relay.deliver(TelegramUpdates.voiceMessage(updateID: 3, messageID: 30, chat: Fakes.alice, from: Fakes.alice, voice: voice))
                        .status == .ok)
                let posted = try await Self.posted(relay, chat: Fakes.alice)
                #expect(posted.count == 1, "\(posted)")
                #expect(posted.first?.contains("Transcript") == true, "\(posted)")
                #expect(posted.first?.lowercased().contains("thursday") == true, "\(posted)")
            }
        }
    }

    @Test func settingsVoiceAiAnswersAVoiceNoteAloneAsAPrompt() async throws {
        try await Fakes.with { fakes in
            try await fakes.withRelay(Self.configuration(fakes, transcription: try await Self.speech())) { relay in
                _ = try await relay.deliver(relay.message("/settings voice ai", update: 8, id: 80))
                try await relay.settled(safety: .seconds(180))
                let voice = try await Self.voiceNote(relay.telegram)
                _ = try await relay.deliver(TelegramUpdates.voiceMessage(updateID: 9, messageID: 81, chat: Fakes.alice, from: Fakes.alice, voice: voice))
                try await relay.settled(safety: .seconds(180))
                let reply = try #require(relay.telegram.messages(chat: Fakes.alice).first { $0.replyToMessageID == 81 })
                #expect(!reply.text.contains("Transcript"), "\(reply.text)")
                #expect(reply.text.lowercased().contains("translate good morning"), "\(reply.text)")
                let asked = await relay.tribunal.requests(path: FakeRheaTribunal.quickPath)
                #expect(asked.count == 1 && asked[0].rawBody.lowercased().contains("good morning"), "the transcript went to the model as a prompt")
            }
        }
    }

    @Test func aVoiceNoteInAGroupThatNobodyAddressedIsLeftAlone() async throws {
        try await Fakes.with { fakes in
            try await fakes.withRelay(Self.configuration(fakes, transcription: try await Self.speech())) { relay in
                let voice = try await Self.voiceNote(relay.telegram)
                let update = TelegramUpdates.voiceMessage(
                    updateID: 4, messageID: 40, chat: Fakes.group, chatType: "supergroup", from: Fakes.alice, voice: voice)
                #expect(try await relay.deliver(update).status == .ok)
                try await relay.settled(safety: .seconds(180))
                #expect(relay.telegram.calls("sendMessage").isEmpty)
                #expect(relay.telegram.calls("getFile").isEmpty, "nothing is fetched for a note that is not the relay's")
            }
        }
    }

    @Test func aVoiceNoteCaptionedWithTheBotsNameIsTranscribedInAGroup() async throws {
        try await Fakes.with { fakes in
            try await fakes.withRelay(Self.configuration(fakes, transcription: try await Self.speech())) { relay in
                let voice = try await Self.voiceNote(relay.telegram)
                let update = TelegramUpdates.voiceMessage(
                    updateID: 5, messageID: 50, chat: Fakes.group, chatType: "supergroup", from: Fakes.alice, voice: voice,
                    caption: "@" + FakeTelegramBotAPI.defaultBotUsername)
                #expect(try await relay.deliver(update).status == .ok)
                let posted = try await Self.posted(relay, chat: Fakes.group)
                #expect(posted.contains { $0.contains("Transcript") && $0.lowercased().contains("morning") }, "\(posted)")
            }
        }
    }

    @Test func aChainRunAsAReplyToAVoiceNoteGetsTheTranscriptAsInput() async throws {
        try await Fakes.with { fakes in
            try await fakes.withRelay(Self.configuration(fakes, transcription: try await Self.speech())) { relay in
                _ = try await relay.deliver(relay.message("/chain save frenchify = input > translate:fr > output", update: 60, id: 60))
                try await relay.settled(safety: .seconds(180))
                let voice = try await Self.voiceNote(relay.telegram)
                let update = TelegramUpdates.replyToVoice(
                    updateID: 61, messageID: 62, chat: Fakes.alice, from: Fakes.alice, text: "/run frenchify", voiceMessageID: 61, voiceFrom: Fakes.alice,
                    voice: voice)
                #expect(try await relay.deliver(update).status == .ok)
                try await relay.settled(safety: .seconds(180))
                let reply = try #require(relay.telegram.messages(chat: Fakes.alice).first { $0.replyToMessageID == 62 })
                #expect(reply.text.contains("Chain frenchify"), "\(reply.text)")
                #expect(reply.text.lowercased().contains("[translate:fr]") && reply.text.lowercased().contains("good morning"), "\(reply.text)")
            }
        }
    }

    @Test func typedTextWinsOverTheVoiceNote() async throws {
        try await Fakes.with { fakes in
            try await fakes.withRelay(Self.configuration(fakes, transcription: try await Self.speech())) { relay in
                let voice = try await Self.voiceNote(relay.telegram)
                let update = TelegramUpdates.voiceMessage(
                    updateID: 7, messageID: 70, chat: Fakes.alice, from: Fakes.alice, voice: voice, caption: "/translate fr See you soon")
                _ = try await relay.deliver(update)
                let posted = try await Self.posted(relay, chat: Fakes.alice)
                #expect(posted.first?.contains("See you soon") == true, "\(posted)")
                #expect(relay.telegram.calls("getFile").isEmpty, "the voice note is not fetched when text was typed")
            }
        }
    }
}
