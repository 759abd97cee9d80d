import RelayCore

/// Model and user text for Google Chat, so it shows as written and pings no one.
///
/// - In a message's `text`, Google Chat reads `<users/123>` as a mention that notifies that
///   person, `<users/all>` as one that notifies everyone in the space, and `<https://…|label>` as
///   a link that shows only its label. Each `<` of model text is followed by a word joiner
///   (U+2060, which shows as nothing), so no `<users/…>` and no disguised link can be formed;
///   Chat's `*bold*` and `` `code` `` stay what they are (harmless, and how models write).
/// - In a card's text (a small HTML subset, where nothing pings), `&`, `<`, `>` and `"` are
///   entities and a line break is `<br>`.
/// - C0 and C1 control characters (but tab and line feed) are dropped everywhere.
public enum GoogleChatText {
    /// U+2060 WORD JOINER: invisible, and not a character Chat's markup accepts after `<`.
    static let joiner: Unicode.Scalar = "\u{2060}"

    /// `text` for a message's `text` field.
    public static func text(_ text: some StringProtocol) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if isDropped(scalar) { continue }
            out.append(scalar)
            if scalar == "<" { out.append(joiner) }
        }
        return String(out)
    }

    /// `text` for a card's `textParagraph` (HTML).
    public static func html(_ text: some StringProtocol) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out.append(contentsOf: "&amp;".unicodeScalars)
            case "<": out.append(contentsOf: "&lt;".unicodeScalars)
            case ">": out.append(contentsOf: "&gt;".unicodeScalars)
            case "\"": out.append(contentsOf: "&quot;".unicodeScalars)
            case "\n": out.append(contentsOf: "<br>".unicodeScalars)
            default:
                if isDropped(scalar) { continue }
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// `text` on one line, for a card's header (plain text): controls dropped, breaks as spaces.
    public static func plain(_ text: some StringProtocol) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar == "\n" || scalar == "\r" || scalar == "\t" {
                out.append(" ")
            } else if !isDropped(scalar) {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// What a reader sees of card HTML: the entities and `<br>` undone (for tests and for
    /// reading the relay's own messages back).
    public static func unescapeHTML(_ html: String) -> String {
        let scalars = Array(html.unicodeScalars)
        let undone: [([Unicode.Scalar], Unicode.Scalar)] = [("<br>", "\n"), ("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&amp;", "&")].map {
            (Array($0.0.unicodeScalars), $0.1)
        }
        var out = String.UnicodeScalarView()
        var index = 0
        while index < scalars.count {
            if let (written, scalar) = undone.first(where: { scalars[index...].starts(with: $0.0) }) {
                out.append(scalar)
                index += written.count
            } else {
                out.append(scalars[index])
                index += 1
            }
        }
        return String(out)
    }

    /// What a reader sees of message text: the word joiners taken out.
    public static func shown(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { $0 != joiner }))
    }

    /// The most bytes `text` can take as `text(_:)` or `html(_:)` writes it, in a JSON string.
    static func maximumEscapedBytes(_ text: some StringProtocol) -> Int {
        text.unicodeScalars.reduce(0) { total, scalar in
            total
                + {
                    switch scalar {
                    case "\"": 6
                    case "&": 5
                    case "<": 4
                    case ">", "\n": 4
                    case "\\", "\t": 2
                    default: isDropped(scalar) ? 0 : UTF8.width(scalar)
                    }
                }()
        }
    }

    /// C0 and C1 controls (but tab and line feed) and DEL: nothing a person reads.
    static func isDropped(_ scalar: Unicode.Scalar) -> Bool {
        (scalar.value < 0x20 && scalar != "\n" && scalar != "\t") || (0x7F...0x9F).contains(scalar.value)
    }
}
