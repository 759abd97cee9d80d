/// The backend protocol: one model for one action, or several models for a consensus.
///
/// Implementations: the Rhea Tribunal HTTP client, the built-in council, and test fakes.
/// A backend knows nothing of chat: it gets text and returns text and scores.
public protocol Tribunal: Sendable {
    /// One model, one action.
    func quick(_ request: QuickRequest) async throws(TribunalError) -> QuickResult
    /// One model, one action, shown as it is written: `onText` gets the whole text so far each
    /// time it grows, then the result comes as from `quick`. A backend that cannot stream (the
    /// Rhea gateway's routes) answers whole, `onText` never called.
    func quick(_ request: QuickRequest, streaming onText: @escaping PartialText) async throws(TribunalError) -> QuickResult
    /// Several models judge one claim; the result carries their agreement.
    func consensus(_ request: ConsensusRequest) async throws(TribunalError) -> ConsensusResult
    /// The same, telling `onVote` how many of the asked models are done each time one is. A
    /// backend that cannot tell (the Rhea gateway) answers as `consensus`, `onVote` never called.
    func consensus(_ request: ConsensusRequest, onVote: @escaping VoteCount) async throws(TribunalError) -> ConsensusResult
    /// Whether the backend answers at all, for `/readyz` and the CLI's start-up message.
    func health() async throws(TribunalError) -> BackendHealth
    /// What the backend has learned of its judges (`/council`); nil when it keeps no such record
    /// (the Rhea gateway picks its own models).
    func councilReport() async -> CouncilReport?
    /// Who answers and who judges at `tier`; nil when the backend picks its own models.
    func roster(for tier: Tier) -> TierRoster?
}

extension Tribunal {
    public func councilReport() async -> CouncilReport? { nil }

    public func roster(for tier: Tier) -> TierRoster? { nil }

    public func quick(_ request: QuickRequest, streaming onText: @escaping PartialText) async throws(TribunalError) -> QuickResult {
        try await quick(request)
    }

    public func consensus(_ request: ConsensusRequest, onVote: @escaping VoteCount) async throws(TribunalError) -> ConsensusResult {
        try await consensus(request)
    }
}

/// Receives a model's answer so far, each time it grows, while the model writes it.
public typealias PartialText = @Sendable (String) async -> Void

/// Receives how many of the asked models are done (answered or failed), each time one is.
public typealias VoteCount = @Sendable (_ done: Int, _ asked: Int) async -> Void

/// What a quick request asks the model to do with the text.
public enum QuickAction: Sendable, Hashable, Codable {
    case translate(to: Language)
    case grammar
    /// Rewrite in a style; nil means "clearer".
    case rewrite(style: RewriteStyle?)
    case summarize
    case explain
    /// Key facts and action items.
    case extract
    /// The text is the whole prompt.
    case freeform

    /// A short stable name, for logs, metrics and history.
    public var name: String {
        switch self {
        case .translate: "translate"
        case .grammar: "grammar"
        case .rewrite: "rewrite"
        case .summarize: "summarize"
        case .explain: "explain"
        case .extract: "extract"
        case .freeform: "freeform"
        }
    }
}

/// The rewrite styles every backend understands.
public enum RewriteStyle: String, Sendable, Hashable, CaseIterable, Codable {
    case formal, casual, shorter, longer, friendly, professional
}

public struct QuickRequest: Sendable, Hashable {
    public var action: QuickAction
    public var text: String
    public var tier: Tier

    public init(action: QuickAction, text: String, tier: Tier = .cheap) {
        self.action = action
        self.text = text
        self.tier = tier
    }
}

public struct QuickResult: Sendable, Hashable {
    /// The model's answer.
    public var text: String
    /// The model that answered, when the backend says.
    public var model: String?
    /// Wall time in seconds.
    public var elapsed: Duration
    /// The calls that answered: one, or more where a backend tried another first.
    public var usage: [ModelUsage]

    public init(text: String, model: String? = nil, elapsed: Duration, usage: [ModelUsage] = []) {
        self.text = text
        self.model = model
        self.elapsed = elapsed
        self.usage = usage
    }
}

public struct ConsensusRequest: Sendable, Hashable {
    /// The claim or question the models judge.
    public var claim: String
    /// How many models to ask (2–10).
    public var k: Int
    public var tier: Tier
    /// Fact-checks of the same run that are not in the ledger yet (a run writes its fact-checks
    /// with its reply, at its end), newest first: a backend that learns from the ledger (the
    /// council) learns from these as if they were, so a chain's second verify gate knows its
    /// first as the served API, which writes each at once, would.
    public var unwrittenFactChecks: [LedgerEntry]

    public init(claim: String, k: Int = 3, tier: Tier = .cheap, unwrittenFactChecks: [LedgerEntry] = []) {
        self.claim = claim
        self.k = k
        self.tier = tier
        self.unwrittenFactChecks = unwrittenFactChecks
    }
}

