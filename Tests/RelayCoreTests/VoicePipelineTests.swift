import RelayCore
import RelayPipeline
import RelayStore
import RelayTestSupport
import Synchronization
import Testing

import struct Foundation.Data
import class Foundation.JSONDecoder
import class Foundation.JSONEncoder

/// A platform that hands over voice notes from memory, and counts what it was asked.
final class ScriptedVoiceReader: ConversationReader {
    let audio: Result<[UInt8], VoiceFetchError>
    private let fetched = Mutex(0)

    init(_ audio: Result<[UInt8], VoiceFetchError>) { self.audio = audio }

    var fetches: Int { fetched.withLock { $0 } }

    func isAdmin(_ event: Event) async -> Bool? { false }
    var platformAdmins: String { "nobody" }
    func threadMessages(_ event: Event, limit: Int) async -> [String] { ["(the thread)"] }
    func audio(_ clip: VoiceClip, maxBytes: Int) async throws(VoiceFetchError) -> [UInt8] {
        fetched.withLock { $0 += 1 }
        return try audio.get()
    }
}

/// A transcriber that answers from a script, and keeps what it was sent.
final class ScriptedTranscriber: Transcriber {
    let limits: TranscriptionLimits
    let answer: Result<String, TranscriptionError>
    private let sent = Mutex<[TranscriptionAudio]>([])

    init(_ answer: Result<String, TranscriptionError>, limits: TranscriptionLimits = TranscriptionLimits()) {
        self.answer = answer
        self.limits = limits
    }

    var requests: [TranscriptionAudio] { sent.withLock { $0 } }

    func transcribe(_ audio: TranscriptionAudio) async throws(TranscriptionError) -> String {
        sent.withLock { $0.append(audio) }
        return try answer.get()
    }
}

/// The pipeline's voice step, without a network: which commands hear a voice note, where its
/// transcript goes, and what each failure tells the user.
@Suite("Voice notes in the pipeline")
struct VoicePipelineTests {
    static let ogg = Array("OggS".utf8) + [UInt8](repeating: 0, count: 60)
    static let clip = VoiceClip(file: "f1", mimeType: "audio/ogg", byteSize: 64, duration: 4)

    static func run(
        _ text: String, voice: VoiceClip? = clip, transcriber: ScriptedTranscriber? = ScriptedTranscriber(.success("Good morning team")),
        reader: ScriptedVoiceReader = ScriptedVoiceReader(.success(ogg)), store: any Store = MemoryStore()
    ) async -> Reply {
        let relay = Relay(tribunal: ScriptedTribunal(), store: store, readers: ["chat": reader], transcriber: transcriber)
        let event = Event(platform: "chat", team: "t", channel: "c", thread: "th", user: "ada", text: text, voice: voice)
        return await relay.handle(event) ?? .info("<duplicate>")
    }

    @Test func aCommandWithoutTextRunsOnTheTranscript() async {
        let reply = await Self.run("/translate fr")
        #expect(reply.body == "[translate:fr@cheap] Good morning team")
    }

    @Test func anEmptyLineWithAVoiceNoteIsTranscribe() async {
        let reply = await Self.run("")
        #expect(reply.kind == .result)
        #expect(reply.title == "Transcript")
        #expect(reply.body == "Good morning team")
    }

    @Test func typedTextWinsAndNothingIsFetched() async {
        let reader = ScriptedVoiceReader(.success(Self.ogg))
        let reply = await Self.run("/fix its fine", reader: reader)
        #expect(reply.body == "[grammar@cheap] its fine")
        #expect(reader.fetches == 0)
    }

    @Test func theVoiceNoteWinsOverTheThread() async {
        let reply = await Self.run("/summarize")
        #expect(reply.body == "[summarize@cheap] Good morning team")
    }

    @Test func theUsersLanguageGoesToTheService() async throws {
        let store = MemoryStore()
        let transcriber = ScriptedTranscriber(.success("Bonjour"))
        _ = await Self.run("/settings lang fr", voice: nil, store: store)
        _ = await Self.run("/transcribe", transcriber: transcriber, store: store)
        #expect(transcriber.requests.map(\.language) == ["fr"])
        #expect(transcriber.requests.first?.mimeType == "audio/ogg")
    }

