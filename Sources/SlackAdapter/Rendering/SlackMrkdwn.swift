/// Escaping for Slack's `mrkdwn` (and for a message's top-level `text`).
public enum SlackMrkdwn {
    /// Replaces exactly `&`, `<` and `>` with `&amp;`, `&lt;`, `&gt;`, as Slack asks, and nothing
    /// else. With no `<` left, no text can form `<!channel>`, `<!here>`, `<@U…>` or a link.
    public static func escape(_ text: some StringProtocol) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            default: out.append(character)
            }
        }
        return out
    }

    /// How long `character` is once escaped, in Slack's unit (see `SlackLimits`).
    static func escapedLength(_ character: Character) -> Int {
        switch character {
        case "&": 5
        case "<", ">": 4
        default: character.utf16.count
        }
    }
}
