import RelayCore

/// Escaping for Slack's `mrkdwn` (and for a message's top-level `text`).
public enum SlackMrkdwn {
    /// Exactly `&`, `<` and `>`, as Slack asks, and nothing else — scalar by scalar
    /// (`ScalarEscaper`), so no grapheme cluster can smuggle a raw `<` through.
    static let escaper = ScalarEscaper(["&": "&amp;", "<": "&lt;", ">": "&gt;"])

    /// Replaces every `&`, `<` and `>` scalar with `&amp;`, `&lt;`, `&gt;`. With no `<` left,
    /// no text can form `<!channel>`, `<!here>`, `<@U…>` or a link.
    public static func escape(_ text: some StringProtocol) -> String {
        escaper.escape(text)
    }

    /// How long `character` is once escaped, in Slack's unit (see `SlackLimits`).
    static func escapedLength(_ character: Character) -> Int {
        escaper.escapedUTF16Count(String(character))
    }
}
