import RelayCore

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
        return ConsensusResult(
            answer: answer,
            verdict: verdict,
            agreement: unit(response.agreementScore, field: "agreement_score") ?? 0,
            confidence: unit(response.confidence, field: "confidence"),
            answered: answered,
            asked: max(asked, answered),
            dissent: DissentFinder.dissent(
                stances: stances, verdict: verdict,
                divergencePoints: response.divergencePoints ?? [],
                answering: answering),
            models: models,
            elapsed: elapsed(response.elapsedS, measured: measured),
            scoreMeaning: .agreement,
            judges: responses.map { judge(of: $0, stances: stances) },
            backend: "rhea")
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
