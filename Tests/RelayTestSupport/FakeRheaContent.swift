import RelayCore

/// The bodies `FakeRheaTribunal` answers with, built from the contract's shapes (§1.5, §2).
enum FakeRheaContent {
    /// Model names the fake tribunal uses, in order; `k` takes the first k.
    static let modelNames = [
        "openai/fake-a", "deepseek/fake-b", "gemini/fake-c", "openrouter/fake-d", "azure/fake-e",
        "mistral/fake-f", "groq/fake-g", "anthropic/fake-h", "together/fake-i", "huggingface/fake-j",
    ]

    static let quickModel = "fake-mini"
    static let quickProviderError = "Error: All cheap tier candidates failed. Last error: fake provider timed out"
    static let dialogProviderError = "Error: fake bridge failure (all providers down)"
    static let modelError = "fake provider error: upstream returned HTTP 500"
    /// Below this agreement the fake tribunal makes its last answering model dissent.
    static let dissentThreshold = 0.7

    // MARK: /keyboard/quick

    /// The server's fallbacks are mirrored: empty target language = English, empty style =
    /// "clearer", unknown action = freeform.
    static func quick(_ body: [String: JSONValue]) -> JSONValue {
        let text = body["text"]?.stringValue ?? ""
        let action = body["action"]?.stringValue ?? "translate"
        let tag: String
        switch action {
        case "translate":
            let language = body["target_lang"]?.stringValue ?? ""
            tag = "translate:\(language.isEmpty ? "en" : language)"
        case "rewrite":
            let style = body["style"]?.stringValue ?? ""
            tag = "rewrite:\(style.isEmpty ? "clearer" : style)"
        case "grammar", "summarize", "explain", "freeform":
            tag = action
        default:
            tag = "freeform"
        }
        return [
            "text": .string("[\(tag)] \(text)"), "model": .string(quickModel), "elapsed_s": 0.01,
            "action": .string(action), "fake_usage": ["tokens": 12, "cached": false],
        ]
    }

    static func quickProviderFailure(_ body: [String: JSONValue]) -> JSONValue {
        [
            "text": .string(quickProviderError), "model": "", "elapsed_s": 0.01,
            "action": body["action"] ?? "translate",
        ]
    }

    // MARK: /dialog

    static func dialog(_ body: [String: JSONValue], modelsResponded: Int) -> JSONValue {
        let text = body["text"]?.stringValue ?? ""
        let answered = min(2, max(0, modelsResponded))
        let reply =
            switch answered {
            case 2: "[dialog] \(text)"
            case 1: "Insufficient responses (1/2 valid)."
            default: "No response available."
            }
        return [
            "reply": .string(reply), "agreement_score": .double(Double(answered) / 2),
            "models_responded": .int(answered), "elapsed_s": 0.02, "ts": "2026-03-01T12:00:00.123456Z",
        ]
    }

    static func dialogProviderFailure() -> JSONValue {
        [
            "reply": .string(dialogProviderError), "agreement_score": 0.0, "models_responded": 0,
            "elapsed_s": 0.0, "ts": "2026-03-01T12:00:00.123456Z",
        ]
    }

    // MARK: /tribunal

