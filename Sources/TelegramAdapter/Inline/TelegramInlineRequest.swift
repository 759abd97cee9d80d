import Foundation
import RelayCore

/// What an inline query (`@Bot fr Good morning`) asks for: one of the quick actions whose answer
/// is text to insert — a translation, a fix, a rewrite in a style. Chains and tribunals never run
/// inline: their answers are not text for the person to send as their own.
struct TelegramInlineRequest: Sendable, Hashable {
    /// The command line the relay runs (`/translate fr Good morning`).
    var commandLine: String
    /// The card's title ("Translation · French").
    var title: String
    /// The text to act on.
    var text: String
    /// The query, normalised: the cache key's half (a space added to see a result is the same query).
    var normalized: String

    /// Nil when the query names no action, or names one with no text after it.
    init?(_ query: String) {
        let words = query.split(whereSeparator: \.isWhitespace)
        guard words.count >= 2 else { return nil }
        let first = words[0].lowercased()
        let text = words.dropFirst().joined(separator: " ")
        self.text = text
        normalized = ([first] + words.dropFirst().map(String.init)).joined(separator: " ")
        if BuiltinCommand(named: first) == .fix {
            commandLine = "/fix \(text)"
            title = "Fix"
        } else if let style = RewriteStyle(rawValue: first) {
            commandLine = "/rewrite \(style.rawValue) \(text)"
            title = "Rewrite · \(style.rawValue.capitalized)"
        } else if let language = Language.lookup(first) {
            commandLine = "/translate \(language.code) \(text)"
            title = "Translation · \(language.name)"
        } else {
            return nil
        }
    }

    /// The cards that say how to use inline mode, for a query that names no action.
    static let examples: [(title: String, example: String)] = [
        ("Translate: fr Good morning", "fr Good morning"),
        ("Fix grammar: fix teh cat sat", "fix teh cat sat"),
        ("Rewrite: formal hey, send me the file", "formal hey, send me the file"),
    ]
}
