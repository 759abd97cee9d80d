import RelayCore

/// Finds the models that took another stance than the plurality in a `/tribunal` answer,
/// each with a one-line reason.
enum DissentFinder {
    /// The longest reason kept; a chat line, not a paragraph.
    static let maxReasonLength = 140

    /// - Parameters:
    ///   - stances: `stance_summary`, model name → stance label.
    ///   - verdict: the answer's verdict (`StanceVerdict`); a model whose stance implies another
    ///     verdict dissents. Without one, a model whose label differs from the most common dissents.
    ///   - divergencePoints: lines like `[openai/gpt-4o-mini only] <sentence>`.
    ///   - answering: the responses without error, in the server's order.
    static func dissent(
        stances: [String: RheaWire.Stance],
        verdict: Verdict? = nil,
        divergencePoints: [String],
        answering: [RheaWire.ModelResponse]
    ) -> [Dissent] {
        let labels = labels(stances: stances, answering: answering)
        guard labels.count >= 2 else { return [] }

        var counts: [String: Int] = [:]
        for label in labels { counts[label.stance, default: 0] += 1 }
        let top = counts.values.max() ?? 0
        guard let plurality = labels.first(where: { counts[$0.stance] == top })?.stance else { return [] }

        let dissenting: [(name: String, stance: String, verdict: Verdict?)]
        if let verdict {
            dissenting = labels.compactMap { label in
                Verdict(stance: label.stance).flatMap { $0 == verdict ? nil : (label.name, label.stance, $0) }
            }
        } else {
            dissenting = labels.filter { $0.stance != plurality }.map { ($0.name, $0.stance, nil) }
        }
        let majority = verdict?.stance ?? plurality
        return dissenting.map { label in
            let reason =
                divergenceReason(for: label.name, in: divergencePoints)
                ?? firstSentence(of: answering.first { $0.displayName == label.name }?.text)
                ?? "took a \(label.stance) position where most took \(majority)"
            return Dissent(model: label.name, verdict: label.verdict, reason: shorten(reason))
        }
    }

    /// Each model's stance label: the answering models in response order (so ties resolve the
    /// same way each time), or every labelled model by name when no response names one.
    static func labels(stances: [String: RheaWire.Stance], answering: [RheaWire.ModelResponse]) -> [(name: String, stance: String)] {
        let answeringNames = answering.compactMap(\.displayName)
        var labels: [(name: String, stance: String)] = []
        for name in answeringNames.isEmpty ? stances.keys.sorted() : answeringNames {
            if let stance = stances[name]?.stance?.trimmingWhitespace, !stance.isEmpty {
                labels.append((name, stance))
            }
        }
        return labels
    }

    /// The text of the first divergence line whose `[...]` prefix names `model`.
    static func divergenceReason(for model: String, in lines: [String]) -> String? {
        let bare = model.split(separator: "/").last.map(String.init) ?? model
        for line in lines {
            let trimmed = line.trimmingWhitespace
            guard trimmed.hasPrefix("["), let close = trimmed.firstIndex(of: "]") else { continue }
            let names = trimmed[trimmed.index(after: trimmed.startIndex)..<close]
                .split(separator: ",")
                .map { name in
                    var name = String(name).trimmingWhitespace
                    if name.hasSuffix(" only") { name = String(name.dropLast(" only".count)).trimmingWhitespace }
                    return name
                }
            guard names.contains(where: { $0 == model || $0 == bare }) else { continue }
            let text = String(trimmed[trimmed.index(after: close)...]).trimmingWhitespace
            if !text.isEmpty { return text }
        }
        return nil
    }

    /// The first sentence (up to `.`, `!`, `?` followed by a space, or a line break).
    static func firstSentence(of text: String?) -> String? {
        guard let text = text?.trimmingWhitespace, !text.isEmpty else { return nil }
        var end = text.endIndex
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if character.isNewline {
                end = index
                break
            }
            let next = text.index(after: index)
            if ".!?".contains(character), next == text.endIndex || text[next].isWhitespace {
                end = next
                break
            }
            index = next
        }
        let sentence = String(text[..<end]).trimmingWhitespace
        return sentence.isEmpty ? nil : sentence
    }

    static func shorten(_ text: String) -> String {
        let line = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        guard line.count > maxReasonLength else { return line }
        return String(line.prefix(maxReasonLength - 1)).trimmingWhitespace + "…"
    }
}

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
