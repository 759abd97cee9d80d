/// The gateway's JSON bodies (contract §2), as the client sends and reads them.
///
/// Several server versions are deployed, so every response field is optional, a field of an
/// unexpected type reads as absent instead of failing the whole body, and unknown fields are
/// ignored.
enum RheaWire {
    /// The body of a GET: none.
    struct NoBody: Encodable {}
    static let noBody: NoBody? = nil

    struct QuickRequest: Encodable {
        var text: String
        var action: String
        var targetLang: String
        var style: String
        /// Not in the gateway's contract, which always uses its cheap tier and ignores unknown
        /// fields; a relay serving the API honours it, so an escalated chain block stays escalated.
        var tier: String

        enum CodingKeys: String, CodingKey {
            case text, action, style, tier
            case targetLang = "target_lang"
        }
    }

    struct QuickResponse: Decodable {
        var text: String?
        var model: String?
        var elapsedS: Double?
        var action: String?

        enum CodingKeys: String, CodingKey {
            case text, model, action
            case elapsedS = "elapsed_s"
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            text = c.lenient(String.self, .text)
            model = c.lenient(String.self, .model)
            elapsedS = c.lenient(Double.self, .elapsedS)
            action = c.lenient(String.self, .action)
        }
    }

    struct DialogRequest: Encodable {
        var text: String
        var sender: String
    }

    struct DialogResponse: Decodable {
        var reply: String?
        var agreementScore: Double?
        var modelsResponded: Int?
        var elapsedS: Double?

        enum CodingKeys: String, CodingKey {
            case reply
            case agreementScore = "agreement_score"
            case modelsResponded = "models_responded"
            case elapsedS = "elapsed_s"
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            reply = c.lenient(String.self, .reply)
            agreementScore = c.lenient(Double.self, .agreementScore)
            modelsResponded = c.lenient(Int.self, .modelsResponded)
            elapsedS = c.lenient(Double.self, .elapsedS)
        }
    }

    struct TribunalRequest: Encodable {
        var prompt: String
        var k: Int
        var tier: String
        var mode: String
    }

    struct TribunalResponse: Decodable {
        var consensus: String?
        var agreementScore: Double?
        var confidence: Double?
        var modelsResponded: Int?
        var modelsQueried: Int?
        var elapsedS: Double?
        var agreementPoints: [String]?
        var divergencePoints: [String]?
        var stanceSummary: [String: Stance]?
        var responses: [ModelResponse]?
        /// Not in the gateway's contract: a relay serving the API (`RheaAPI`) adds the council's
        /// verdict, which the stances alone cannot always reproduce (it weighs votes).
        var verdict: String?

        enum CodingKeys: String, CodingKey {
            case consensus, confidence, responses, verdict
            case agreementScore = "agreement_score"
            case modelsResponded = "models_responded"
            case modelsQueried = "models_queried"
            case elapsedS = "elapsed_s"
            case agreementPoints = "agreement_points"
            case divergencePoints = "divergence_points"
            case stanceSummary = "stance_summary"
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            consensus = c.lenient(String.self, .consensus)
            agreementScore = c.lenient(Double.self, .agreementScore)
            confidence = c.lenient(Double.self, .confidence)
            modelsResponded = c.lenient(Int.self, .modelsResponded)
            modelsQueried = c.lenient(Int.self, .modelsQueried)
            elapsedS = c.lenient(Double.self, .elapsedS)
            agreementPoints = c.lenient([Lenient<String>].self, .agreementPoints)?.compactMap(\.value)
            divergencePoints = c.lenient([Lenient<String>].self, .divergencePoints)?.compactMap(\.value)
            stanceSummary = c.lenient([String: Lenient<Stance>].self, .stanceSummary)?
                .compactMapValues(\.value)
            responses = c.lenient([Lenient<ModelResponse>].self, .responses)?.compactMap(\.value)
            verdict = c.lenient(String.self, .verdict)
        }
    }

    struct Stance: Decodable {
        var stance: String?

        init(from decoder: any Decoder) throws {
            // Some versions might give a bare label instead of the object with scores.
            if let label = try? decoder.singleValueContainer().decode(String.self) {
                stance = label
                return
            }
            let c = try decoder.container(keyedBy: AnyKey.self)
            stance = c.lenient(String.self, AnyKey("stance"))
        }
    }

    struct ModelResponse: Decodable {
        var model: String?
        var provider: String?
        var text: String?
        var error: String?
        var latencyS: Double?

        enum CodingKeys: String, CodingKey {
            case model, provider, text, error
            case latencyS = "latency_s"
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            model = c.lenient(String.self, .model)
            provider = c.lenient(String.self, .provider)
            text = c.lenient(String.self, .text)
            error = c.lenient(String.self, .error)
            latencyS = c.lenient(Double.self, .latencyS)
        }

        /// "provider/model" when the provider is given, as `stance_summary` keys name models.
        var displayName: String? {
            guard let model, !model.isEmpty else { return nil }
            guard let provider, !provider.isEmpty else { return model }
            return "\(provider)/\(model)"
        }

        /// A response failed when it carries an error or has no text.
        var failed: Bool {
            error.isNonEmpty || !text.isNonEmpty
        }
    }

    struct HealthResponse: Decodable {
        var status: String?
        var providersAvailable: Int?
        var providersTotal: Int?
        var totalModels: Int?

        enum CodingKeys: String, CodingKey {
            case status
            case providersAvailable = "providers_available"
            case providersTotal = "providers_total"
            case totalModels = "total_models"
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            status = c.lenient(String.self, .status)
            providersAvailable = c.lenient(Int.self, .providersAvailable)
            providersTotal = c.lenient(Int.self, .providersTotal)
            totalModels = c.lenient(Int.self, .totalModels)
        }
    }

    /// An element that reads as nil instead of failing its array.
    struct Lenient<Value: Decodable>: Decodable {
        var value: Value?

        init(from decoder: any Decoder) throws {
            value = try? decoder.singleValueContainer().decode(Value.self)
        }
    }

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }

        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

extension KeyedDecodingContainer {
    /// The value, or nil when it is missing, null or of another type.
    func lenient<T: Decodable>(_ type: T.Type, _ key: Key) -> T? {
        (try? decodeIfPresent(type, forKey: key)) ?? nil
    }
}
