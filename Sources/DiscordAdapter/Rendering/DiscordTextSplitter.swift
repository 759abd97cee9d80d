import RelayCore

/// Splits raw text into pieces that fit a limit once escaped (`DiscordMarkdown.escape`): the
/// relay's one splitter (`EscapedTextSplitter`), with every special scalar counted as escaped
/// (web addresses escape fewer), so an escaped piece never exceeds the limit.
enum DiscordTextSplitter {
    static let splitter = EscapedTextSplitter { DiscordMarkdown.maximumEscapedLength($0) }

    static func split(_ text: String, limit: Int) -> [String] {
        // One scalar takes up to 2 units escaped (`\*`, `@` + U+200B) or as a surrogate pair.
        precondition(limit >= 2, "a piece must hold any one scalar")
        return splitter.split(text, limit: limit)
    }

    /// `text` cut to `limit` once escaped, ending with "…" when something was cut.
    static func truncate(_ text: String, limit: Int) -> String { splitter.truncate(text, limit: limit) }
}
