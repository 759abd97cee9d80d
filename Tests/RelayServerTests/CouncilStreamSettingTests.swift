import Foundation
import RelayCore
import RelayServer
import RelayTestSupport
import RelayTribunal
import Testing

/// `council.<name>.stream` (`COUNCIL_<NAME>_STREAM`): a model that cannot stream is asked for
/// whole answers, and they arrive whole.
@Suite("Council: a model that cannot stream")
struct CouncilStreamSettingTests {
    static let base = [
        "STORE_PATH": ":memory:", "TRIBUNAL_BACKEND": "council", "COUNCIL_MODELS": "w", "COUNCIL_W_BASE_URL": "http://127.0.0.1:9/v1",
        "COUNCIL_W_MODEL": "m", "COUNCIL_W_TIER": "cheap",
    ]

    static func model(_ environment: [String: String]) async throws -> CouncilModel? {
        let configuration = try await ConfigurationLoader.load(file: nil, environment: base.merging(environment) { $1 }, platforms: [])
        guard case .council(let council) = configuration.backend else { return nil }
        return council.models.first
    }

    @Test func streamsUnlessTheModelSaysItCannot() async throws {
        #expect(try await Self.model([:])?.stream == true)
        #expect(try await Self.model(["COUNCIL_W_STREAM": "false"])?.stream == false)
        await #expect {
            _ = try await Self.model(["COUNCIL_W_STREAM": "sometimes"])
        } throws: { error in
            "\(error)".contains("COUNCIL_W_STREAM") && "\(error)".contains("true or false")
        }
    }

    /// Through the server on Telegram: the model is asked without `stream`, and the placeholder
    /// goes straight to the whole answer.
    @Test func itsAnswerArrivesWhole() async throws {
        try await TelegramFakes.with { fakes in
            try await withFakeOpenAIServer(persona: .pieces(["Bonjour ", "tout ", "le ", "monde."])) { model in
                var configuration = fakes.configuration()
                configuration.backend = .council(
                    CouncilConfiguration(models: [CouncilModel(name: "whole", baseURL: model.url, model: "m", tier: .cheap, stream: false)]))
                try await fakes.withRelay(configuration) { relay in
                    _ = try await relay.deliver(relay.message("/ai say hello", update: 910, id: 95))
                    try await relay.settled()
                    let message = try #require(relay.telegram.messages(chat: TelegramFakes.alice).first)
                    let shown = message.history.map(\.text) + [message.text]
                    #expect(!shown.contains { $0.contains(PartialAnswer.writingNote) }, "\(shown)")
                    #expect(message.text.contains("Bonjour tout le monde."), "\(message.text)")
                }
                let asked = try #require(model.requests().first { $0.path.hasSuffix("/chat/completions") })
                #expect(asked["stream"]?.boolValue != true, "asked for a whole answer: \(asked.rawBody)")
            }
        }
    }
}
