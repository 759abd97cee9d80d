import Foundation
import RelayCore
import RelayPlatform
import RelayTribunal

/// Reads the council from configuration:
///
/// ```yaml
/// council:
///   models: [mini, local]        # COUNCIL_MODELS=mini,local — preference order
///   quorum: 2
///   deadline: 30                 # seconds, whole consensus
///   timeout: 20                  # seconds, per model call unless the model says otherwise
///   chairman: mini               # optional
///   mini: { baseURL: https://api.openai.com/v1, apiKeyEnv: OPENAI_API_KEY, model: gpt-4o-mini, tier: cheap, weight: 1, timeout: 15 }
///   local: { baseURL: http://127.0.0.1:18082/v1, model: smollm2, tier: cheap }
///   # stream: false — for an endpoint that cannot stream: its answers arrive whole
///   # priceIn: 0.15, priceOut: 0.60 — US dollars per million tokens (COUNCIL_MINI_PRICE_IN/_OUT)
/// ```
///
/// Each model's fields sit under its name (`council.mini.baseURL`, env `COUNCIL_MINI_BASE_URL`)
/// because swift-configuration reads scalars and arrays of scalars, not lists of objects.
/// Every problem is refused at start with the model and the field named.
enum CouncilConfigurationLoader {
    static func load(_ values: ConfigValues) throws -> CouncilConfiguration {
        guard let names = values.strings("council.models")?.map({ $0.trimmingCharacters(in: .whitespaces) }).filter({ !$0.isEmpty }), !names.isEmpty else {
            throw ConfigurationError(
                "tribunal.backend is `council` but council.models (COUNCIL_MODELS) lists no models. Name them, e.g. `models: [mini]`, and describe each under council.<name>."
            )
        }
        if let duplicate = Dictionary(grouping: names, by: { $0 }).first(where: { $0.value.count > 1 })?.key {
            throw ConfigurationError("council.models names `\(duplicate)` twice.")
        }
        let models = try names.map { try model(named: $0, values) }
        var council = CouncilConfiguration(models: models)
        council.quorum = try values.int("council.quorum", in: 1...10) ?? council.quorum
        council = try timing(values).applied(to: council)
        if let chairman = values.string("council.chairman") {
            guard names.contains(chairman) else {
                throw ConfigurationError("council.chairman (COUNCIL_CHAIRMAN) `\(chairman)` is not one of council.models (\(names.joined(separator: ", "))).")
            }
            council.chairman = chairman
        }
        return council
    }

    /// `council.timeout` and `council.deadline`, each checked.
    static func timing(_ values: ConfigValues) throws -> CouncilTiming {
        CouncilTiming(timeout: try values.seconds("council.timeout"), deadline: try values.seconds("council.deadline"))
    }

    private static func model(named name: String, _ values: ConfigValues) throws -> CouncilModel {
        guard name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw ConfigurationError("council model `\(name)`: names may use letters, digits, - and _ only.")
        }
        let prefix = "council.\(name)."
        func fail(_ field: String, _ problem: String) -> ConfigurationError {
            ConfigurationError("council model `\(name)`: \(field) (\(prefix)\(field), env \(ConfigValues.envName(prefix + field))) \(problem)")
        }
        guard let baseURL = values.string(prefix + "baseURL") else { throw fail("baseURL", "is missing.") }
        guard let url = URL(string: baseURL), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
            throw fail("baseURL", "must be an http:// or https:// URL, got `\(MaskedURL.display(baseURL))`.")
        }
        guard let modelID = values.string(prefix + "model") else { throw fail("model", "is missing: give the provider's model id.") }
        guard let tierName = values.string(prefix + "tier") else { throw fail("tier", "is missing: cheap, mid or frontier.") }
        guard let tier = Tier(rawValue: tierName.lowercased()) else { throw fail("tier", "must be cheap, mid or frontier, got `\(tierName)`.") }
        var weight = 1.0
        if let raw = values.string(prefix + "weight") {
            guard let parsed = Double(raw), parsed > 0, parsed <= 100 else { throw fail("weight", "must be a number above 0 and at most 100, got `\(raw)`.") }
            weight = parsed
        }
        let timeout = try values.seconds(prefix + "timeout")
        let stream = try values.bool(prefix + "stream") ?? true
        var apiKey: String?
        let keyEnv = values.string(prefix + "apiKeyEnv")
        if let keyEnv {
            guard let value = values.environment[keyEnv], !value.isEmpty else {
                throw fail("apiKeyEnv", "names \(keyEnv), which is not set in the environment. Export it, or remove apiKeyEnv for a server without keys.")
            }
            apiKey = value
        }
        return CouncilModel(
            name: name, baseURL: baseURL, apiKeyEnv: keyEnv, apiKey: apiKey, model: modelID, tier: tier, weight: weight, timeout: timeout, stream: stream,
            price: try values.price(prefix))
    }
}
