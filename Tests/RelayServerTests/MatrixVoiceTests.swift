import Foundation
import MatrixAdapter
import RelayCore
import RelayServer
import RelayTestSupport
import RelayTestTags
import RelayTribunal
import Testing

/// Matrix voice notes (`m.audio`) through the real server, against a real Synapse and the real
/// speech model: a person uploads a clip to the homeserver's media repository and sends it as
/// Element sends a voice message; the relay fetches it from the homeserver's authenticated media
/// API and answers in the room.
@Suite("Matrix voice notes, against Synapse", .serialized, .timeLimit(.minutes(6)), .tags(.peers))
struct MatrixVoiceTests {
    static func configuration(_ fakes: MatrixFakes, maxBytes: Int? = nil) async throws -> AppConfiguration {
        var configuration = fakes.configuration()
        let speech = try await SpeechTestServer.shared()
        var transcription = TranscriptionConfiguration(baseURL: speech.baseURL, model: SpeechTestServer.model)
        if let maxBytes { transcription.limits.maxBytes = maxBytes }
        configuration.transcription = transcription
        return configuration
    }

    /// The bot's answers to `event` in `room`, once the relay is idle; a loaded machine's speech
    /// model may take a while.
    static func answers(_ relay: MatrixRelay, to event: String, in room: String) async throws -> [MatrixShownMessage] {
        try await eventually("the bot to answer \(event)", safety: .seconds(180)) {
            try await relay.botMessages(in: room).contains { $0.replyTo == event && !$0.text.hasPrefix("⏳") }
        }
        try await relay.settled()
        return try await relay.botMessages(in: room).filter { $0.replyTo == event }
    }

    /// A room alice made with the bot and bob in it: three members, so a voice note there is
    /// the bot's only when addressed.
    static func groupRoom(_ relay: MatrixRelay, _ fakes: MatrixFakes) async throws -> String {
        let group = try await relay.room()
        let bob = try await fakes.synapse.register("bob")
        _ = try await relay.alice.call(.POST, "/rooms/\(MatrixTestUser.encode(group))/invite", body: ["user_id": .string(bob.user)])
        try await bob.join(group)
        return group
    }

    /// As Element sends a reply: the relation, and the quoted fallback in the body.
    static func reply(_ text: String, to event: String, by user: MatrixTestUser, in room: String) async throws -> String {
        try await user.send("> <\(user.user)> sent a voice message.\n\n\(text)", in: room, relatesTo: ["m.in_reply_to": ["event_id": .string(event)]])
    }

    @Test func aCommandSentAsAReplyToAVoiceNoteRunsOnItsTranscript() async throws {
        try await MatrixFakes.with { fakes in
            let audio = try await SpeechSample.oggOpus("Please translate good morning into French.")
            try await fakes.withRelay(try await Self.configuration(fakes)) { relay in
                let room = try await relay.room()
                let uri = try await relay.alice.upload(audio)
                let note = try await relay.alice.sendAudio(uri, in: room, size: audio.count)
                let command = try await Self.reply("!translate fr", to: note, by: relay.alice, in: room)
                let answer = try #require(try await Self.answers(relay, to: command, in: room).last)
                #expect(answer.text.contains("[translate:fr]") && answer.text.lowercased().contains("good morning"), "\(answer.text)")
                let asked = try #require(await relay.tribunal.lastRequest(path: FakeRheaTribunal.quickPath))
                #expect(!asked.rawBody.contains("Voice message.ogg"), "the file's name is not what was said: \(asked.rawBody)")
            }
        }
    }

    @Test func aVoiceNoteInADirectRoomIsTranscribedAndInAGroupOnlyWhenAddressed() async throws {
        try await MatrixFakes.with { fakes in
            let audio = try await SpeechSample.oggOpus("The meeting moves to Thursday morning.")
            try await fakes.withRelay(try await Self.configuration(fakes)) { relay in
                // Alice and the bot alone: the voice note needs no command.
                let direct = try await relay.room()
                let uri = try await relay.alice.upload(audio)
                let note = try await relay.alice.sendAudio(uri, in: direct, size: audio.count)
                let answer = try #require(try await Self.answers(relay, to: note, in: direct).last)
                #expect(answer.text.contains("Transcript") && answer.text.lowercased().contains("thursday"), "\(answer.text)")

                // With a third member, the same note is left alone until someone addresses the bot.
                let group = try await Self.groupRoom(relay, fakes)
                let unaddressed = try await relay.alice.sendAudio(uri, in: group, size: audio.count)
                let name = MatrixTestUser.localpart(relay.bot.user)
                let addressed = try await relay.alice.send(
                    "> <\(relay.alice.user)> sent a voice message.\n\n\(name)", in: group, relatesTo: ["m.in_reply_to": ["event_id": .string(unaddressed)]],
                    mentions: [relay.bot.user])
                let heard = try #require(try await Self.answers(relay, to: addressed, in: group).last)
                #expect(heard.text.contains("Transcript") && heard.text.lowercased().contains("thursday"), "\(heard.text)")
                #expect(try await relay.botMessages(in: group).allSatisfy { $0.replyTo != unaddressed })
            }
        }
    }

