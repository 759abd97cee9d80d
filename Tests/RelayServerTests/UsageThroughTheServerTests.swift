import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import RelayCore
import RelayServer
import RelayTestSupport
import RelayTribunal
import Testing

/// Issue 44, points 3 and 5, through the composed server on Telegram: a council model with a
/// price answers; the reply's footer carries the receipt once asked for, `/usage` adds it up, and
/// `/metrics` counts the tokens and the cost under the model's configured name.
@Suite("Usage through the server")
struct UsageThroughTheServerTests {
    @Test func receiptsUsageAndMetricsShowWhatTheCouncilModelUsed() async throws {
        try await TelegramFakes.with { fakes in
            try await withFakeOpenAIServer(persona: .prose("Bonjour tout le monde")) { model in
                var configuration = fakes.configuration()
                let price = ModelPrice(inPerMillion: 0.15, outPerMillion: 0.60)
                configuration.backend = .council(
                    CouncilConfiguration(models: [CouncilModel(name: "priced", baseURL: model.url, model: "m", tier: .cheap, price: price)]))
                try await fakes.withRelay(configuration) { relay in
                    _ = try await relay.deliver(relay.message("/settings receipts on", update: 930, id: 130))
                    _ = try await relay.deliver(relay.message("/ai say hello", update: 931, id: 131))
                    try await relay.settled()
                    let answer = try #require(relay.telegram.messages(chat: TelegramFakes.alice).last { $0.text.contains("Bonjour") })
                    // The fake counts 4 characters a token; the stream's count comes in its last chunk.
                    let tokensOut = "Bonjour tout le monde".count / 4
                    let receipt = try #require(answer.text.split(separator: "\n").last.map(String.init))
                    // "27 tokens · $0.000008": counted by the server (no "~"), priced.
                    #expect(receipt.range(of: #"^[0-9]+ tokens · \$0\.0+[1-9][0-9]*$"#, options: .regularExpression) != nil, "\(answer.text)")

                    _ = try await relay.deliver(relay.message("/usage", update: 932, id: 132))
                    try await relay.settled()
                    let usage = try #require(relay.telegram.messages(chat: TelegramFakes.alice).last { $0.text.contains("Your usage in") })
                    #expect(usage.text.contains("• ai: 1 run · "), "\(usage.text)")
                    #expect(usage.text.contains("• priced: 1 call · "), "\(usage.text)")
                    #expect(usage.text.contains(", out \(tokensOut))"), "\(usage.text)")

                    let metrics = String(
                        buffer: try await relay.client.execute(
                            uri: "/metrics", method: .get, headers: [.authorization: "Bearer \(TelegramFakes.adminToken)"], body: nil
                        ).body)
                    let lines = metrics.split(separator: "\n").filter { $0.contains("model=\"priced\"") }
                    #expect(lines.contains { $0.hasPrefix("relay_model_tokens_total") && $0.contains("direction=\"out\"") }, "\(lines)")
                    #expect(lines.contains { $0.hasPrefix("relay_model_cost_usd_total") }, "\(lines)")
                }
            }
        }
    }
}