    @Test func settingsVoiceChoosesWhatAVoiceNoteAloneGets() async throws {
        let store = MemoryStore()
        #expect(await Self.run("/settings voice ai", voice: nil, store: store).body == "Your voice is now ai.")
        #expect(await Self.run("", store: store).body == "[freeform@cheap] Good morning team")
        _ = await Self.run("/settings voice tribunal", voice: nil, store: store)
        #expect(await Self.run("", store: store).title == "Tribunal")
        // A command typed with the voice note still wins over the setting.
        #expect(await Self.run("/transcribe", store: store).body == "Good morning team")
        _ = await Self.run("/settings voice reset", voice: nil, store: store)
        #expect(await Self.run("", store: store).title == "Transcript")
        #expect(await Self.run("/settings voice loud", voice: nil, store: store).body.contains("Choose transcript"))
    }

    @Test func theTranscriptFollowsRetention() async throws {
        let store = MemoryStore()
        _ = await Self.run("/transcribe", store: store)
        #expect(try await store.history(team: "t", user: "ada", limit: 10).first?.resultText == "Good morning team")
        _ = await Self.run("/history clear", voice: nil, store: store)
        _ = await Self.run("/settings retention metadata", voice: nil, store: store)
        _ = await Self.run("/transcribe", store: store)
        let kept = try #require(try await store.history(team: "t", user: "ada", limit: 10).first { $0.command == "transcribe" })
        #expect(kept.resultText == nil && kept.commandLine == nil)
    }

    @Test func privateIsHonoured() async {
        #expect(await Self.run("/transcribe --private").isPrivate)
        #expect(await Self.run("/translate fr --private").isPrivate)
    }

    @Test func transcribeWithoutAVoiceNoteSaysWhatItNeeds() async {
        let reply = await Self.run("/transcribe", voice: nil)
        #expect(reply.kind == .error)
        #expect(reply.body.contains("needs a voice note"))
    }

    @Test func withoutATranscriberTheReplySaysHowToSetItUp() async {
        let reply = await Self.run("/translate fr", transcriber: nil)
        #expect(reply.body.contains("TRANSCRIPTION_BASE_URL") && reply.body.contains("docs/voice.md"))
    }

    @Test func capsAreCheckedBeforeAnythingIsFetched() async {
        let reader = ScriptedVoiceReader(.success(Self.ogg))
        let long = VoiceClip(file: "f", byteSize: 64, duration: 301)
        #expect(await Self.run("", voice: long, reader: reader).body.contains("5 min 1 s long; the relay transcribes voice notes up to 5 min"))
        let large = VoiceClip(file: "f", byteSize: 26 * 1024 * 1024, duration: 4)
        #expect(await Self.run("", voice: large, reader: reader).body.contains("This voice note is 26 MB; the relay takes voice notes up to 25 MB"))
        #expect(reader.fetches == 0)
    }

    @Test func eachFailureSaysWhichItWas() async {
        let cases: [(ScriptedVoiceReader, ScriptedTranscriber, String)] = [
            // The clip declared 64 bytes, and the download passed that: a size declared too small.
            (ScriptedVoiceReader(.failure(.tooLarge(limit: 64, size: nil))), ScriptedTranscriber(.success("x")), "larger than the 1 KB its message declared"),
            (ScriptedVoiceReader(.failure(.notSupported)), ScriptedTranscriber(.success("x")), "do not reach the relay yet"),
            (ScriptedVoiceReader(.failure(.unavailable(reason: "getFile: 400"))), ScriptedTranscriber(.success("x")), "could not fetch this voice note"),
            (ScriptedVoiceReader(.success(Self.ogg)), ScriptedTranscriber(.failure(.notAudio(detail: "x"))), "not audio, or the file is corrupt"),
            (ScriptedVoiceReader(.success(Self.ogg)), ScriptedTranscriber(.failure(.unreachable(reason: "refused"))), "down or cannot be reached"),
            (ScriptedVoiceReader(.success(Self.ogg)), ScriptedTranscriber(.failure(.timedOut(after: .seconds(2)))), "did not answer within 2 s"),
            (ScriptedVoiceReader(.success(Self.ogg)), ScriptedTranscriber(.success("")), "No words could be heard"),
        ]
        for (reader, transcriber, expected) in cases {
            let reply = await Self.run("/ai", transcriber: transcriber, reader: reader)
            #expect(reply.kind == .error)
            #expect(reply.body.contains(expected), "\(reply.body)")
        }
        // No size declared: the download passed the cap.
        let undeclared = VoiceClip(file: "f1", mimeType: "audio/ogg", duration: 4)
        let reply = await Self.run("/ai", voice: undeclared, reader: ScriptedVoiceReader(.failure(.tooLarge(limit: 1024, size: nil))))
        #expect(reply.body.contains("larger than 1 KB, the most the relay takes"), "\(reply.body)")
    }

