import RelayCore

/// Splits text that will be escaped for mrkdwn into pieces that fit a limit once escaped: the
/// relay's one splitter (`EscapedTextSplitter`) with mrkdwn's escaped length, in UTF-16 units.
enum SlackTextSplitter {
    static let splitter = EscapedTextSplitter { SlackMrkdwn.escaper.escapedUTF16Count($0) }

    static func split(_ text: String, limit: Int) -> [String] { splitter.split(text, limit: limit) }

    /// The text cut to `limit` once escaped, ending with "…" when something was cut.
    static func truncate(_ text: String, limit: Int) -> String { splitter.truncate(text, limit: limit) }
}
