import Foundation
import RelayCore

/// Model and user text for Teams, so it shows as written and can ping no one.
///
/// Teams pings only through a `mention` entity sent with the message, pointing at an
/// `<at>…</at>` in its text; the relay sends none, and text it sends as `xml` (HTML) has `&`,
/// `<` and `>` as entities, so no `<at>`, tag or entity of the model's survives as markup. Line
/// breaks become `<br>`; other control characters (but tab) are dropped. In a card's text run
/// (never read as Markdown or HTML) the text goes as it is, without control characters.
public enum TeamsHTML {
    /// `text` as HTML that shows as written.
    public static func escape(_ text: some StringProtocol) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out.append(contentsOf: "&amp;".unicodeScalars)
            case "<": out.append(contentsOf: "&lt;".unicodeScalars)
            case ">": out.append(contentsOf: "&gt;".unicodeScalars)
            case "\n": out.append(contentsOf: "<br>".unicodeScalars)
            case "\t": out.append(scalar)
            default:
                if isDropped(scalar) { continue }
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// `text` for a card's text run: control characters (but tab) dropped, line breaks as spaces.
    public static func plain(_ text: some StringProtocol) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar == "\n" || scalar == "\r" {
                out.append(" ")
            } else if scalar == "\t" || !isDropped(scalar) {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// What a reader sees of escaped text: the entities and `<br>` undone. For reading the
    /// relay's own messages back, and for tests.
    public static func unescape(_ html: String) -> String {
        // By scalars throughout, as an HTML parser reads: a combining mark after `;` or `>` must
        // not hide an entity or a tag (a `Character` would glue them).
        let scalars = Array(html.unicodeScalars)
        let undone: [([Unicode.Scalar], Unicode.Scalar)] = [("<br>", "\n"), ("&lt;", "<"), ("&gt;", ">"), ("&amp;", "&")].map {
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

    /// The most bytes `text` can take once escaped and written in a JSON string: the limit
    /// splitting counts against.
    static func maximumEscapedBytes(_ text: some StringProtocol) -> Int {
        text.unicodeScalars.reduce(0) { total, scalar in
            total
                + {
                    switch scalar {
                    case "&": 5
                    case "<", ">", "\n": 4
                    case "\"", "\\", "\t": 2
                    default: scalar.value < 0x20 ? 0 : UTF8.width(scalar)
                    }
                }()
        }
    }

    /// C0 and C1 controls and DEL: nothing a person reads.
    static func isDropped(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
