import RelayCore

/// What the Rhea gateway's calls used. The gateway prices its own calls and counts tokens only in
/// `/tribunal`'s `tokens_used` (in and out together), so its usage is always an estimate: the
/// prompt's tokens from its length, the answer's from `tokens_used` less those where it is given,
/// from the answer's length where not; no price (docs/admin.md, "Usage").
enum RheaUsage {
    static func quick(_ request: QuickRequest, answer: String, model: String?, elapsed: Duration) -> ModelUsage {
        .counted(model: named(model), reportedIn: nil, reportedOut: nil, prompt: [request.text], answer: answer, price: nil, elapsed: elapsed)
    }

    /// Every response that answered, one call each.
    static func tribunal(_ responses: [RheaWire.ModelResponse], claim: String) -> [ModelUsage] {
        responses.prefix(ConsensusMapping.Limits.responses).filter { !$0.failed }.map { response in
            let tokensIn = TokenEstimate.prompt([claim])
            let total = UntrustedNumber.checked(response.tokensUsed, in: ModelUsage.plausibleTokens, source: "rhea", field: "tokens_used")
            let tokensOut = total.map { max($0 - tokensIn, 0) } ?? TokenEstimate.text(response.text ?? "")
            let latency = UntrustedNumber.seconds(response.latencyS, in: ConsensusMapping.Limits.elapsed, source: "rhea", field: "latency_s")
            return ModelUsage(model: named(response.displayName), tokensIn: tokensIn, tokensOut: tokensOut, estimated: true, elapsed: latency ?? .zero)
        }
    }

    /// `/dialog` names no model and counts nothing: each of the models that answered, estimated
    /// from the claim and the reply.
    static func dialog(claim: String, reply: String, answered: Int, elapsed: Duration) -> [ModelUsage] {
        (0..<max(answered, 0)).map { _ in
            .counted(model: "rhea", reportedIn: nil, reportedOut: nil, prompt: [claim], answer: reply, price: nil, elapsed: elapsed)
        }
    }

    private static func named(_ model: String?) -> String {
        // The gateway's text: kept short, as it is shown in `/usage` and stored per call.
        guard let model = model?.trimmingWhitespace, !model.isEmpty else { return "rhea" }
        return String(model.prefix(100))
    }
}
