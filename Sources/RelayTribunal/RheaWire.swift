import Foundation
import RelayCore

/// The gateway's JSON bodies (contract §2), as the client sends and reads them.
///
/// Several server versions are deployed, so every response field is optional, a field of an
/// unexpected type reads as absent instead of failing the whole body, and unknown fields are
/// ignored.
enum RheaWire {
    /// A JSON body as `type`; every wire type reads leniently. The client and the fuzzer
    /// (`BackendAnswers`) decode through this one function.
    static func decode<T: Decodable>(_ type: T.Type, from body: [UInt8]) throws -> T {
        try JSONDecoder().decode(type, from: Data(body))
    }

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
        /// verdict, which the stances alone cannot always reproduce (it weighs votes), and what its
        /// score means: with `probabilityRight` the probability is `confidence`.
        var verdict: String?
        var scoreMeaning: ScoreMeaning?

        enum CodingKeys: String, CodingKey {
            case consensus, confidence, responses, verdict
            case agreementScore = "agreement_score"
            case modelsResponded = "models_responded"
            case modelsQueried = "models_queried"
            case elapsedS = "elapsed_s"
            case agreementPoints = "agreement_points"
            case divergencePoints = "divergence_points"
            case stanceSummary = "stance_summary"
            case scoreMeaning = "score_meaning"
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
            scoreMeaning = c.lenient(String.self, .scoreMeaning).flatMap(ScoreMeaning.init(rawValue:))
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
        /// What the gateway counted for the call, in and out together.
        var tokensUsed: Int?

        enum CodingKeys: String, CodingKey {
            case model, provider, text, error
            case latencyS = "latency_s"
            case tokensUsed = "tokens_used"
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            model = c.lenient(String.self, .model)
            provider = c.lenient(String.self, .provider)
            text = c.lenient(String.self, .text)
            error = c.lenient(String.self, .error)
            latencyS = c.lenient(Double.self, .latencyS)
            tokensUsed = c.lenient(Int.self, .tokensUsed)
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

/// Turns a `QuickRequest` into a `/keyboard/quick` body and its answer into a `QuickResult`.
enum QuickMapping {
    /// The language codes the gateway's translate table knows (contract §2.1). Any other code
    /// is used verbatim as the language *name* in the model's prompt, so for those we send
    /// the English name ("Filipino") rather than a code the model may not recognise ("fil").
    static let serverLanguageCodes: Set<String> = [
        "ja", "es", "fr", "ru", "de", "zh", "ar", "ko", "pt", "it",
        "nl", "tr", "hi", "th", "vi", "uk", "pl", "sv", "he", "en",
    ]

    /// The instruction sent ahead of the text for `extract`, which the gateway has no action for.
    static let extractInstruction = """
        Extract the key facts and the action items from the text below. Answer with a short \
        bulleted list, one line per item: the key facts first, then the action items (with who \
        and when, if the text says). Add nothing else.

        Text:

        """

    static func body(for request: QuickRequest) throws(TribunalError) -> RheaWire.QuickRequest {
        var action = request.action.name
        var text = request.text
        var targetLang = ""
        var style = ""
        switch request.action {
        case .translate(let language):
            targetLang = targetLanguage(language)
        case .rewrite(let rewriteStyle):
            // The gateway reads an empty style as "clearer", which is what nil means here.
            style = rewriteStyle?.rawValue ?? ""
        case .extract:
            action = "freeform"
            try checkExtractLength(request.text)
            text = extractInstruction + request.text
        case .grammar, .summarize, .explain, .freeform:
            break
        }
        try TextLimits.check(text, limit: TextLimits.text, what: "text")
        return RheaWire.QuickRequest(text: text, action: action, targetLang: targetLang, style: style, tier: ConsensusMapping.wireTier(request.tier))
    }

    static func targetLanguage(_ language: Language) -> String {
        let code = language.code.lowercased()
        return serverLanguageCodes.contains(code) ? code : language.name
    }

    /// Names the user's own length and what is left for it, not the instruction's share.
    private static func checkExtractLength(_ text: String) throws(TribunalError) {
        let room = TextLimits.text - TextLimits.length(extractInstruction)
        let count = TextLimits.length(text)
        if count > room {
            throw .rejected(
                detail:
                    "the text is \(count) characters long; extract allows \(room) characters (the backend's limit is \(TextLimits.text) including its instructions). Shorten it and try again."
            )
        }
    }

    static func result(from response: RheaWire.QuickResponse, measured: Duration, url: String) throws(TribunalError)
        -> QuickResult
    {
        guard let text = response.text else {
            throw .malformedResponse(url: url, reason: "/keyboard/quick answered without a text field")
        }
        if let detail = ProviderFailure.detail(in: text) {
            throw .providerFailed(detail: detail)
        }
        let model = response.model?.trimmingWhitespace
        return QuickResult(
            text: text.trimmingWhitespace,
            model: (model?.isEmpty ?? true) ? nil : model,
            elapsed: ConsensusMapping.elapsed(response.elapsedS, measured: measured))
    }
}

/// The gateway reports model failures as 200 answers whose text starts with `Error:`.
enum ProviderFailure {
    static let maxDetailLength = 300

