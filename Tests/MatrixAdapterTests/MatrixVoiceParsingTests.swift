import Logging
import RelayCore
import RelayHTTP
import RelayPlatform
import Synchronization
import Testing

@testable import MatrixAdapter

/// A homeserver that answers media downloads from a script, and records what it was asked.
final class ScriptedMediaAPI: MatrixAPI {
    private let state: Mutex<(answers: [HTTPTransport.Download], asked: [MatrixRequest])>

    init(_ answers: [HTTPTransport.Download]) {
        state = Mutex((answers, []))
    }

    var asked: [MatrixRequest] { state.withLock { $0.asked } }

    func call(_ request: MatrixRequest) async throws(MatrixAPIError) -> MatrixAnswer {
        throw .invalidRequest(endpoint: request.endpoint, reason: "not scripted")
    }

    func download(_ request: MatrixRequest, maxBytes: Int) async throws(MatrixAPIError) -> HTTPTransport.Download {
        let next: HTTPTransport.Download? = state.withLock { state in
            state.asked.append(request)
            return state.answers.isEmpty ? nil : state.answers.removeFirst()
        }
        guard let next else { throw .invalidRequest(endpoint: request.endpoint, reason: "no answer left") }
        return next
    }
}

/// Which Matrix messages are voice notes, what they declare, and how their media is fetched.
@Suite("Matrix voice messages, parsed and fetched")
struct MatrixVoiceParsingTests {
    /// Content as a client sends it, decoded as a synced event's is.
    static func content(_ json: JSONValue) -> MatrixContent {
        (try? PayloadDecoding.json(MatrixContent.self, from: json.encoded(), as: "Matrix content")) ?? MatrixContent()
    }

    static let ogg = Array("OggS".utf8) + [UInt8](repeating: 0, count: 60)

