import Foundation
import Hummingbird
import HummingbirdTesting
import RelayCore
import RelayServer
import RelayTestSupport
import RelayTribunal
import TelegramAdapter
import Testing

/// An answer shown as the model writes it, on Telegram through the real server: the council asks
/// a fake model server that streams its answer in pieces, and what Telegram received is checked.
@Suite("Telegram: answers as they are written")
struct TelegramStreamingTests {
    typealias Fakes = TelegramFakes

    /// A hostile stream: a mention split across chunks, HTML split across chunks.
    static let pieces = ["Bonjour ", "@every", "one", ", voici ", "<b", ">du ", "gras</b> ", "et ", "la ", "fin."]
    static var answer: String { pieces.joined() }

    @Test func anAnswerGrowsInItsPlaceholderAndEndsWholeWithNoMentionEverLive() async throws {
        try await Fakes.with { fakes in
            try await withFakeOpenAIServer(persona: .pieces(Self.pieces)) { model in
                model.setStream(FakeOpenAIStream(piecesPerSecond: 4))
                var configuration = fakes.configuration()
                configuration.backend = .council(CouncilConfiguration(models: [CouncilModel(name: "writer", baseURL: model.url, model: "m", tier: .cheap)]))
                fakes.telegram.enforceRateLimits = true
                try await fakes.withRelay(configuration) { relay in
                    let response = try await relay.deliver(relay.message("/ask say hello", update: 900, id: 90))
                    #expect(response.status == .ok)
                    try await relay.settled()
                    let messages = relay.telegram.messages(chat: Fakes.alice)
                    // One message: the placeholder, edited as the answer grew, then into the answer.
                    #expect(messages.count == 1, "\(messages.map(\.text))")
                    let message = try #require(messages.first)
                    let shown = message.history.map(\.text) + [message.text]
                    let writing = shown.filter { $0.contains(PartialAnswer.writingNote) }
                    #expect(!writing.isEmpty, "the answer was shown while written: \(shown)")
                    #expect(shown.first?.contains("Working on /ai") == true, "\(shown)")
                    // Never a live mention, in any edit: "@" is always followed by the joiner.
                    for text in shown { #expect(!text.contains("@e"), "\(text)") }
                    // Each text shown while written is the start of the answer.
                    for text in writing {
                        let body = Self.visible(text).components(separatedBy: PartialAnswer.writingNote)[0].trimmingCharacters(in: .whitespacesAndNewlines)
                        #expect(Self.answer.hasPrefix(body), "\(body)")
                    }
                    // The answer, whole, once; no 429 from Telegram, one message or edit a second.
                    #expect(Self.visible(message.text).contains(Self.answer), "\(message.text)")
                    #expect(!message.text.contains(PartialAnswer.writingNote))
                    #expect(relay.telegram.calls().allSatisfy { $0.status != 429 })
                    #expect(relay.telegram.maximumRate(perChat: Fakes.alice) <= 1)
                }
            }
        }
    }

    /// The real local model (llama.cpp, which streams): its answer is shown while written, each
    /// text the start of the whole answer, which ends the message.
    @Test func theRealLocalModelsAnswerIsShownWhileWritten() async throws {
        let url = try await LocalModelServer.url()
        try await Fakes.with { fakes in
            var configuration = fakes.configuration()
            configuration.backend = .council(
                CouncilConfiguration(
                    models: [CouncilModel(name: "local", baseURL: url, model: LocalModelServer.model, tier: .cheap, timeout: .seconds(120))],
                    deadline: .seconds(150)))
            configuration.tribunal.timeouts.quick = .seconds(150)
            try await fakes.withRelay(configuration) { relay in
                _ = try await relay.deliver(relay.message("/ai Describe the sea in three sentences.", update: 903, id: 93))
                try await relay.settled()
                let message = try #require(relay.telegram.messages(chat: Fakes.alice).first)
                let shown = message.history.map(\.text) + [message.text]
                let writing = shown.filter { $0.contains(PartialAnswer.writingNote) }
                #expect(!writing.isEmpty, "shown while written: \(shown)")
                #expect(!message.text.contains(PartialAnswer.writingNote) && !message.text.contains("Error"), "\(message.text)")
                let whole = Self.visible(message.text)
                for text in writing {
                    let body = Self.visible(text).components(separatedBy: PartialAnswer.writingNote)[0].trimmingCharacters(in: .whitespacesAndNewlines)
                    #expect(whole.contains(body), "\(body) is the start of \(whole)")
                }
            }
        }
    }

    /// A model that stops midway leaves its text, marked as cut off, with "Run again".
    @Test func anAnswerCutOffMidwayStaysMarkedAsCutOff() async throws {
        try await Fakes.with { fakes in
            try await withFakeOpenAIServer(persona: .pieces(Self.pieces)) { model in
                model.setStream(FakeOpenAIStream(piecesPerSecond: 20, disconnectAfter: 4))
                var configuration = fakes.configuration()
                configuration.backend = .council(CouncilConfiguration(models: [CouncilModel(name: "writer", baseURL: model.url, model: "m", tier: .cheap)]))
                try await fakes.withRelay(configuration) { relay in
                    _ = try await relay.deliver(relay.message("/ask say hello", update: 901, id: 91))
                    try await relay.settled()
                    let message = try #require(relay.telegram.messages(chat: Fakes.alice).first)
                    #expect(message.text.contains("Cut off"), "\(message.text)")
                    #expect(Self.visible(message.text).contains("Bonjour"), "\(message.text)")
                    #expect(message.callbackData.contains { $0.hasPrefix("again:") }, "Run again: \(message.callbackData)")
                }
            }
        }
    }

    /// `/tribunal` on the council: the placeholder shows the votes coming in, then the verdict.
    @Test func aTribunalShowsTheVotesComingInThenTheVerdict() async throws {
        try await Fakes.with { fakes in
            var judges: [FakeOpenAIServer] = []
            for seconds in [1.2, 2.4, 3.6] { judges.append(try await FakeOpenAIServer.start(persona: .slow(seconds: seconds, then: .agree))) }
            var configuration = fakes.configuration()
            configuration.backend = .council(
                CouncilConfiguration(
                    models: judges.enumerated().map { CouncilModel(name: "judge\($0.offset)", baseURL: $0.element.url, model: "m", tier: .cheap) },
                    deadline: .seconds(30)))
            do {
                try await fakes.withRelay(configuration) { relay in
                    _ = try await relay.deliver(relay.message("/tribunal The sky is blue", update: 902, id: 92))
                    try await relay.settled()
                    let message = try #require(relay.telegram.messages(chat: Fakes.alice).first)
                    let shown = message.history.map(\.text)
                    #expect(shown.contains { $0.contains("1 of 3 have voted") || $0.contains("2 of 3 have voted") }, "\(shown)")
                    #expect(message.text.contains("3/3 models"), "\(message.text)")
                    #expect(!message.text.contains("have voted"))
                }
            } catch {
                for judge in judges { await judge.stop() }
                throw error
            }
            for judge in judges { await judge.stop() }
        }
    }

    /// What a person reads: the word joiners that break mentions taken out.
    static func visible(_ text: String) -> String { text.replacingOccurrences(of: "\u{2060}", with: "") }
}