    /// The text after `Error:`, trimmed and shortened, or nil when `text` is a real answer.
    static func detail(in text: String) -> String? {
        let trimmed = text.trimmingWhitespace
        guard trimmed.hasPrefix("Error:") else { return nil }
        let detail = String(trimmed.dropFirst("Error:".count)).trimmingWhitespace
        if detail.isEmpty { return "unknown error" }
        let line = detail.split(whereSeparator: \.isNewline).joined(separator: " ")
        return line.count > maxDetailLength ? String(line.prefix(maxDetailLength - 1)) + "…" : line
    }
}

/// Turns a `ConsensusRequest` into a `/tribunal` body and `/tribunal` or `/dialog` answers
/// into a `ConsensusResult`.
enum ConsensusMapping {
    /// The gateway's bounds for `k`.
    static let kRange = 2...10

    /// Our tiers in the bridge's vocabulary; an unknown name would silently mean "cheap".
    static func wireTier(_ tier: Tier) -> String {
        switch tier {
        case .cheap: "cheap"
        case .mid: "balanced"
        case .frontier: "expensive"
        }
    }

    static func tribunalBody(for request: ConsensusRequest) throws(TribunalError) -> RheaWire.TribunalRequest {
        try TextLimits.check(request.claim, limit: TextLimits.prompt, what: "claim")
        // "local" scores with the server's own analysis and costs no extra model call.
        return RheaWire.TribunalRequest(
            prompt: request.claim,
            k: min(kRange.upperBound, max(kRange.lowerBound, request.k)),
            tier: wireTier(request.tier),
            mode: "local")
    }

    /// Maps a `/tribunal` answer; `k` is what was asked for, used when `responses` is absent.
    static func result(from response: RheaWire.TribunalResponse, k: Int, measured: Duration, url: String)
        throws(TribunalError) -> ConsensusResult
    {
        // More responses than any k asks for are not read: a hostile body cannot make us walk,
        // name or count thousands of models.
        let responses = Array((response.responses ?? []).prefix(Limits.responses))
        let answering = responses.filter { !$0.failed }
        // `models_queried` counts successes, not attempts: the attempts are the responses.
        let asked = responses.isEmpty ? k : responses.count
        let responded = UntrustedNumber.checked(response.modelsResponded, in: Limits.models, source: "rhea", field: "models_responded")
        let queried = UntrustedNumber.checked(response.modelsQueried, in: Limits.models, source: "rhea", field: "models_queried")
        let answered = responded ?? (responses.isEmpty ? queried : answering.count) ?? 0

        if answered == 0 || (!responses.isEmpty && answering.isEmpty) {
            let firstError = responses.lazy.compactMap(\.error).first { !$0.trimmingWhitespace.isEmpty }
            let detail = firstError.map { ProviderFailure.detail(in: "Error: \($0)") ?? $0 } ?? "no model answered"
            throw .providerFailed(detail: "all \(asked) models failed: \(detail)")
        }

        let answer = try bestAnswer(consensus: response.consensus, answering: answering, url: url)
        let models = answering.compactMap(\.displayName)
        let stances = response.stanceSummary ?? [:]
        let stanceVerdicts = DissentFinder.labels(stances: stances, answering: answering).compactMap { Verdict(stance: $0.stance) }
        let verdict = response.verdict.flatMap { Verdict(rawValue: $0.lowercased()) } ?? StanceVerdict.derive(stanceVerdicts)
        let share = unit(response.agreementScore, field: "agreement_score") ?? 0
        // A relay serving the API over a council that computes the probability of its verdict
        // says so: its `confidence` is that probability, `agreement_score` the share that agreed.
        let probability = response.scoreMeaning == .probabilityRight ? unit(response.confidence, field: "confidence") : nil
        return ConsensusResult(
            answer: answer,
            verdict: verdict,
            agreement: probability ?? share,
            confidence: probability == nil ? unit(response.confidence, field: "confidence") : nil,
            answered: answered,
            asked: max(asked, answered),
            dissent: DissentFinder.dissent(
                stances: stances, verdict: verdict,
                divergencePoints: response.divergencePoints ?? [],
                answering: answering),
            models: models,
            elapsed: elapsed(response.elapsedS, measured: measured),
            scoreMeaning: probability == nil ? .agreement : .probabilityRight,
            judges: responses.map { judge(of: $0, stances: stances) },
            backend: "rhea",
            agreeing: probability == nil ? nil : Int((share * Double(answered)).rounded()))
    }

