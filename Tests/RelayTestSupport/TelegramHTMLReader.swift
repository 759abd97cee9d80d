// Shared by Telegram's rendering tests and its output-safety property tests (OutputSafetyTests).

/// Reads rendered HTML as Telegram's parser does, strictly: the text a user sees, what is bold and
/// what is italic — or why Telegram would refuse it, or show something the renderer did not write.
///
/// Allowed: the tags `<b>` and `<i>` without attributes, properly nested and closed, and the
/// entities `&lt; &gt; &amp; &quot;`. Anything else that is markup — another tag, an attribute, a
/// stray `<` or `>`, a `&` that starts no allowed entity (a cut `&am`) — is a problem.
public struct TelegramHTMLReader {
    public struct Parsed: Equatable, Sendable {
        /// The text after entity parsing: what Telegram shows and counts.
        public var text = ""
        /// The text of each `<b>` and `<i>` span, in order.
        public var bold: [String] = []
        public var italic: [String] = []
        /// Telegram's length of the message: UTF-16 units of `text`.
        public var length: Int { text.utf16.count }
    }

    static let entities: [([UInt8], UInt8)] = [("&lt;", "<"), ("&gt;", ">"), ("&amp;", "&"), ("&quot;", "\"")].map { (Array($0.utf8), UInt8(ascii: $1)) }
    static let tags: [[UInt8]] = ["<b>", "</b>", "<i>", "</i>"].map { Array($0.utf8) }

    /// The parsed message, or what is wrong with `html`.
    public static func parse(_ html: String) -> Result<Parsed, Problem> {
        // By UTF-8 bytes: markup is ASCII, and a byte below 0x80 is always a whole scalar, so a
        // combining mark after `>` cannot hide a tag (as it would from a Character comparison).
        let bytes = Array(html.utf8)
        var parsed = Parsed()
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count)
        var open: (tag: String, start: Int)?
        var index = 0
        func starts(with literal: [UInt8]) -> Bool {
            guard index + literal.count <= bytes.count else { return false }
            for offset in literal.indices where bytes[index + offset] != literal[offset] { return false }
            return true
        }
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "<"):
                guard let tag = tags.first(where: starts(with:)) else { return .failure(Problem("a tag the relay does not write at byte \(index)")) }
                let name = String(decoding: tag.filter { $0 == UInt8(ascii: "b") || $0 == UInt8(ascii: "i") }, as: UTF8.self)
                if tag[1] == UInt8(ascii: "/") {
                    guard let start = open, start.tag == name else { return .failure(Problem("</\(name)> closes nothing at byte \(index)")) }
                    let span = String(decoding: text[start.start...], as: UTF8.self)
                    if name == "b" { parsed.bold.append(span) } else { parsed.italic.append(span) }
                    open = nil
                } else {
                    guard open == nil else { return .failure(Problem("<\(name)> nested at byte \(index)")) }
                    open = (name, text.count)
                }
                index += tag.count
            case UInt8(ascii: ">"):
                return .failure(Problem("a raw > at byte \(index)"))
            case UInt8(ascii: "&"):
                guard let (entity, character) = entities.first(where: { starts(with: $0.0) }) else {
                    return .failure(Problem("a cut or foreign entity at byte \(index)"))
                }
                text.append(character)
                index += entity.count
            case let byte:
                text.append(byte)
                index += 1
            }
        }
        guard open == nil else { return .failure(Problem("an unclosed tag")) }
        parsed.text = String(decoding: text, as: UTF8.self)
        return .success(parsed)
    }

    public struct Problem: Error, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }
}
