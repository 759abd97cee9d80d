public import RelayCore

/// An in-memory `Tribunal` for unit tests of code above the backend: no network, fixed
/// formats, every call recorded.
///
/// - quick answers `"[<action>:<arg>@<tier>] <text>"` for translate (arg = language code) and
///   rewrite (arg = style, nil → `clearer`), else `"[<action>@<tier>] <text>"`; model
///   `"scripted-<tier>"`.
/// - consensus answers `"Consensus (<tier>): <claim>"` with `agreement(claim, tier)`,
///   `confidence` = agreement, k clamped to 2…10 models `scripted/model-1…k` that all answer
///   (with `rosters`, the tier's first k judges, and quick's model is the tier's first writer),
///   and one dissenter (the last model) when the agreement is below 0.7.
/// - `failure(call)` returning an error makes that call throw it instead (after recording).
public struct ScriptedTribunal: Tribunal {
    /// One call as received.
    public enum Call: Sendable, Hashable {
        case quick(QuickRequest)
        case consensus(ConsensusRequest)
        case health
    }

    /// Shared by all copies of a `ScriptedTribunal`.
    public actor Recorder {
        /// Calls in arrival order.
        public private(set) var calls: [Call] = []

        public init() {}

        func record(_ call: Call) { calls.append(call) }

        /// Only the quick requests.
        public var quickRequests: [QuickRequest] {
            calls.compactMap { call -> QuickRequest? in
                guard case .quick(let request) = call else { return nil }
                return request
            }
        }

        /// Only the consensus requests.
        public var consensusRequests: [ConsensusRequest] {
            calls.compactMap { call -> ConsensusRequest? in
                guard case .consensus(let request) = call else { return nil }
                return request
            }
        }

        /// Forgets the calls.
        public func reset() { calls.removeAll() }
    }

    /// Where the calls are recorded.
    public let recorder: Recorder
    /// Agreement for a claim at a tier; 0.82 unless given.
    public var agreement: @Sendable (_ claim: String, _ tier: Tier) -> Double
    /// The verdict every consensus carries (nil, like Rhea's gateway).
    public var verdict: Verdict?
    /// What `consensus` reports the score to mean.
    public var scoreMeaning: ScoreMeaning
    /// An error to throw for a call, or nil to answer it.
    public var failure: @Sendable (Call) -> TribunalError?
    /// What `health` answers with when `failure` lets it.
    public var endpoint: String
    /// Who answers at each tier; nil (the default) for a backend that picks its own models.
    public var rosters: [Tier: TierRoster]?

    /// Creates a fake; the defaults answer everything with agreement 0.82.
    public init(
        recorder: Recorder = Recorder(),
        agreement: @escaping @Sendable (_ claim: String, _ tier: Tier) -> Double = { _, _ in 0.82 },
        verdict: Verdict? = nil,
        scoreMeaning: ScoreMeaning = .agreement,
        endpoint: String = "scripted tribunal",
        rosters: [Tier: TierRoster]? = nil,
        failure: @escaping @Sendable (Call) -> TribunalError? = { _ in nil }
    ) {
        self.recorder = recorder
        self.agreement = agreement
        self.verdict = verdict
        self.scoreMeaning = scoreMeaning
        self.endpoint = endpoint
        self.rosters = rosters
        self.failure = failure
    }

    public func roster(for tier: Tier) -> TierRoster? { rosters?[tier] }

    /// Answers with the deterministic `[action:arg@tier] text` format.
    public func quick(_ request: QuickRequest) async throws(TribunalError) -> QuickResult {
        await recorder.record(.quick(request))
        if let error = failure(.quick(request)) { throw error }
        let tier = request.tier.rawValue
        let tag: String =
            switch request.action {
            case .translate(let language): "translate:\(language.code)@\(tier)"
            case .rewrite(let style): "rewrite:\(style?.rawValue ?? "clearer")@\(tier)"
            default: "\(request.action.name)@\(tier)"
            }
        let model = rosters?[request.tier]?.writers.first?.name ?? "scripted-\(tier)"
        return QuickResult(
            text: "[\(tag)] \(request.text)", model: model, elapsed: .milliseconds(10), usage: [Self.quickUsage(model: model)])
    }

    /// Answers with `agreement(claim, tier)` and one dissenter below 0.7.
    public func consensus(_ request: ConsensusRequest) async throws(TribunalError) -> ConsensusResult {
        await recorder.record(.consensus(request))
        if let error = failure(.consensus(request)) { throw error }
        let k = min(10, max(2, request.k))
        let score = min(1, max(0, agreement(request.claim, request.tier)))
        let rostered = rosters?[request.tier]?.judges(k: request.k).map(\.name)
        let models = rostered ?? (1...k).map { "scripted/model-\($0)" }
        let dissent =
            score < 0.7
            ? [Dissent(model: models[models.count - 1], verdict: verdict.map(Self.opposite), reason: "Not convinced by: \(request.claim)")]
            : []
        return ConsensusResult(
            answer: "Consensus (\(request.tier.rawValue)): \(request.claim)",
            verdict: verdict, agreement: score, confidence: score, answered: models.count, asked: models.count,
            dissent: dissent, models: models, elapsed: .milliseconds(20), scoreMeaning: scoreMeaning,
            usage: models.map(Self.judgeUsage(model:)))
    }

    /// What each quick answer reports it used: 100 tokens in, 20 out, priced at $0.0004.
    public static func quickUsage(model: String) -> ModelUsage {
        ModelUsage(model: model, tokensIn: 100, tokensOut: 20, estimated: false, cost: 0.0004, elapsed: .milliseconds(10))
    }

    /// What each judge of a consensus reports: 50 in, 10 out, estimated, with no price.
    public static func judgeUsage(model: String) -> ModelUsage {
        ModelUsage(model: model, tokensIn: 50, tokensOut: 10, estimated: true, elapsed: .milliseconds(20))
    }

    /// Answers `ok`.
    public func health() async throws(TribunalError) -> BackendHealth {
        await recorder.record(.health)
        if let error = failure(.health) { throw error }
        return BackendHealth(endpoint: endpoint, status: "ok", detail: "scripted")
    }

    private static func opposite(_ verdict: Verdict) -> Verdict {
        verdict == .true ? .false : .true
    }
}
