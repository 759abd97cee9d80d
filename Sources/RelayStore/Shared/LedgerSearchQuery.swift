import Foundation

/// How `/ledger WORDS` searches claims: every word must match, as a prefix of a word in the
/// claim, ignoring case and diacritics. SQLite does it with FTS5 (`unicode61`, diacritics
/// removed); the memory store does the same with the tokens below.
enum LedgerSearchQuery {
    /// Each searchable word as a quoted FTS5 phrase with a prefix star, so nothing a user types
    /// is read as FTS5 syntax (`"` is doubled inside the quotes). Nil when no word has a letter or
    /// a digit.
    static func fts5(_ words: [String]) -> String? {
        let terms = words.filter(isSearchable).map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"*" }
        return terms.isEmpty ? nil : terms.joined(separator: " ")
    }

    static func isSearchable(_ word: String) -> Bool {
        word.unicodeScalars.contains { CharacterSet.alphanumerics.contains($0) }
    }

    /// The words of a text as FTS5's unicode61 tokenizer splits them: runs of letters and digits,
    /// folded to lower case without diacritics.
    static func tokens(_ text: String) -> [String] {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
            .unicodeScalars.split { !CharacterSet.alphanumerics.contains($0) }
            .map { String(String.UnicodeScalarView($0)) }
    }

    /// Whether a claim matches every searchable word (none searchable: no match, as in SQLite): each word's tokens in a row, the last as a
    /// prefix (as FTS5 reads `"two words"*`).
    static func matches(_ claim: String?, words: [String]) -> Bool {
        let searchable = words.filter(isSearchable)
        guard let claim, !searchable.isEmpty else { return false }
        let claimTokens = tokens(claim)
        return searchable.allSatisfy { word in
            let phrase = tokens(word)
            guard !phrase.isEmpty, claimTokens.count >= phrase.count else { return false }
            return (0...(claimTokens.count - phrase.count)).contains { start in
                phrase.indices.allSatisfy { index in
                    let token = claimTokens[start + index]
                    return index == phrase.count - 1 ? token.hasPrefix(phrase[index]) : token == phrase[index]
                }
            }
        }
    }
}
