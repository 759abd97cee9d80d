import RelayCore

/// Finds the models that took another stance than the plurality in a `/tribunal` answer,
/// each with a one-line reason.
enum DissentFinder {
    /// The longest reason kept; a chat line, not a paragraph.
    static let maxReasonLength = 140

    /// - Parameters:
    ///   - stances: `stance_summary`, model name → stance label.
    ///   - divergencePoints: lines like `[openai/gpt-4o-mini only] <sentence>`.
    ///   - answering: the responses without error, in the server's order.
    static func dissent(
        stances: [String: RheaWire.Stance],
        divergencePoints: [String],
        answering: [RheaWire.ModelResponse]
    ) -> [Dissent] {
        let answeringNames = answering.compactMap(\.displayName)
        var labels: [(name: String, stance: String)] = []
        // Answering models first, in response order, so that ties resolve the same way each time.
        for name in answeringNames {
            if let stance = stances[name]?.stance?.trimmingWhitespace, !stance.isEmpty {
                labels.append((name, stance))
            }
        }
        if answeringNames.isEmpty {
            for name in stances.keys.sorted() {
                if let stance = stances[name]?.stance?.trimmingWhitespace, !stance.isEmpty {
                    labels.append((name, stance))
                }
            }
        }
        guard labels.count >= 2 else { return [] }

        var counts: [String: Int] = [:]
        for label in labels { counts[label.stance, default: 0] += 1 }
        let top = counts.values.max() ?? 0
        guard let plurality = labels.first(where: { counts[$0.stance] == top })?.stance else { return [] }

        return labels.filter { $0.stance != plurality }.map { label in
            let reason =
                divergenceReason(for: label.name, in: divergencePoints)
                ?? firstSentence(of: answering.first { $0.displayName == label.name }?.text)
                ?? "took a \(label.stance) position where most took \(plurality)"
            return Dissent(model: label.name, verdict: nil, reason: shorten(reason))
        }
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
