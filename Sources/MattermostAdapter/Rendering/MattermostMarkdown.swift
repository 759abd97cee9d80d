import Foundation
import RelayCore

/// Escaping of model and user text for Mattermost's Markdown, so it shows as written and can
/// ping no one.
///
/// Mattermost has no `allowed_mentions`: the server notifies whoever a post's *raw text*
/// mentions, and the web app turns `~channel`, `#tag` and `@user` into links after Markdown.
/// So, scalar by scalar (never by `Character`, which a combining mark could glue to a `<`):
/// - `\ * _ ~ ` | # [ ]` get a backslash, which Markdown shows as the character: no emphasis,
///   code, table, heading, strike-through or masked link;
/// - `<`, `>` and `&` become `&lt;`, `&gt;`, `&amp;`, which render as the characters in every
///   client (a backslash before `<` is not honoured by all of Mattermost's renderers): no HTML,
///   no `<https://…>` autolink, no blockquote, and no Slack-style `<url|text>` or `<!channel>`,
///   which Mattermost translates in command responses before Markdown (`skip_slack_parsing` is
///   set as well, but the escaping does not rely on it);
/// - an `@` that starts a word is followed by a zero-width space (U+200B): `@channel`, `@all`,
///   `@here` and `@someone` are then no mention for the server or the web app. The `@` of an
///   e-mail address (a word character before it, a dotted domain after: `ada@example.com`)
///   mentions no one and is left alone, as is everything inside a web address (`http://` or
///   `https://` up to the first space or character of `< > & \ ` [ ] |`), where an escape would
///   break the link Mattermost makes of it — when it makes one: a host with anything but letters,
///   digits, `-` and `.` is no link, and such an address is escaped as text; the trailing
///   `. , : ; " ' ) ]` that Mattermost leaves out of a link are treated as text after it.
public enum MattermostMarkdown {
    /// The escape of each special scalar outside web addresses (`@` only at a word's start).
    static let replacements: [Unicode.Scalar: String] = [
        "\\": "\\\\", "*": "\\*", "_": "\\_", "~": "\\~", "`": "\\`", "|": "\\|", "#": "\\#", "[": "\\[", "]": "\\]",
        "<": "&lt;", ">": "&gt;", "&": "&amp;", "@": "@\u{200B}",
    ]
    /// Escapes everything: the upper bound of an escaped length, which splitting counts.
    static let escaper = ScalarEscaper(replacements)
    /// Web addresses, as Mattermost autolinks them: printable ASCII except `< > & \ ` [ ] |`
    /// (a shorter address only means more escapes, never fewer), not after a word's scalar.
    static let addresses = WebAddresses(
        isAddressScalar: { (0x21...0x7E).contains($0.value) && !["<", ">", "&", "\\", "`", "[", "]", "|"].contains($0) },
        continuesWord: WebAddresses.isWordScalar)

    /// `text` with every Markdown-significant scalar escaped (see the type's documentation).
    public static func escape(_ text: some StringProtocol) -> String {
        guard text.utf8.contains(where: { $0 < 0x80 && replacements[Unicode.Scalar($0)] != nil }) else { return String(text) }
        let scalars = Array(text.unicodeScalars)
        let kept = addresses.ranges(in: scalars).filter { Self.hasLinkableHost(scalars[$0]) }
        var out = String.UnicodeScalarView()
        var rangeIndex = 0
        for (index, scalar) in scalars.enumerated() {
            while rangeIndex < kept.count, kept[rangeIndex].upperBound <= index { rangeIndex += 1 }
            let inAddress = rangeIndex < kept.count && kept[rangeIndex].contains(index)
            if inAddress || (scalar == "@" && WebAddresses.isInEmailAddress(scalars, at: index)) {
                out.append(scalar)
            } else if let replacement = replacements[scalar] {
                out.append(contentsOf: replacement.unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// Whether Mattermost makes a link of the address at all: its autolinker takes a host of
    /// letters, digits, `-` and `.` only (a dotted name, or `localhost`). `https://a_b/@channel`
    /// is no link — and then its `@channel` pings — so such text is escaped as any other
    /// (issue 47, point 1).
    static func hasLinkableHost(_ address: ArraySlice<Unicode.Scalar>) -> Bool {
        let text = String(String.UnicodeScalarView(address))
        guard let scheme = text.range(of: "://") else { return false }
        let host = text[scheme.upperBound...].prefix { !"/:?#".contains($0) }
        let plain =
            !host.isEmpty && host.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == ".") }
        return plain && (host.contains(".") || host.lowercased() == "localhost")
    }

    /// The longest `text` can be once escaped, in Unicode scalars (Mattermost's "runes").
    static func maximumEscapedLength(_ text: some StringProtocol) -> Int {
        text.unicodeScalars.reduce(0) { $0 + (replacements[$1].map { $0.unicodeScalars.count } ?? 1) }
    }

    /// What a reader sees of escaped text: backslash escapes, the three entities and the
    /// zero-width space after `@` undone. For reading the relay's own posts back (a fact-check's
    /// number under a 👍) and for tests.
    public static func unescape(_ text: String) -> String {
        // By scalars throughout: a combining mark after `;` must not hide an entity.
        let scalars = Array(text.unicodeScalars)
        let entities: [([Unicode.Scalar], Unicode.Scalar)] = [("&lt;", "<"), ("&gt;", ">"), ("&amp;", "&")].map { (Array($0.0.unicodeScalars), $0.1) }
        var out = String.UnicodeScalarView()
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "\\", index + 1 < scalars.count {
                out.append(scalars[index + 1])
                index += 2
            } else if scalar == "\u{200B}", out.last == "@", index > 0, scalars[index - 1] == "@" {
                index += 1
            } else if scalar == "&", let (entity, character) = entities.first(where: { scalars[index...].starts(with: $0.0) }) {
                out.append(character)
                index += entity.count
            } else {
                out.append(scalar)
                index += 1
            }
        }
        return String(out)
    }

}
