import Foundation
public import RelayCore

/// What one model said about a claim, read from its text.
public struct ParsedVerdict: Sendable, Hashable {
    /// nil: the model answered but gave no readable verdict.
    public var verdict: Verdict?
    /// 0…1; nil when the model gave none.
    public var confidence: Double?
    /// The model's short answer (the JSON `answer`, else its whole text).
    public var answer: String

    public init(verdict: Verdict?, confidence: Double?, answer: String) {
        self.verdict = verdict
        self.confidence = confidence
        self.answer = answer
    }
}

/// Reads a verdict from a model's text: a JSON object anywhere in it (fenced, in prose, or
/// alone), else keywords, else nothing.
public enum VerdictParser {
    public static func parse(_ text: String) -> ParsedVerdict {
        for candidate in jsonObjects(in: text) {
            if let parsed = fromJSON(candidate) { return parsed }
        }
        return ParsedVerdict(verdict: keywordVerdict(text), confidence: nil, answer: text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Most candidate objects tried, and most characters stepped over while finding them: a
    /// model's text is untrusted, and deeply nested braces would otherwise cost time quadratic
    /// in its length (each `{` starts a scan to its matching `}`).
    static let maxCandidates = 16
    static let scanBudget = 200_000

    /// Balanced `{…}` substrings, outermost first, respecting JSON strings and escapes; at most
    /// `maxCandidates`, found within `scanBudget` steps.
    static func jsonObjects(in text: String) -> [Substring] {
        var found: [Substring] = []
        var index = text.startIndex
        var budget = scanBudget
        while found.count < maxCandidates, let open = text[index...].firstIndex(of: "{") {
            var depth = 0
            var inString = false
            var escaped = false
            var end: String.Index?
            var cursor = open
            while cursor < text.endIndex, budget > 0 {
                budget -= 1
                let char = text[cursor]
                if inString {
                    if escaped { escaped = false } else if char == "\\" { escaped = true } else if char == "\"" { inString = false }
                } else if char == "\"" {
                    inString = true
                } else if char == "{" {
                    depth += 1
                } else if char == "}" {
                    depth -= 1
                    if depth == 0 {
                        end = cursor
                        break
                    }
                }
                cursor = text.index(after: cursor)
            }
            guard let end else { break }
            found.append(text[open...end])
            index = text.index(after: open)
        }
        return found
    }

    private static func fromJSON(_ candidate: Substring) -> ParsedVerdict? {
        guard let data = candidate.data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        let lowered = Dictionary(object.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
        guard let rawVerdict = lowered["verdict"] else { return nil }
        let verdict: Verdict?
        switch rawVerdict {
        case let flag as Bool: verdict = flag ? .true : .false
        case let word as String: verdict = verdictWord(word)
        default: verdict = nil
        }
        let answer = (lowered["answer"] as? String) ?? (lowered["reason"] as? String) ?? (lowered["explanation"] as? String) ?? ""
        return ParsedVerdict(verdict: verdict, confidence: confidence(lowered["confidence"]), answer: answer.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// 0…1, or a percentage, or a numeric string.
    static func confidence(_ value: Any?) -> Double? {
        var number: Double?
        switch value {
        case let double as Double: number = double
        case let int as Int: number = Double(int)
        case let string as String: number = Double(string.trimmingCharacters(in: CharacterSet(charactersIn: " %")))
        default: number = nil
        }
        guard var number else { return nil }
        // "85" and "85%" are percentages.
        if number > 1, number <= 100 { number /= 100 }
        return UntrustedNumber.clamped(number, to: 0...1, source: "council", field: "confidence")
    }

    static func verdictWord(_ word: String) -> Verdict? {
        switch word.lowercased().trimmingCharacters(in: .whitespacesAndNewlines) {
        case "true", "yes", "correct", "accurate", "affirmative": .true
        case "false", "no", "incorrect", "inaccurate", "wrong", "negative": .false
        case "partly", "partial", "partially", "partly true", "partially true", "mixed", "qualified": .partly
        case "unverifiable", "unknown", "uncertain", "cannot verify", "not verifiable": .unverifiable
        default: nil
        }
    }

    /// Last resort for prose answers. Negations are checked before the words they contain.
    static func keywordVerdict(_ text: String) -> Verdict? {
        let lower = text.lowercased()
        let rules: [(Verdict, [String])] = [
            (.unverifiable, ["unverifiable", "cannot be verified", "can't be verified", "cannot verify", "can't verify", "not verifiable"]),
            (.partly, ["partly", "partially", "half true", "partly true", "mixed"]),
            (.false, ["not true", "false", "incorrect", "inaccurate", "not correct", "wrong"]),
            (.true, ["true", "correct", "accurate", "yes"]),
        ]
        for (verdict, words) in rules where words.contains(where: { lower.contains($0) }) {
            return verdict
        }
        return nil
    }
}
