import RelayCore

/// Escaping of model and user text for Discord's markdown, so it shows exactly as written.
///
/// The relay shows text *literally*: a model's answer may quote anything a user typed, and
/// Discord markdown can hide text (`||spoiler||`), disguise a link (`[bank.com](https://evil)`),
/// shout (`# title`), or look like a ping (`<@&role>`, `@everyone`). So, scalar by scalar (never
/// by `Character`: a Unicode "Prepend" scalar before a `<`, or a combining mark after it, would
/// glue the two into one cluster that is not equal to `"<"`, and slip past):
/// - `\ * _ ~ ` | > # [ ] <` get a backslash, which Discord shows as the character itself: no
///   emphasis, code, spoiler, quote, heading (`#`, `-#`), masked link, or `<@…>`, `<@!…>`,
///   `<@&…>`, `<#…>`, `<t:…>`, `</cmd:id>`, `<:emoji:id>` survives;
/// - `@` is followed by a zero-width space (U+200B), as discord.py does: `@everyone` and `@here`
///   then never read as mentions, even where markdown escapes are not honoured — except inside a
///   web address or an e-mail address (`ada@example.com`), which it would break;
/// - inside a web address (`http://` or `https://`, then a letter or digit, up to the first
///   character that is not printable ASCII or is `<`), `_ * ~ #` are left alone: Discord links
///   the whole address and does not format inside it, and an escape there would break the link
///   (`Eiffel_Tower`, `#section`). The address's trailing `. , : ; " ' ) ]`, which Discord does
///   not make part of the link, are escaped as usual.
///
/// Pings are stopped independently by `allowed_mentions: {"parse": []}` on every message; the
/// escaping makes sure nothing even looks like one. Bulleted and numbered lists still render.
public enum DiscordMarkdown {
    /// The escape of each special scalar outside web addresses; every other scalar is kept.
    static let replacements: [Unicode.Scalar: String] = [
        "\\": "\\\\", "*": "\\*", "_": "\\_", "~": "\\~", "`": "\\`", "|": "\\|", ">": "\\>", "#": "\\#", "[": "\\[", "]": "\\]",
        "<": "\\<", "@": "@\u{200B}",
    ]
    /// Escapes everything, addresses too: the upper bound of an escaped length (what splitting counts).
    static let escaper = ScalarEscaper(replacements)
    /// Left as they are inside a web address.
    static let keptInAddresses: Set<Unicode.Scalar> = ["_", "*", "~", "#"]

    /// Whether the `@` at `index` starts `@everyone` or `@here` (any case): broken even inside
    /// an address, where no one reads it as one but it looks like one.
    static func isMassMention(_ scalars: [Unicode.Scalar], at index: Int) -> Bool {
        let next = String(String.UnicodeScalarView(scalars[(index + 1)...].prefix(8))).lowercased()
        return next.hasPrefix("everyone") || next.hasPrefix("here")
    }
    /// Web addresses, as Discord links them: printable ASCII except `<` (stricter than Discord,
    /// which also takes non-ASCII; a shorter address only means more escapes).
    static let addresses = WebAddresses(isAddressScalar: { (0x21...0x7E).contains($0.value) && $0 != "<" })

    /// `text` with every markdown-significant scalar escaped (see the type's documentation).
    public static func escape(_ text: some StringProtocol) -> String {
        // Most text has no special scalar: returned as it is.
        guard text.utf8.contains(where: { $0 < 0x80 && replacements[Unicode.Scalar($0)] != nil }) else { return String(text) }
        let scalars = Array(text.unicodeScalars)
        let kept = addresses.ranges(in: scalars)
        var out = String.UnicodeScalarView()
        var rangeIndex = 0
        for (index, scalar) in scalars.enumerated() {
            while rangeIndex < kept.count, kept[rangeIndex].upperBound <= index { rangeIndex += 1 }
            let inAddress = rangeIndex < kept.count && kept[rangeIndex].contains(index)
            let asWritten =
                scalar == "@"
                ? (inAddress || WebAddresses.isInEmailAddress(scalars, at: index)) && !Self.isMassMention(scalars, at: index)
                : inAddress && keptInAddresses.contains(scalar)
            if let replacement = replacements[scalar], !asWritten {
                out.append(contentsOf: replacement.unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// The longest `text` can be once escaped, in Discord's unit: what splitting counts.
    static func maximumEscapedLength(_ text: some StringProtocol) -> Int {
        escaper.escapedUTF16Count(text)
    }

}
