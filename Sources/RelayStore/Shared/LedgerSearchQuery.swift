import Foundation

/// How `/ledger WORDS` searches claims: every word must match, as a prefix of a word in the
/// claim, ignoring case and diacritics. SQLite does it with FTS5 (`unicode61`, diacritics
/// removed); the memory store does the same with the tokens below, and PostgreSQL finds the
/// candidates by those tokens kept as lexemes (`lexemes`, `tsquery`) and checks them so.
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

    /// The longest lexeme PostgreSQL keeps for a claim's word, in UTF-8 bytes (its limit is
    /// 2 047): a longer word is kept as its start, and a query word as long is cut the same way,
    /// so the index still holds every match (the relay checks each one: `matches`).
    static let lexemeBytes = 255

    /// The most a claim's lexemes take, in bytes with PostgreSQL's 4 a lexeme (a `tsvector`
    /// holds at most 1 MB): a claim with more different words keeps those that fit and
    /// `partialMark`.
    static let lexemesBytes = 256 * 1_024

    /// Stands for "not every word is kept": no token is punctuation, so no claim's word is this.
    static let partialMark = "-"

    /// A claim's words as PostgreSQL keeps them for the ledger's search (`ledger.claim_words`,
    /// a `tsvector` made with `array_to_tsvector`, so PostgreSQL's own parser never splits
    /// them): the tokens above, each composed and cut to `lexemeBytes`, once each.
    static func lexemes(_ claim: String) -> [String] {
        var seen = Set<String>()
        var bytes = 0
        var kept: [String] = []
        for word in tokens(claim).map(lexeme) where seen.insert(word).inserted {
            bytes += word.utf8.count + 4
            guard bytes <= lexemesBytes else { return kept + [partialMark] }
            kept.append(word)
        }
        return kept
    }

    /// The `tsquery` that finds every claim holding the words' tokens, each as a prefix (what
    /// `matches` asks, and more for a word of several tokens, which must be in a row), and every
    /// claim not all of whose words are kept: the relay checks what it finds. Nil when no word
    /// is searchable.
    static func tsquery(_ words: [String]) -> String? {
        let terms = words.filter(isSearchable).flatMap(tokens).map { token in
            "'" + lexeme(token).replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "''") + "':*"
        }
        return terms.isEmpty ? nil : "(" + terms.joined(separator: " & ") + ") | '\(partialMark)'"
    }

    /// A token as a lexeme: composed (NFC: PostgreSQL compares bytes, Swift canonical
    /// equivalents), cut to at most `lexemeBytes` UTF-8 bytes at a scalar's boundary.
    private static func lexeme(_ token: String) -> String {
        let token = token.precomposedStringWithCanonicalMapping
        guard token.utf8.count > lexemeBytes else { return token }
        var scalars = String.UnicodeScalarView()
        var bytes = 0
        for scalar in token.unicodeScalars {
            bytes += String(scalar).utf8.count
            guard bytes <= lexemeBytes else { break }
            scalars.append(scalar)
        }
        return String(scalars)
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
