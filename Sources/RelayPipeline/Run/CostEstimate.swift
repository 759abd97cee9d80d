import RelayCore

/// What a run may cost at most, before it runs: what admission holds of its team's budget
/// (`BudgetHold`). Deliberately high — every answer as long as the model may write it, at the
/// dearest price of the models that may answer — so that the runs a budget admits cannot
/// together spend past it; the hold goes when the run ends and its real cost is written.
enum CostEstimate {
    /// Tokens of the prompts' framing (system prompt, instructions) besides the text.
    static let framing = 300

    /// One quick answer over `text` tokens: the dearest of the tier's writers (a later one
    /// answers when the first fails).
    static func quick(_ text: Int, _ roster: TierRoster) -> Double {
        roster.writers.compactMap(\.price).map { $0.cost(tokensIn: text + framing, tokensOut: AnswerLengths.quick) }.max() ?? 0
    }

    /// A consensus of `k` judges — the `k` dearest, as the tier may not be known — and a
    /// chairman (the dearest model, as the roster does not say which one writes).
    static func consensus(_ text: Int, _ roster: TierRoster, k: Int) -> Double {
        let judges = roster.judges.compactMap(\.price).map { $0.cost(tokensIn: text + framing, tokensOut: AnswerLengths.verdict) }
            .sorted(by: >).prefix(max(1, k))
        let chairman = roster.judges.compactMap(\.price).map { $0.cost(tokensIn: text * (k + 1) + framing, tokensOut: AnswerLengths.verdict) }
        return judges.reduce(0, +) + (chairman.max() ?? 0)
    }
}
