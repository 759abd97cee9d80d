/// The most tokens a model is asked to write (`max_tokens`): the council asks no more, and the
/// budget's estimate of a run (`CostEstimate`) counts this much as the worst case.
public enum AnswerLengths {
    /// A quick action's answer, a chain step's.
    public static let quick = 1024
    /// A judge's verdict, and the chairman's synthesis.
    public static let verdict = 400
}
