/// The one wording of a consensus's score, wherever it shows: a reply's footer, `/history`, the
/// ledger, a chain's `verify`, `/help tribunal` (docs/council.md, "What the score says").
///
/// Two figures, never one called the other: the probability that the verdict is right (the
/// council that learns from its ledger: "87% likely right") and the share of the answering
/// models that agree ("3 of 4 agree"), or, from a backend that scores their agreement itself,
/// that score ("Agreement 82%"). When no model gave a verdict there is nothing to be right
/// about: "No verdict", with no figure.
public enum ScoreWords {
    public static let noVerdict = "No verdict"

    /// "87% likely right", "No verdict", "Agreement 82%", "Answered 100%".
    public static func score(_ value: Double, meaning: ScoreMeaning, verdict: Verdict?) -> String {
        let percent = "\(Int((value * 100).rounded()))%"
        switch meaning {
        case .probabilityRight: return verdict == nil ? noVerdict : "\(percent) likely right"
        case .agreement: return "Agreement \(percent)"
        case .answeredShare: return "Answered \(percent)"
        }
    }

    /// "3 of 4 agree": beside a probability, how many of the answering models gave the verdict.
    public static func agreeing(_ agreeing: Int, of answered: Int) -> String {
        "\(agreeing) of \(answered) agree"
    }

    /// The score with its share beside it where the reply shows both: "87% likely right · 3 of 4 agree".
    public static func line(_ value: Double, meaning: ScoreMeaning, verdict: Verdict?, agreeing: Int?, answered: Int) -> String {
        let score = score(value, meaning: meaning, verdict: verdict)
        guard let agreeing, meaning == .probabilityRight, verdict != nil else { return score }
        return "\(score) · \(Self.agreeing(agreeing, of: answered))"
    }

    /// The same in the middle of a sentence: "87% likely right", "agreement 82%", "no verdict".
    public static func inSentence(_ value: Double, meaning: ScoreMeaning, verdict: Verdict?) -> String {
        let words = score(value, meaning: meaning, verdict: verdict)
        return words.prefix(1).lowercased() + words.dropFirst()
    }
}
