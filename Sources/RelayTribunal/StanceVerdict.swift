import RelayCore

/// The verdict a Rhea gateway's `/tribunal` answer implies (issue 13, point 4).
///
/// The gateway gives scores and a stance per model (`stance_summary`), never a verdict; without
/// one a `verify` gate passed on agreement alone — models agreeing that a claim is false passed
/// it. Each answering model's stance label is read as a verdict, and the verdict is the one most
/// models hold:
///
///     affirmative → true     negative → false     qualified, mixed → partly
///     neutral, anything else → no verdict from that model
///
/// A tie between different verdicts is `partly` (the models are split: not a pass). A relay that
/// serves the API itself also sends its own `verdict` field, which wins when it is readable.
enum StanceVerdict {
    /// The verdict most models' stances imply; nil when no stance implies one.
    static func derive(_ verdicts: [Verdict]) -> Verdict? {
        var counts: [Verdict: Int] = [:]
        for verdict in verdicts { counts[verdict, default: 0] += 1 }
        guard let top = counts.values.max() else { return nil }
        let leaders = counts.filter { $0.value == top }.map(\.key)
        return leaders.count == 1 ? leaders[0] : .partly
    }
}
