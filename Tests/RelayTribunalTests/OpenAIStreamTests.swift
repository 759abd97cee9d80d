import AsyncHTTPClient
import Foundation
import Logging
import RelayCore
import RelayHTTP
import RelayTestSupport
import Synchronization
import Testing

@testable import RelayTribunal

/// Answers read as they are written (`stream: true`), against the fake model server's
/// server-sent events: pieces at a set rate, stalls, a dropped connection, chunks that are not
/// JSON, a stream without its end.
@Suite("OpenAI-compatible streaming")
struct OpenAIStreamTests {
    static let messages: [ChatMessage] = [.system("Be brief."), .user("Say hello in French.")]
    static let answer = "Bonjour à tous, et bonne journée !"

    @Test func theAnswerGrowsPieceByPieceAndEndsWhole() async throws {
        try await withStreamingFake(.prose(Self.answer)) { fake, client in
            let seen = Seen()
            let completion = try await client.stream(fake.streamModel, messages: Self.messages, timeout: .seconds(20)) { seen.add($0) }
            #expect(completion.text == Self.answer)
            let texts = seen.texts
            // One call per piece, each the whole text so far, the last the whole answer.
            #expect(texts.count == FakeOpenAIStream.pieces(of: Self.answer).count)
            #expect(texts.last == Self.answer)
            #expect(zip(texts, texts.dropFirst()).allSatisfy { $1.hasPrefix($0) })
            let sent = try #require(fake.lastRequest())
            #expect(sent["stream"] == true)
            #expect(sent.header("accept") == "text/event-stream")
        }
    }

    /// The count comes in a last chunk without choices, and only when asked for
    /// (`stream_options.include_usage`); a server that sends none is estimated, and says so.
    @Test func theStreamsTokenCountIsAskedForAndReadFromItsLastChunk() async throws {
        try await withStreamingFake(.prose(Self.answer)) { fake, client in
            var model = fake.streamModel
            model.price = ModelPrice(inPerMillion: 0.15, outPerMillion: 0.60)
            let completion = try await client.stream(model, messages: Self.messages, timeout: .seconds(20)) { _ in }
            let sent = try #require(fake.lastRequest())
            #expect(sent["stream_options"]?["include_usage"] == true)
            let promptTokens = (Self.messages.map(\.content.count).reduce(0, +)) / 4
            let answerTokens = Self.answer.count / 4
            #expect(completion.usage.model == "streaming")
            #expect(completion.usage.tokensIn == promptTokens && completion.usage.tokensOut == answerTokens && !completion.usage.estimated)
            let cost = try #require(completion.usage.cost)
            #expect(abs(cost - (Double(promptTokens) * 0.15 + Double(answerTokens) * 0.60) / 1_000_000) < 1e-12)

            fake.setReportsUsage(false)
            let counted = try await client.stream(model, messages: Self.messages, timeout: .seconds(20)) { _ in }
            #expect(counted.usage.estimated)
            #expect(counted.usage.tokensIn == TokenEstimate.prompt(Self.messages.map(\.content)))
            #expect(counted.usage.tokensOut == TokenEstimate.text(Self.answer))
        }
    }

    @Test func aStallMidwayIsWaitedOut() async throws {
        try await withStreamingFake(.prose(Self.answer), stream: FakeOpenAIStream(stallAfter: 2, stallSeconds: 0.5)) { fake, client in
            let completion = try await client.stream(fake.streamModel, messages: Self.messages, timeout: .seconds(20)) { _ in }
            #expect(completion.text == Self.answer)
        }
    }

    @Test func chunksThatAreNotJSONArePassedOver() async throws {
        try await withStreamingFake(.prose(Self.answer), stream: FakeOpenAIStream(malformedEvery: 2)) { fake, client in
            let completion = try await client.stream(fake.streamModel, messages: Self.messages, timeout: .seconds(20)) { _ in }
            #expect(completion.text == Self.answer)
        }
    }