/// A verdict on a claim, where the backend gives one (the council does; Rhea's gateway does not).
public enum Verdict: String, Sendable, Hashable, Codable, CaseIterable {
    case `true`, `false`, partly, unverifiable

    /// Whether a `verify` gate may pass on this verdict.
    public var isAffirmative: Bool { self == .true }
}

extension Verdict {
    /// The verdict a Rhea gateway stance label implies (`stance_summary`): affirmative → true,
    /// negative → false, qualified or mixed → partly; neutral and anything else imply none.
    public init?(stance label: String) {
        switch label.trimmingWhitespace().lowercased() {
        case "affirmative": self = .true
        case "negative": self = .false
        case "qualified", "mixed": self = .partly
        default: return nil
        }
    }

    /// The stance label a verdict is written as (`neutral` for unverifiable).
    public var stance: String {
        switch self {
        case .true: "affirmative"
        case .false: "negative"
        case .partly: "qualified"
        case .unverifiable: "neutral"
        }
    }
}

/// What the agreement number means: backends differ, and the reply must say so honestly.
public enum ScoreMeaning: String, Sendable, Hashable, Codable {
    /// The models' agreement with each other.
    case agreement
    /// Only the share of asked models that answered (Rhea's `/dialog`).
    case answeredShare
    /// The probability that the verdict is right: the council's votes weighted by what the ledger
    /// taught it of each model, calibrated against the ledger's history (issue 14).
    case probabilityRight
}

/// A model that disagreed with the plurality, and why, in one line.
public struct Dissent: Sendable, Hashable, Codable {
    public var model: String
    public var verdict: Verdict?
    public var reason: String

    public init(model: String, verdict: Verdict? = nil, reason: String) {
        self.model = model
        self.verdict = verdict
        self.reason = reason
    }
}

/// What one asked model did: its verdict and answer, or why it gave none. Kept so a consensus can
/// be shown judge by judge (the served Rhea API's `responses` and `stance_summary`).
public struct JudgeVote: Sendable, Hashable {
    public var model: String
    public var verdict: Verdict?
    /// The confidence the model stated, 0…1, when it stated one.
    public var confidence: Double?
    /// Its answer text; empty when it failed.
    public var answer: String
    public var latency: Duration?
    /// Why it gave no answer, in words safe to show (no address, no provider text); nil when it answered.
    public var error: String?

    public init(model: String, verdict: Verdict? = nil, confidence: Double? = nil, answer: String, latency: Duration? = nil, error: String? = nil) {
        self.model = model
        self.verdict = verdict
        self.confidence = confidence
        self.answer = answer
        self.latency = latency
        self.error = error
    }
}

public struct ConsensusResult: Sendable, Hashable {
    /// The consensus answer or summary text.
    public var answer: String
    public var verdict: Verdict?
    /// 0…1; see `scoreMeaning`.
    public var agreement: Double
    public var confidence: Double?
    public var answered: Int
    public var asked: Int
    public var dissent: [Dissent]
    /// Models that answered, by name, when known.
    public var models: [String]
    /// Wall time in seconds.
    public var elapsed: Duration
    public var scoreMeaning: ScoreMeaning
    /// Every asked model, answering or not, in the order asked (empty when the backend does not say).
    public var judges: [JudgeVote]
    /// Which backend judged (`council`, `rhea`), for the ledger.
    public var backend: String
    /// How many answering models gave `verdict` ("3 of 4 agree"), when the backend counts them.
    public var agreeing: Int?
    /// The version of the prompts the judges were given, when the backend says.
    public var promptsVersion: String?
    /// Every call that answered: the judges', and the chairman's where one wrote.
    public var usage: [ModelUsage]

    public init(
        answer: String, verdict: Verdict? = nil, agreement: Double, confidence: Double? = nil,
        answered: Int, asked: Int, dissent: [Dissent] = [], models: [String] = [],
        elapsed: Duration, scoreMeaning: ScoreMeaning = .agreement, judges: [JudgeVote] = [],
        backend: String = "unknown", promptsVersion: String? = nil, agreeing: Int? = nil, usage: [ModelUsage] = []
    ) {
        self.usage = usage
        self.answer = answer
        self.verdict = verdict
        self.agreement = agreement
        self.confidence = confidence
        self.answered = answered
        self.asked = asked
        self.dissent = dissent
        self.models = models
        self.elapsed = elapsed
        self.scoreMeaning = scoreMeaning
        self.judges = judges
        self.backend = backend
        self.promptsVersion = promptsVersion
        self.agreeing = agreeing
    }
}

public struct BackendHealth: Sendable, Hashable {
    /// Where the backend lives, for messages (a URL, or "council of 5 models").
    public var endpoint: String
    public var status: String
    public var detail: String?

    public init(endpoint: String, status: String, detail: String? = nil) {
        self.endpoint = endpoint
        self.status = status
        self.detail = detail
    }
}
