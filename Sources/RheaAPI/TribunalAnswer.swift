import RelayCore

/// A consensus as the gateway's `/tribunal` answer (contract §2.3), judge by judge.
///
/// `stance_summary` gives each answering judge's verdict as the gateway's stance labels, so a
/// client that derives verdicts from stances (ours does, `StanceVerdict`) reads the same verdict;
/// `verdict` (not in the gateway's contract; other clients ignore unknown fields) carries the
/// backend's own, which weighs votes. `divergence_points` name each dissenter and its reason in
/// the gateway's `[model only] sentence` form. As on the gateway, `models_queried` counts the
/// models that answered; `responses` lists every model asked.
///
/// `agreement_score` is what the gateway's is, agreement among the models: the share of those
/// that answered which gave the verdict. The built-in council's calibrated probability that the
/// verdict is right goes in `confidence` — a client that read it as `agreement_score` would take
/// "87 % likely right" for "87 % agree". `score_meaning` (not in the contract either) says which
/// the relay's own score is, so a relay reading another relay shows what the council showed.
enum TribunalAnswer {
    static func body(_ result: ConsensusResult, prompt: String, k: Int, mode: String, backend: String) -> JSONValue {
        let judges =
            result.judges.isEmpty
            ? result.models.map { JudgeVote(model: $0, verdict: nil, answer: result.answer) } : result.judges
        var stances: [String: JSONValue] = [:]
        for judge in judges where judge.error == nil {
            let label = judge.verdict?.stance ?? "neutral"
            var entry: [String: JSONValue] = ["stance": .string(label), "affirmative": 0.0, "negative": 0.0, "qualified": 0.0]
            if label != "neutral" { entry[label] = .double(((judge.confidence ?? 0.5) * 100 * 1000).rounded() / 1000) }
            stances[judge.model] = .object(entry)
        }
        let supporters = judges.filter { $0.error == nil && $0.verdict == result.verdict && result.verdict != nil }.map(\.model)
        let agreementPoints: [JSONValue] =
            supporters.count >= 2 ? [.string("[\(supporters.joined(separator: ", "))] \(firstLine(result.answer))")] : []
        let divergencePoints: [JSONValue] = result.dissent.map { .string("[\($0.model) only] \($0.reason)") }
        let responses: [JSONValue] = judges.map { judge in
            [
                "model": .string(judge.model), "provider": "", "text": .string(judge.answer),
                "latency_s": .double(judge.latency.map { ($0.seconds * 100).rounded() / 100 } ?? 0), "tokens_used": .null,
                "error": judge.error.map(JSONValue.string) ?? .null,
            ]
        }
        return [
            "prompt": .string(prompt), "k": .int(k), "mode": .string(mode), "elapsed_s": .double((result.elapsed.seconds * 100).rounded() / 100),
            "consensus": .string(result.answer), "agreement_score": .double(agreementScore(result)),
            "confidence": confidence(result).map(JSONValue.double) ?? .null,
            "models_responded": .int(result.answered), "models_queried": .int(result.answered),
            "analysis_method": .string("rhea-relay \(backend)"), "agreement_points": .array(agreementPoints),
            "divergence_points": .array(divergencePoints), "stance_summary": .object(stances), "responses": .array(responses),
            "math_verification": [:], "meta": ["models_asked": .int(result.asked)],
            "verdict": result.verdict.map { .string($0.rawValue) } ?? .null,
            "score_meaning": .string(result.scoreMeaning.rawValue),
        ]
    }

    /// The share of answering models that agree with the verdict.
    static func agreementScore(_ result: ConsensusResult) -> Double {
        guard let agreeing = result.agreeing, result.answered > 0 else { return result.agreement }
        return Double(agreeing) / Double(result.answered)
    }

    /// The probability the verdict is right where the backend computes one; else what it reported.
    static func confidence(_ result: ConsensusResult) -> Double? {
        result.scoreMeaning == .probabilityRight ? result.agreement : result.confidence
    }

    static func firstLine(_ text: String) -> String {
        let line = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        return line.count > 200 ? String(line.prefix(199)) + "…" : line
    }
}
