import Foundation

extension StringProtocol {
    /// The text without leading and trailing whitespace or newlines.
    package func trimmingWhitespace() -> SubSequence {
        let start = firstIndex { !$0.isWhitespace } ?? endIndex
        let end = lastIndex { !$0.isWhitespace }.map { index(after: $0) } ?? start
        return self[start..<end]
    }

    /// Drops spaces and tabs (not newlines) at the end.
    func trimmingTrailingHorizontalSpace() -> SubSequence {
        var end = endIndex
        while end > startIndex {
            let before = index(before: end)
            guard self[before] == " " || self[before] == "\t" else { break }
            end = before
        }
        return self[startIndex..<end]
    }

    /// The first whitespace-delimited word and the rest (trimmed, newlines inside kept).
    func splitFirstWord() -> (String, String) {
        let trimmed = trimmingWhitespace()
        guard let end = trimmed.firstIndex(where: \.isWhitespace) else { return (String(trimmed), "") }
        return (String(trimmed[..<end]), String(trimmed[end...].trimmingWhitespace()))
    }

    func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : String(self)
    }
}

/// Levenshtein distance, for "did you mean".
package enum EditDistance {
    package static func between(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = previous
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