    /// A `/tribunal` answer for `k` models of which the last `failing` fail.
    static func tribunal(prompt: String, k: Int, tier: String, mode: String, agreement: Double, failing: Int, stance: String = "affirmative")
        -> JSONValue
    {
        let names = Array(modelNames.prefix(k))
        let failingCount = min(max(0, failing), names.count)
        let answering = Array(names.prefix(names.count - failingCount))
        let dissenter = answering.count >= 2 && agreement < dissentThreshold ? answering.last : nil

        var responses: [JSONValue] = []
        var stances: [String: JSONValue] = [:]
        for name in names {
            let (provider, model) = split(name)
            guard answering.contains(name) else {
                responses.append([
                    "model": .string(model), "provider": .string(provider), "text": "", "latency_s": 0.0,
                    "tokens_used": 0, "error": .string(modelError),
                ])
                continue
            }
            let dissents = name == dissenter
            let text =
                dissents
                ? "It depends on the context. \(model) has reservations about: \(prompt)"
                : "Yes, this holds. \(model) agrees with: \(prompt)"
            responses.append([
                "model": .string(model), "provider": .string(provider), "text": .string(text),
                "latency_s": 0.01, "tokens_used": 20, "error": nil,
            ])
            stances[name] =
                dissents
                ? ["stance": "qualified", "affirmative": 0.0, "negative": 0.0, "qualified": 25.0]
                : .object(["stance": .string(stance), "affirmative": 0.0, "negative": 0.0, "qualified": 0.0].merging([stance: 38.462]) { _, new in new })
        }

        let n = answering.count
        let score = n >= 2 ? round4(min(1, max(0, agreement))) : 0
        let agreeing = answering.filter { $0 != dissenter }
        let alignment = n >= 2 ? Double(agreeing.count) / Double(n) : 0
        let confidence = n >= 2 ? round4(0.3 * min(Double(n) / 5, 1) + 0.4 * score + 0.3 * alignment) : 0
        let agreementPoints: [JSONValue] =
            agreeing.count >= 2 ? [.string("[\(agreeing.joined(separator: ", "))] Yes, this holds.")] : []
        let divergencePoints: [JSONValue] = dissenter.map { [.string("[\($0) only] It depends on the context.")] } ?? []

        let consensus: String
        switch n {
        case 0: consensus = ""
        case 1: consensus = "Insufficient responses (1/\(names.count) valid)."
        default:
            var lines = ["\(label(score)) across \(n) models (agreement: \(Int((score * 100).rounded()))%)."]
            if dissenter != nil {
                lines.append("Stance distribution: affirmative: \(n - 1)/\(n), qualified: 1/\(n).")
            } else {
                lines.append("All models take a affirmative position.")
            }
            lines.append("")
            lines.append("Key areas of agreement:")
            lines.append(contentsOf: agreementPoints.compactMap(\.stringValue).map { "  - \($0)" })
            if !divergencePoints.isEmpty {
                lines.append("")
                lines.append("Key areas of divergence:")
                lines.append(contentsOf: divergencePoints.compactMap(\.stringValue).map { "  - \($0)" })
            }
            consensus = lines.joined(separator: "\n")
        }

        return [
            "prompt": .string(prompt), "k": .int(k), "mode": .string(mode), "elapsed_s": 0.05,
            "consensus": .string(consensus), "agreement_score": .double(score), "confidence": .double(confidence),
            "models_responded": .int(n),
            // As on the real server: the successes, falling back to attempts when none succeeded.
            "models_queried": .int(n > 0 ? n : names.count),
            "analysis_method": n > 0 ? "tfidf_local" : "unknown",
            "agreement_points": .array(agreementPoints), "divergence_points": .array(divergencePoints),
            "stance_summary": .object(stances), "responses": .array(responses),
            "math_verification": [:],
            "meta": ["vocab_size": 49, "avg_response_length": 186, "avg_token_count": 24, "tier": .string(tier)],
            "fake_server": ["version": "fake-1", "note": "unknown fields must be ignored", "numbers": [1, 2.5]],
        ]
    }

    static func label(_ score: Double) -> String {
        switch score {
        case 0.7...: "Strong consensus"
        case 0.4...: "Moderate consensus"
        case 0.2...: "Weak consensus"
        default: "No clear consensus"
        }
    }

    // MARK: /health

    static func health(status: String, providersAvailable: Int, providersTotal: Int) -> JSONValue {
        [
            "status": .string(status), "providers_available": .int(providersAvailable),
            "providers_total": .int(providersTotal), "total_models": 32, "execution_profile": "safe_cheap",
            "analyzer_version": "v2-ice-council", "profile_mode": "operator_first",
        ]
    }

    // MARK: Errors

    /// The 422 item the contract quotes as verified (§1.5), for a scripted 422 without detail.
    static let contractValidationError: JSONValue = [
        "type": "greater_than_equal", "loc": ["body", "k"], "msg": "Input should be greater than or equal to 2",
        "input": 1, "ctx": ["ge": 2],
    ]

    static func detail(_ text: String) -> JSONValue { ["detail": .string(text)] }

    /// The contract's texts for statuses a test may script without giving one.
    static func defaultDetail(for status: Int, path: String) -> String {
        switch status {
        case 401: "Invalid or missing API key. Sign up at /auth/signup"
        case 402:
            "Insufficient credits. Need 3 for \(path == "/tribunal" ? "tribunal" : "this call"), have 0. Buy credits at /billing/credits/buy"
        case 429: "Rate limit (30/min) exceeded"
        case 404: "Not Found"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        default: "HTTP \(status)"
        }
    }

    private static func split(_ name: String) -> (provider: String, model: String) {
        let parts = name.split(separator: "/", maxSplits: 1).map(String.init)
        return parts.count == 2 ? (parts[0], parts[1]) : ("", name)
    }

    private static func round4(_ value: Double) -> Double {
        (value * 10000).rounded() / 10000
    }
}