    @Test func anEventWithAVoiceNoteSurvivesTheInbox() throws {
        let event = Event(platform: "chat", team: "t", channel: "c", user: "ada", text: "", voice: Self.clip)
        let decoded = try JSONDecoder().decode(Event.self, from: JSONEncoder().encode(event))
        #expect(decoded == event)
        // Parked by a relay from before voice notes: no `voice` key at all.
        let old = #"{"platform":"chat","team":"t","channel":"c","user":"ada","text":"/help"}"#
        #expect(try JSONDecoder().decode(Event.self, from: Data(old.utf8)).voice == nil)
    }

    @Test func audioFormatsAreToldFromTheirFirstBytes() {
        #expect(AudioFormat.sniff(Self.ogg)?.fileExtension == "ogg")
        #expect(AudioFormat.sniff(Array("RIFF....WAVEfmt ".utf8))?.mimeType == "audio/wav")
        #expect(AudioFormat.sniff(Array("ID3\u{3}".utf8))?.fileExtension == "mp3")
        #expect(AudioFormat.sniff([0, 0, 0, 0x20] + Array("ftypM4A ".utf8))?.fileExtension == "m4a")
        #expect(AudioFormat.sniff(Array("hello, world".utf8)) == nil)
        #expect(AudioFormat.sniff([]) == nil)
    }

    /// Issue 47, point 4: the audio of notes in flight is bounded. With room for one note, a
    /// second is not fetched until the first is transcribed; one that waits longer than its
    /// patience is told so, and nothing of it is fetched.
    @Test func notesBeyondTheMemoryBudgetWaitTheirTurnOrAreToldSo() async throws {
        // Room for one 64-byte note: held twice (as fetched, as the upload's body).
        let transcriber = GatedTranscriber(limits: TranscriptionLimits(memoryBudget: 2 * 64))
        let reader = ScriptedVoiceReader(.success(Self.ogg))
        func relay(wait: Duration) -> Relay {
            Relay(
                tribunal: ScriptedTribunal(), store: MemoryStore(), configuration: RelayConfiguration(voiceMemoryWait: wait), readers: ["chat": reader],
                transcriber: transcriber)
        }
        func note(_ id: String) -> Event {
            Event(platform: "chat", team: "t", channel: "c", user: "ada", text: "/transcribe", eventKey: id, voice: Self.clip)
        }
        let patient = relay(wait: .seconds(600))
        let first = Task { await patient.handle(note("a")) }
        try await until { transcriber.waiting == 1 }
        let second = Task { await patient.handle(note("b")) }
        // The second waits for room before fetching anything.
        for _ in 0..<20 { await Task.yield() }
        #expect(reader.fetches == 1)
        transcriber.release()
        #expect(await first.value?.body == "heard")
        try await until { transcriber.waiting == 1 }
        #expect(reader.fetches == 2)
        transcriber.release()
        #expect(await second.value?.body == "heard")

        // Another relay sharing nothing: its own budget, full while its first note is heard.
        let hasty = relay(wait: .milliseconds(30))
        let third = Task { await hasty.handle(note("c")) }
        try await until { transcriber.waiting == 1 }
        let refused = await hasty.handle(note("d"))
        #expect(refused?.kind == .error)
        #expect(refused?.body.contains("Too many voice notes are being heard on this relay at once") == true, "\(refused?.body ?? "")")
        #expect(reader.fetches == 3, "the refused note was not fetched")
        transcriber.release()
        #expect(await third.value?.body == "heard")
    }

    /// Polls `condition`, 2 s at most.
    func until(_ condition: () -> Bool) async throws {
        for _ in 0..<2_000 where !condition() { try await Task.sleep(for: .milliseconds(1)) }
        try #require(condition())
    }
}

/// A transcriber that holds each call until the test releases it.
final class GatedTranscriber: Transcriber {
    let limits: TranscriptionLimits
    private let held = Mutex<[CheckedContinuation<Void, Never>]>([])

    init(limits: TranscriptionLimits) { self.limits = limits }

    /// Calls held now.
    var waiting: Int { held.withLock(\.count) }

    /// Lets the oldest held call answer.
    func release() {
        let next = held.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        next?.resume()
    }

    func transcribe(_ audio: TranscriptionAudio) async throws(TranscriptionError) -> String {
        await withCheckedContinuation { continuation in held.withLock { $0.append(continuation) } }
        return "heard"
    }
}