    /// The text that came stays with the caller, to show as cut off; the call fails.
    @Test func aConnectionDroppedMidwayFailsAfterHandingOverWhatCame() async throws {
        try await withStreamingFake(.prose(Self.answer), stream: FakeOpenAIStream(disconnectAfter: 3)) { fake, client in
            let seen = Seen()
            await #expect(throws: ModelCallError.self) {
                try await client.stream(fake.streamModel, messages: Self.messages, timeout: .seconds(20)) { seen.add($0) }
            }
            // What came before the drop (the last piece written may be lost with the connection).
            let cameAtMost = FakeOpenAIStream.pieces(of: Self.answer).prefix(3).joined()
            #expect(seen.texts.last.map { !$0.isEmpty && cameAtMost.hasPrefix($0) } == true, "\(seen.texts)")
        }
    }

    @Test func aStreamThatJustEndsIsNotAWholeAnswer() async throws {
        try await withStreamingFake(.prose(Self.answer), stream: FakeOpenAIStream(ends: false)) { fake, client in
            await #expect(throws: ModelCallError.malformed(reason: "the stream ended before the answer was complete")) {
                try await client.stream(fake.streamModel, messages: Self.messages, timeout: .seconds(20)) { _ in }
            }
        }
    }

    @Test func aRefusalIsReadAsWithoutStreaming() async throws {
        try await withStreamingFake(.fail(status: 401, message: "Incorrect API key provided.")) { fake, client in
            await #expect(throws: ModelCallError.unauthorized(detail: "Incorrect API key provided.")) {
                try await client.stream(fake.streamModel, messages: Self.messages, timeout: .seconds(20)) { _ in }
            }
        }
    }

    /// A model that fails before it writes passes the request on; one that fails midway ends it
    /// (another model's answer would not continue what was shown).
    @Test func theCouncilFallsBackOnlyBeforeAnyText() async throws {
        try await withStreamingFake(.prose("first")) { failing, client in
            try await withFakeOpenAIServer(persona: .prose(Self.answer)) { second in
                let models = [failing.streamModel, CouncilModel(name: "second", baseURL: second.url, model: "m", tier: .cheap)]
                let council = Council(
                    configuration: CouncilConfiguration(models: models), client: client,
                    logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
                failing.setPersona(.fail(status: 503, message: "overloaded"))
                let result = try await council.quick(QuickRequest(action: .freeform, text: "hi"), streaming: { _ in })
                #expect(result.text == Self.answer)
                #expect(result.model == "second")

                failing.setPersona(.prose(Self.answer))
                failing.setStream(FakeOpenAIStream(disconnectAfter: 2))
                let seen = Seen()
                await #expect(throws: TribunalError.self) {
                    try await council.quick(QuickRequest(action: .freeform, text: "hi"), streaming: { seen.add($0) })
                }
                let cameAtMost = FakeOpenAIStream.pieces(of: Self.answer).prefix(2).joined()
                #expect(seen.texts.last.map { !$0.isEmpty && cameAtMost.hasPrefix($0) } == true, "\(seen.texts)")
                #expect(second.requestCount() == 1)
            }
        }
    }
}

@Suite("Server-sent events")
struct ServerSentEventsTests {
    @Test func linesEndInCRLFLFOrCRAndABlankLineEndsAnEvent() {
        var reader = ServerSentEvents()
        #expect(reader.feed(Array("data: one\r\n\r\ndata: two\n\ndata: three\r\r".utf8)) == ["one", "two", "three"])
    }

    @Test func anEventSplitAcrossReadsIsReadOnce() {
        var reader = ServerSentEvents()
        #expect(reader.feed(Array("da".utf8)).isEmpty)
        #expect(reader.feed(Array("ta: {\"a\":".utf8)).isEmpty)
        #expect(reader.feed(Array("1}\r".utf8)).isEmpty)
        // The LF after a CR that ended the line ends no second line.
        #expect(reader.feed(Array("\n\r\n".utf8)) == [#"{"a":1}"#])
    }

    @Test func commentsAndOtherFieldsArePassedOverAndDataLinesJoin() {
        var reader = ServerSentEvents()
        let stream = ": keep-alive\n\nevent: message\nid: 7\ndata: first\ndata:second\nretry: 10\n\n"
        #expect(reader.feed(Array(stream.utf8)) == ["first\nsecond"])
    }

    @Test func anEventTheBodyEndsInsideIsReadAtTheEnd() {
        var reader = ServerSentEvents()
        #expect(reader.feed(Array("data: [DONE]".utf8)).isEmpty)
        #expect(reader.finish() == ["[DONE]"])
    }
}

/// The texts a stream handed over, in order.
private final class Seen: Sendable {
    private let values = Mutex<[String]>([])
    func add(_ text: String) { values.withLock { $0.append(text) } }
    var texts: [String] { values.withLock { $0 } }
}

extension FakeOpenAIServer {
    fileprivate var streamModel: CouncilModel { CouncilModel(name: "streaming", baseURL: url, model: "fake-model", tier: .cheap) }
}

/// A fake that streams as `stream` says, and a client for it.
private func withStreamingFake(
    _ persona: FakeOpenAIPersona, stream: FakeOpenAIStream = FakeOpenAIStream(), isolation: isolated (any Actor)? = #isolation,
    _ body: (FakeOpenAIServer, OpenAICompatibleClient) async throws -> Void
) async throws {
    let http = HTTPTransport.makeClient(maxConnectionsPerHost: 8)
    let client = OpenAICompatibleClient(transport: HTTPTransport(client: http), logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
    do {
        try await withFakeOpenAIServer(persona: persona) { fake in
            fake.setStream(stream)
            try await body(fake, client)
        }
        try await http.shutdown()
    } catch {
        try? await http.shutdown()
        throw error
    }
}
