public import RelayCore

/// Every prompt the council sends, in one place. Bump `version` when any text changes, so
/// answers in history can be traced to the prompts that produced them.
public enum CouncilPrompts {
    public static let version = "council-prompts/1"

    /// The system prompt for a quick action; the user message is the text itself.
    public static func quick(_ action: QuickAction) -> String {
        let rule = "Answer with the result only: no preamble, no quotes, no explanation unless asked."
        switch action {
        case .translate(let language):
            return "Translate the user's text into \(language.name). Keep meaning, tone and formatting. \(rule)"
        case .grammar:
            return "Fix the grammar, spelling and punctuation of the user's text. Change nothing else. \(rule)"
        case .rewrite(let style):
            let how: String =
                switch style {
                case .formal: "in a formal register"
                case .casual: "in a casual, relaxed register"
                case .shorter: "shorter, keeping every essential point"
                case .longer: "longer, adding helpful detail without padding"
                case .friendly: "in a warm, friendly tone"
                case .professional: "in a clear, professional tone"
                case nil: "more clearly"
                }
            return "Rewrite the user's text \(how), in the same language. \(rule)"
        case .summarize:
            return "Summarize the user's text in a few sentences or bullet points, in its language. \(rule)"
        case .explain:
            return "Explain the user's text simply, as to a smart newcomer, in a short paragraph."
        case .extract:
            return "List the key facts and the action items (with owners and dates when stated) of the user's text as short bullets."
        case .freeform:
            return "You are a helpful assistant in a team chat. Answer concisely."
        }
    }

    /// What each judge is asked for a consensus.
    public static let judgeSystem = """
        You are one judge on a panel that checks claims independently. Judge the user's claim and \
        reply with JSON only, no other text:
        {"verdict": "true" | "false" | "partly" | "unverifiable", "confidence": <number from 0 to 1>, "answer": "<one or two sentences: the correct facts>"}
        """

    /// The chairman's synthesis of the judges' answers.
    public static func chairman(claim: String, verdict: Verdict?, answers: [(model: String, verdict: Verdict?, answer: String)]) -> [ChatMessage] {
        let lines = answers.map { "- \($0.model) (\($0.verdict?.rawValue ?? "no verdict")): \($0.answer)" }.joined(separator: "\n")
        let system =
            "You chair a panel of judges. Write the panel's answer to the claim in two or three sentences: state what is correct, mention a real disagreement if there is one. Plain text only."
        let user = "Claim: \(claim)\nPanel verdict: \(verdict?.rawValue ?? "none")\nJudges:\n\(lines)"
        return [.system(system), .user(user)]
    }
}
