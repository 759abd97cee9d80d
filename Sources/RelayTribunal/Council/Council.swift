import Foundation
public import Logging
public import RelayCore
import Synchronization

/// The built-in tribunal: any OpenAI-compatible models, asked one at a time (`quick`) or in
/// parallel for a verdict (`consensus`). See docs/council.md for the formula.
public final class Council: Tribunal, Sendable {
    public let configuration: CouncilConfiguration
    let client: OpenAICompatibleClient
    let logger: Logger
    /// What the ledger taught of the judges; nil: the agreement formula, as before the ledger.
    let reliability: CouncilReliability?
    /// What the consensus deadline is measured on, so a test can move it past the deadline.
    let clock: any RelayClock

    public init(
        configuration: CouncilConfiguration, client: OpenAICompatibleClient, logger: Logger, reliability: CouncilReliability? = nil,
        clock: any RelayClock = SystemClock()
    ) {
        self.configuration = configuration
        self.client = client
        self.logger = logger
        self.reliability = reliability
        self.clock = clock
    }

    public func roster(for tier: Tier) -> TierRoster? { configuration.roster(for: tier) }

    // MARK: quick

    /// One model of the tier (the next one on failure); the result names the model that answered.
    public func quick(_ request: QuickRequest) async throws(TribunalError) -> QuickResult {
        try await quick(request, streaming: nil)
    }

    /// The same, streamed: `onText` gets the answer as the model writes it. A model that fails
    /// before writing anything passes the request to the next; one that fails midway ends it
    /// (what it wrote was shown, and another model's answer would not continue it).
    public func quick(_ request: QuickRequest, streaming onText: @escaping PartialText) async throws(TribunalError) -> QuickResult {
        try await quick(request, streaming: .some(onText))
    }

    private func quick(_ request: QuickRequest, streaming onText: PartialText?) async throws(TribunalError) -> QuickResult {
        let candidates = configuration.writers(for: request.tier)
        guard !candidates.isEmpty else { throw .notConfigured(detail: "the council has no models; add some under council.models.") }
        let started = ContinuousClock.now
        var failures: [(CouncilModel, ModelCallError)] = []
        for model in candidates {
            let messages: [ChatMessage] = [.system(CouncilPrompts.quick(request.action)), .user(request.text)]
            let wrote = WroteFlag()
            do throws(ModelCallError) {
                let completion: ChatCompletion
                if let onText, model.stream {
                    completion = try await client.stream(
                        model, messages: messages, temperature: 0.3, maxTokens: AnswerLengths.quick, timeout: timeout(for: model)
                    ) { text in
                        wrote.set()
                        await onText(text)
                    }
                } else {
                    completion = try await client.complete(
                        model, messages: messages, temperature: 0.3, maxTokens: AnswerLengths.quick, timeout: timeout(for: model))
                }
                return QuickResult(text: completion.text, model: model.name, elapsed: started.duration(to: .now), usage: [completion.usage])
            } catch {
                logger.warning("council model failed", metadata: ["model": "\(model.name)", "reason": "\(error.reason)"])
                failures.append((model, error))
                if error == .cancelled || wrote.isSet { break }
            }
        }
        throw Self.combined(failures)
    }

    /// One error for a run of failures: the last one's kind, every model's reason.
    static func combined(_ failures: [(CouncilModel, ModelCallError)]) -> TribunalError {
        let (lastModel, lastError) = failures.last!
        if failures.count == 1 {
            return lastError.tribunalError(modelName: lastModel.name, url: lastModel.baseURL, ownTimeout: lastModel.timeout != nil)
        }
        let reasons = failures.map { "\($0.0.name): \($0.1.reason)" }.joined(separator: "; ")
        return .providerFailed(detail: "all \(failures.count) models failed (\(reasons))")
    }

    func timeout(for model: CouncilModel) -> Duration {
        model.timeout ?? configuration.defaultTimeout
    }

    /// Whether a streamed answer showed any text yet.
    private final class WroteFlag: Sendable {
        private let value = Mutex(false)
        func set() { value.withLock { $0 = true } }
        var isSet: Bool { value.withLock { $0 } }
    }

    // MARK: what it learned

    /// Each configured model's learned accuracy, verdicts judged and weight (`/council`).
    public func councilReport() async -> CouncilReport? {
        let priorWeights = Dictionary(configuration.models.map { ($0.name, $0.weight) }, uniquingKeysWith: { first, _ in first })
        let snapshot =
            await reliability?.refreshed()
            ?? CouncilReliability.Snapshot(
                estimate: ReliabilityEstimate(prior: ReliabilityPrior(weights: priorWeights)), calibrator: ScoreCalibrator(samples: []), claims: 0,
                marked: 0)
        let judges = configuration.models.map { model in
            let record = snapshot.estimate.reliability(of: model.name)
            return CouncilReport.Judge(
                model: model.name, tier: model.tier, accuracy: record.accuracy, spread: record.spread, judged: record.votes,
                weight: CouncilReliability.weight(accuracy: record.accuracy), configuredWeight: model.weight,
                repeats: snapshot.estimate.repeats(of: model.name))
        }
        let calibration =
            if reliability == nil {
                "agreement: the share of the judges' weight × confidence behind the verdict (this council does not learn from a ledger)."
            } else if snapshot.marked == 0 {
                "the probability that the verdict is right, from the models' learned records and how sure they are (the panel view weighs \(Int((snapshot.estimate.panelWeight * 100).rounded()))%); no fact-check is marked yet, so it is not yet checked against people's marks (`/ledger mark ID true|false|partly`)."
            } else {
                "the probability that the verdict is right, from the models' learned records and how sure they are (the panel view weighs \(Int((snapshot.estimate.panelWeight * 100).rounded()))%), rescaled to match \(snapshot.marked) fact-check\(snapshot.marked == 1 ? "" : "s") people marked."
            }
        return CouncilReport(judges: judges, claims: snapshot.claims, marked: snapshot.marked, calibration: calibration)
    }

    // MARK: health

    /// The council is as healthy as its configuration: it does not spend model calls on probes.
    public func health() async throws(TribunalError) -> BackendHealth {
        guard !configuration.models.isEmpty else { throw .notConfigured(detail: "the council has no models; add some under council.models.") }
        return BackendHealth(endpoint: "council of \(configuration.summary)", status: "ok", detail: "not probed")
    }
}