    @Test func aChainRunAsAReplyToAVoiceNoteGetsTheTranscript() async throws {
        try await MatrixFakes.with { fakes in
            let audio = try await SpeechSample.oggOpus("Please translate good morning into French.")
            try await fakes.withRelay(try await Self.configuration(fakes)) { relay in
                let room = try await relay.room()
                // Saved first: the room's commands run in the order they were sent.
                try await relay.alice.send("!chain save tofrench = input > translate:fr", in: room)
                let uri = try await relay.alice.upload(audio)
                let note = try await relay.alice.sendAudio(uri, in: room, size: audio.count)
                let command = try await Self.reply("!run tofrench", to: note, by: relay.alice, in: room)
                let answer = try #require(try await Self.answers(relay, to: command, in: room).last)
                #expect(answer.text.contains("[translate:fr]") && answer.text.lowercased().contains("good morning"), "\(answer.text)")
            }
        }
    }

    @Test func theMagnifierOnAVoiceNoteFactChecksWhatWasSaid() async throws {
        try await MatrixFakes.with { fakes in
            let audio = try await SpeechSample.oggOpus("The Eiffel Tower is in Berlin.")
            try await fakes.withRelay(try await Self.configuration(fakes)) { relay in
                let group = try await Self.groupRoom(relay, fakes)
                let note = try await relay.alice.sendAudio(try await relay.alice.upload(audio), in: group, size: audio.count)
                try await relay.alice.react("🔍", to: note, in: group)
                _ = try #require(try await Self.answers(relay, to: note, in: group).last)
                let asked = try #require(await relay.tribunal.lastRequest(path: FakeRheaTribunal.tribunalPath))
                #expect(asked.rawBody.lowercased().contains("berlin"), "\(asked.rawBody)")
                #expect(!asked.rawBody.contains("Voice message.ogg"), "\(asked.rawBody)")
            }
        }
    }

    @Test func tooLargeAndNotAudioAreAnsweredAsOnEveryPlatform() async throws {
        try await MatrixFakes.with { fakes in
            let audio = try await SpeechSample.oggOpus("This note is far too long for the relay.")
            let limit = 2048
            #expect(audio.count > limit)
            try await fakes.withRelay(try await Self.configuration(fakes, maxBytes: limit)) { relay in
                let room = try await Self.groupRoom(relay, fakes)
                let uri = try await relay.alice.upload(audio)
                // Declared too large: refused before a byte is read.
                let declared = try await relay.alice.sendAudio(uri, in: room, size: audio.count)
                _ = try await Self.reply("!transcribe", to: declared, by: relay.alice, in: room)
                let direct = try await relay.joinDirectRoom()
                // Declared with no size: refused as soon as the download says its length.
                let undeclared = try await relay.alice.sendAudio(uri, in: room, size: nil)
                _ = try await Self.reply("!transcribe", to: undeclared, by: relay.alice, in: room)
                // No audio at all, though it says it is.
                let text = try await relay.alice.upload(Array("These bytes are a text file, not a recording.".utf8), contentType: "audio/ogg")
                let fake = try await relay.alice.sendAudio(text, in: room, size: 46)
                _ = try await Self.reply("!transcribe", to: fake, by: relay.alice, in: room)
                // Encrypted media, which the relay cannot read.
                let encrypted = try await relay.alice.sendEvent(
                    "m.room.message",
                    content: [
                        "msgtype": "m.audio", "body": "Voice message.ogg",
                        "file": ["url": .string(uri), "v": "v2", "key": [:], "iv": "AAAAAAAAAAAAAAAAAAAAAA", "hashes": [:]],
                    ], in: room)
                _ = try await Self.reply("!transcribe", to: encrypted, by: relay.alice, in: room)

                var shown: [String] = []
                try await eventually("four answers in the direct room", safety: .seconds(180)) {
                    shown = try await relay.botMessages(in: direct).map(\.text)
                    return shown.count >= 4
                }
                try await relay.settled()
                shown = try await relay.botMessages(in: direct).map(\.text)
                let all = shown.joined(separator: "\n---\n")
                #expect(shown.count == 4, "\(all)")
                // The declared size, and the download's Content-Length, say the same.
                let tooLarge = "This voice note is \(VoiceFetchError.megabytes(audio.count)); the relay takes voice notes up to 2 KB"
                #expect(all.components(separatedBy: tooLarge).count == 3, "\(all)")
                #expect(all.contains("could not read this voice note as audio"), "\(all)")
                #expect(all.contains("end-to-end encrypted"), "\(all)")
            }
        }
    }

    @Test func onlyStrictMxcURIsAreFetched() {
        #expect(MatrixContentURI("mxc://localhost/AbC_12-z") == MatrixContentURI("mxc://localhost/AbC_12-z"))
        #expect(MatrixContentURI("mxc://matrix.example.org:8448/abc")?.server == "matrix.example.org:8448")
        #expect(MatrixContentURI("mxc://[::1]:8008/abc")?.server == "[::1]:8008")
        #expect(MatrixContentURI("mxc://127.0.0.1/abc")?.mediaID == "abc")
        for bad in [
            "https://evil.example/abc", "mxc://evil.example/abc/../../admin", "mxc://../abc", "mxc://./abc", "mxc://a..b/abc", "mxc://host/a?b",
            "mxc://host/a#b", "mxc://host/a%2Fb", "mxc://user@host/abc", "mxc://host:99999999/abc", "mxc://host/", "mxc:///abc", "mxc://host",
            "mxc://hôst/abc", "mxc://host/ab c",
        ] {
            #expect(MatrixContentURI(bad) == nil, "\(bad)")
        }
    }
}
