import Foundation
import RelayCore
import RelayPlatform
import RelayServer
import RelayTribunal
import Testing

/// Issue 44, points 3 and 6: a price per model in US dollars per million tokens
/// (`COUNCIL_<M>_PRICE_IN`/`_OUT`, `LOCAL_MODEL_PRICE_IN`/`_OUT`); none is "no price"; a
/// negative price, a word, or one of the two alone stops start-up naming the key.
@Suite("Configuration: model prices")
struct ModelPriceConfigurationTests {
    static let base = [
        "STORE_PATH": ":memory:", "TRIBUNAL_BACKEND": "council", "COUNCIL_MODELS": "mini", "COUNCIL_MINI_BASE_URL": "http://127.0.0.1:9/v1",
        "COUNCIL_MINI_MODEL": "gpt-4o-mini", "COUNCIL_MINI_TIER": "cheap",
    ]

    static func load(_ environment: [String: String]) async throws -> AppConfiguration {
        try await ConfigurationLoader.load(file: nil, environment: base.merging(environment) { $1 }, platforms: [])
    }

    static func price(_ environment: [String: String]) async throws -> ModelPrice? {
        guard case .council(let council) = try await load(environment).backend else { return nil }
        return council.models.first?.price
    }

    @Test func aCouncilModelsPriceIsReadAndNoneIsNoPrice() async throws {
        #expect(try await Self.price([:]) == nil)
        #expect(try await Self.price(["COUNCIL_MINI_PRICE_IN": "0.15", "COUNCIL_MINI_PRICE_OUT": "0.6"]) == ModelPrice(inPerMillion: 0.15, outPerMillion: 0.6))
        // Free is a price: its calls cost $0, not "no price".
        #expect(try await Self.price(["COUNCIL_MINI_PRICE_IN": "0", "COUNCIL_MINI_PRICE_OUT": "0"]) == ModelPrice(inPerMillion: 0, outPerMillion: 0))
    }

    @Test func theLocalModelsPriceIsReadWhateverTheBackend() async throws {
        let configuration = try await Self.load(["LOCAL_MODEL_PRICE_IN": "0.01", "LOCAL_MODEL_PRICE_OUT": "0.02"])
        #expect(configuration.localModelPrice == ModelPrice(inPerMillion: 0.01, outPerMillion: 0.02))
        let council = LocalModel.council(baseURL: "http://127.0.0.1:18082/v1", modelID: "smol", price: configuration.localModelPrice)
        #expect(council.models.first?.price == configuration.localModelPrice)
    }

    @Test(arguments: [
        (["COUNCIL_MINI_PRICE_IN": "-1", "COUNCIL_MINI_PRICE_OUT": "1"], "COUNCIL_MINI_PRICE_IN", "0 or more"),
        (["COUNCIL_MINI_PRICE_IN": "1", "COUNCIL_MINI_PRICE_OUT": "cheap"], "COUNCIL_MINI_PRICE_OUT", "got `cheap`"),
        (["COUNCIL_MINI_PRICE_IN": "nan", "COUNCIL_MINI_PRICE_OUT": "1"], "COUNCIL_MINI_PRICE_IN", "0 or more"),
        (["COUNCIL_MINI_PRICE_IN": "0.15"], "COUNCIL_MINI_PRICE_OUT", "give both prices, or neither"),
        (["COUNCIL_MINI_PRICE_OUT": "0.6"], "COUNCIL_MINI_PRICE_IN", "give both prices, or neither"),
        (["LOCAL_MODEL_PRICE_IN": "-0.5", "LOCAL_MODEL_PRICE_OUT": "1"], "LOCAL_MODEL_PRICE_IN", "0 or more"),
    ])
    func aBadPriceStopsStartUpNamingTheKey(environment: [String: String], key: String, says: String) async throws {
        await #expect {
            _ = try await Self.load(environment)
        } throws: { error in
            error is ConfigurationError && "\(error)".contains(key) && "\(error)".contains(says)
        }
    }
}