    /// One response as a judge's vote: its stance as the verdict, its latency when plausible.
    static func judge(of response: RheaWire.ModelResponse, stances: [String: RheaWire.Stance]) -> JudgeVote {
        let name = response.displayName ?? "unnamed model"
        let failed = response.failed
        return JudgeVote(
            model: name,
            verdict: failed ? nil : stances[name]?.stance.flatMap { Verdict(stance: $0) },
            answer: failed ? "" : response.text?.trimmingWhitespace ?? "",
            latency: UntrustedNumber.seconds(response.latencyS, in: Limits.elapsed, source: "rhea", field: "latency_s"),
            error: failed ? (response.error.isNonEmpty ? "the model failed" : "no answer text") : nil)
    }

    /// The consensus text, unless it is empty or only says too few models answered; then the
    /// longest real answer.
    private static func bestAnswer(consensus: String?, answering: [RheaWire.ModelResponse], url: String)
        throws(TribunalError) -> String
    {
        let summary = consensus?.trimmingWhitespace ?? ""
        if !summary.isEmpty, !summary.hasPrefix("Insufficient responses") {
            return summary
        }
        let longest = answering.compactMap { $0.text?.trimmingWhitespace }.max { $0.count < $1.count }
        if let longest, !longest.isEmpty { return longest }
        if !summary.isEmpty { return summary }
        throw .malformedResponse(url: url, reason: "/tribunal answered with neither a consensus nor any response text")
    }

    /// Maps a `/dialog` answer: two cheap models, and a score that is only the share that answered.
    static func result(from response: RheaWire.DialogResponse, measured: Duration, url: String)
        throws(TribunalError) -> ConsensusResult
    {
        guard let reply = response.reply?.trimmingWhitespace else {
            throw .malformedResponse(url: url, reason: "/dialog answered without a reply field")
        }
        if let detail = ProviderFailure.detail(in: reply) {
            throw .providerFailed(detail: detail)
        }
        let share = unit(response.agreementScore, field: "agreement_score")
        // `/dialog` always asks 2 models, so a missing count can be read back from the share.
        let responded = UntrustedNumber.checked(response.modelsResponded, in: Limits.models, source: "rhea", field: "models_responded")
        let answered = responded ?? Int(((share ?? 0) * 2).rounded())
        if answered <= 0 || reply.isEmpty || reply == "No response available." {
            throw .providerFailed(detail: "no model answered")
        }
        let asked = max(2, answered)
        return ConsensusResult(
            answer: reply,
            verdict: nil,
            agreement: share ?? Double(answered) / Double(asked),
            confidence: nil,
            answered: answered,
            asked: asked,
            elapsed: elapsed(response.elapsedS, measured: measured),
            scoreMeaning: .answeredShare,
            backend: "rhea")
    }

    /// What the gateway's numbers may be; anything outside is replaced and reported
    /// (`UntrustedNumber`), so a broken or hostile gateway cannot put "-3/9223372036854775807
    /// models" or "1e300 %" into a reply, or trap the process converting them.
    enum Limits {
        /// Model counts: k is at most 10; a gateway with a few dozen models is plausible.
        static let models = 0...100
        /// Response objects read from one answer.
        static let responses = 100
        /// Scores and confidences are shares.
        static let unit = 0.0...1.0
        /// A call's own elapsed time: no configurable timeout comes near an hour.
        static let elapsed = Duration.zero...Duration.seconds(3600)
    }

    /// A score in 0…1, clamped (out of range is reported); nil when absent or NaN.
    static func unit(_ value: Double?, field: String) -> Double? {
        UntrustedNumber.clamped(value, to: Limits.unit, source: "rhea", field: field)
    }

    /// The gateway's `elapsed_s` when it is plausible, else the time we measured ourselves.
    static func elapsed(_ seconds: Double?, measured: Duration) -> Duration {
        UntrustedNumber.seconds(seconds, in: Limits.elapsed, source: "rhea", field: "elapsed_s") ?? measured
    }
}

/// The gateway's length limits, checked before sending so an over-long text costs no request.
///
/// Pydantic counts code points, as Swift's `unicodeScalars` do (not grapheme clusters).
enum TextLimits {
    /// `text` of `/keyboard/quick` and `/dialog`.
    static let text = 5000
    /// `prompt` of `/tribunal`.
    static let prompt = 10000

    static func length(_ text: String) -> Int { text.unicodeScalars.count }

    /// Throws `.rejected` naming the length and the limit when `text` is empty or too long.
    static func check(_ text: String, limit: Int, what: String) throws(TribunalError) {
        let count = length(text)
        if text.trimmingWhitespace.isEmpty {
            throw .rejected(detail: "the \(what) is empty")
        }
        if count > limit {
            throw .rejected(
                detail: "the \(what) is \(count) characters long; the limit is \(limit) characters. Shorten it and try again.")
        }
    }
}

extension String? {
    /// True for a string with something other than whitespace in it.
    var isNonEmpty: Bool {
        guard let self else { return false }
        return !self.trimmingWhitespace.isEmpty
    }
}

extension String {
    /// The string without leading and trailing whitespace and newlines (no Foundation needed).
    var trimmingWhitespace: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }
}
