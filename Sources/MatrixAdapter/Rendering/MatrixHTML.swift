import Foundation
import RelayCore

/// Model and user text made safe for a Matrix message: in `formatted_body`, escaped so it holds
/// no tag at all (no `<a href>` that disguises a link, no pill, no `<font>` that hides words) —
/// the only tags are the renderer's own (`<strong>`, `<em>`, `<br>`); in both `body` and
/// `formatted_body`, defanged so no client turns it into a mention.
///
/// Every message also carries `"m.mentions": {}`, which since spec v1.7 tells clients and
/// servers that it mentions no one, whatever its text says. Defanging is for clients older than
/// that, which still ping on `@room` and on names in the body, and for linkifiers that make a
/// pill of any user id or `matrix.to` link they see: a word joiner (U+2060, invisible) goes after
/// the `@` of `@room` and of every user id shape (`@name:server`), after the `#` of room
/// aliases (`#room:server`), and inside `matrix.to`.
public enum MatrixHTML {
    /// `&`, `<` and `>`, and line breaks as `<br>`, scalar by scalar (`ScalarEscaper`: never by
    /// `Character`, which a Prepend scalar or a combining mark can glue to a `<` or a line
    /// break). Text never sits in an attribute, so quotes need nothing.
    static let escaper = ScalarEscaper(["&": "&amp;", "<": "&lt;", ">": "&gt;", "\n": "<br>"])
    /// Invisible, and breaks the patterns linkifiers and push rules look for.
    static let joiner: Unicode.Scalar = "\u{2060}"
    /// The at signs a client may read as one: ASCII, fullwidth and small.
    static let atSigns: Set<Unicode.Scalar> = ["@", "＠", "﹫"]

    /// Escaped `text`, line breaks as `<br>`.
    public static func escape(_ text: some StringProtocol) -> String {
        escaper.escape(text)
    }

    /// `text` with every mention shape broken (see the type's notes), scalar by scalar.
    public static func defanged(_ text: some StringProtocol) -> String {
        // Most answers hold no at sign, `#` or `x`: those are returned as they are, unscanned.
        // (Fullwidth and small at signs start with the byte 0xEF in UTF-8.)
        guard text.utf8.contains(where: { $0 == 0x40 || $0 == 0x23 || $0 == 0xEF || $0 == 0x78 || $0 == 0x58 }) else { return String(text) }
        let scalars = Array(text.unicodeScalars)
        var out = String.UnicodeScalarView()
        out.reserveCapacity(scalars.count + 8)
        for (index, scalar) in scalars.enumerated() {
            out.append(scalar)
            if atSigns.contains(scalar) || scalar == "#" {
                if looksLikeMention(scalars, after: index) { out.append(joiner) }
            } else if scalar == "x" || scalar == "X", index >= 5, index + 1 < scalars.count, scalars[index + 1] == ".",
                String(String.UnicodeScalarView(scalars[(index - 5)...index])).lowercased() == "matrix"
            {
                out.append(joiner)
            }
        }
        return String(out)
    }

    /// Whether what follows a `@` or `#` may be read as a mention: `room` after an at sign, or
    /// an id shape (`name:server`). Generous on purpose: anything up to a space or a colon counts
    /// as the name, since clients' linkifiers differ and breaking too much costs nothing visible.
    private static func looksLikeMention(_ scalars: [Unicode.Scalar], after index: Int) -> Bool {
        var name = String.UnicodeScalarView()
        var position = index + 1
        while position < scalars.count, name.count <= 255, scalars[position] != ":", !scalars[position].properties.isWhitespace {
            name.append(scalars[position])
            position += 1
        }
        let isID = !name.isEmpty && position + 1 < scalars.count && scalars[position] == ":" && !scalars[position + 1].properties.isWhitespace
        return isID || (scalars[index] != "#" && String(name).lowercased().hasPrefix("room"))
    }
}