    @Test func audioMessagesAndAudioFilesAreClipsWithSaneDeclaredNumbers() {
        let audio: JSONValue = [
            "msgtype": "m.audio", "body": "Voice message.ogg", "url": "mxc://example.org/abc",
            "info": ["mimetype": "audio/ogg", "size": 12_000, "duration": 3_100],
        ]
        guard case .clip(let clip)? = MatrixAudio(content: Self.content(audio), origin: .repliedTo) else {
            Issue.record("no clip")
            return
        }
        #expect(clip == VoiceClip(file: "mxc://example.org/abc", mimeType: "audio/ogg", byteSize: 12_000, duration: 4, origin: .repliedTo))

        let file: JSONValue = ["msgtype": "m.file", "body": "memo.mp3", "url": "mxc://example.org/def", "info": ["mimetype": "audio/mpeg"]]
        #expect(MatrixAudio(content: Self.content(file), origin: .own) == .clip(VoiceClip(file: "mxc://example.org/def", mimeType: "audio/mpeg", origin: .own)))

        let absurd: JSONValue = ["msgtype": "m.audio", "body": "x", "url": "mxc://example.org/abc", "info": ["size": -5, "duration": -1]]
        #expect(MatrixAudio(content: Self.content(absurd), origin: .own) == .clip(VoiceClip(file: "mxc://example.org/abc", origin: .own)))

        #expect(
            MatrixAudio(
                content: Self.content(["msgtype": "m.file", "body": "cat.png", "url": "mxc://example.org/c", "info": ["mimetype": "image/png"]]), origin: .own)
                == nil
        )
        #expect(MatrixAudio(content: Self.content(["msgtype": "m.text", "body": "hello"]), origin: .own) == nil)
        #expect(MatrixAudio(content: Self.content(["msgtype": "m.audio", "body": "Voice message.ogg"]), origin: .own) == nil)
    }

    @Test func encryptedMediaIsToldApart() {
        let content: JSONValue = ["msgtype": "m.audio", "body": "Voice message.ogg", "file": ["url": "mxc://example.org/abc", "v": "v2"]]
        #expect(MatrixAudio(content: Self.content(content), origin: .own) == .encrypted)
    }

    @Test func aCaptionIsTheBodyOnlyBesideADifferentFilename() {
        #expect(MatrixAudio.caption(of: Self.content(["body": "Voice message.ogg"])) == nil)
        #expect(MatrixAudio.caption(of: Self.content(["body": "Voice message.ogg", "filename": "Voice message.ogg"])) == nil)
        #expect(MatrixAudio.caption(of: Self.content(["body": " !translate fr ", "filename": "Voice message.ogg"])) == "!translate fr")
    }

    @Test func theWordsAfterAMentionAreEmptyForTheNameAlone() {
        let mention = MatrixMention(user: "@relay:example.org", displayName: "Rhea Relay", mentionedUsers: [], formattedBody: nil)
        #expect(MatrixCommandLine.words(afterMentionIn: "Rhea Relay:", mention: mention) == "")
        #expect(MatrixCommandLine.words(afterMentionIn: "Rhea Relay: translate fr", mention: mention) == "translate fr")
        #expect(MatrixCommandLine.words(afterMentionIn: "hello there", mention: mention) == nil)
    }

    @Test func mediaComesFromTheAuthenticatedEndpointAndFallsBackOnlyWhenItIsUnknown() async throws {
        let unknown = HTTPAnswer(status: 404, body: Array(#"{"errcode":"M_UNRECOGNIZED","error":"Unrecognized request"}"#.utf8))
        let api = ScriptedMediaAPI([.complete(unknown), .complete(HTTPAnswer(status: 200, body: Self.ogg))])
        let uri = try #require(MatrixContentURI("mxc://example.org:8448/AbC_1"))
        guard case .complete(let answer) = try await api.media(uri, maxBytes: 1000, timeout: .seconds(5)) else {
            Issue.record("no answer")
            return
        }
        #expect(answer.body == Self.ogg)
        #expect(api.asked.map(\.api) == ["client", "media"])
        #expect(api.asked.map(\.version) == ["v1", "v3"])
        #expect(api.asked.first?.path == ["media", "download", "example.org:8448", "AbC_1"])
        #expect(api.asked.last?.path == ["download", "example.org:8448", "AbC_1"])

        // Media the homeserver does not have is not asked for again elsewhere.
        let missing = HTTPAnswer(status: 404, body: Array(#"{"errcode":"M_NOT_FOUND","error":"Not found"}"#.utf8))
        let other = ScriptedMediaAPI([.complete(missing)])
        _ = try await other.media(uri, maxBytes: 1000, timeout: .seconds(5))
        #expect(other.asked.count == 1)
    }

    @Test func theReaderRefusesBadURIsAndLargeFilesWithoutARequest() async {
        let api = ScriptedMediaAPI([])
        let reader = MatrixConversationReader(api: api, logger: Logger(label: "test"))
        await #expect(throws: VoiceFetchError.self) { try await reader.audio(VoiceClip(file: "https://evil.example/a"), maxBytes: 1000) }
        await #expect(throws: VoiceFetchError.tooLarge(limit: 1000, size: 5000)) {
            try await reader.audio(VoiceClip(file: "mxc://example.org/a", byteSize: 5000), maxBytes: 1000)
        }
        #expect(api.asked.isEmpty)

        let cut = ScriptedMediaAPI([.tooLarge(declared: nil)])
        await #expect(throws: VoiceFetchError.tooLarge(limit: 1000, size: nil)) {
            try await MatrixConversationReader(api: cut, logger: Logger(label: "test")).audio(VoiceClip(file: "mxc://example.org/a"), maxBytes: 1000)
        }
        let refused = ScriptedMediaAPI([.complete(HTTPAnswer(status: 403, body: Array(#"{"errcode":"M_FORBIDDEN"}"#.utf8)))])
        do {
            _ = try await MatrixConversationReader(api: refused, logger: Logger(label: "test")).audio(VoiceClip(file: "mxc://example.org/a"), maxBytes: 1000)
            Issue.record("a refusal was taken for audio")
        } catch {
            #expect(error == .unavailable(reason: "media: the homeserver answered HTTP 403 (M_FORBIDDEN)"))
        }
    }
}
