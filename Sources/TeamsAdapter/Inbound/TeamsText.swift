import Foundation

/// A Teams message's text as a command line: Teams writes mentions as `<at>Name</at>` (each with a
/// `mention` entity), and may send rich text as HTML (`<p>`, `<div>`, entities).
enum TeamsText {
    /// `text` without the bot's mentions (the `<at>` text its `mention` entities name), other
    /// mentions kept as the names they show, tags removed, entities decoded, whitespace
    /// collapsed.
    static func withoutMentions(of bot: String?, in text: String, entities: [TeamsEntity]) -> String {
        var text = text
        for entity in entities where entity.type == "mention" && entity.mentioned?.id == bot && bot != nil {
            if let mention = entity.text, !mention.isEmpty { text = text.replacingOccurrences(of: mention, with: " ") }
        }
        return plain(fromHTML: text)
    }

    /// HTML as the text a reader sees: `<br>` and block ends as line breaks, other tags removed,
    /// the common entities decoded, runs of spaces collapsed, trimmed.
    static func plain(fromHTML html: String) -> String {
        // Most messages, once the mention is out, hold neither a tag nor an entity.
        guard html.utf8.contains(where: { $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: "&") }) else { return collapsed(html) }
        var out = ""
        var index = html.startIndex
        while index < html.endIndex {
            let character = html[index]
            if character == "<", let close = html[index...].firstIndex(of: ">") {
                let tag = html[html.index(after: index)..<close].lowercased()
                let name = tag.drop { $0 == "/" }.prefix { $0.isLetter || $0.isNumber }
                if ["br", "p", "div", "li", "tr"].contains(String(name)) && (name == "br" || tag.hasPrefix("/")) { out.append("\n") }
                index = html.index(after: close)
            } else if character == "&", let semicolon = html[index...].prefix(10).firstIndex(of: ";"),
                let decoded = entity(String(html[html.index(after: index)..<semicolon]))
            {
                out.append(decoded)
                index = html.index(after: semicolon)
            } else {
                out.append(character)
                index = html.index(after: index)
            }
        }
        return collapsed(out)
    }

    /// Runs of spaces on each line collapsed to one, the whole trimmed.
    static func collapsed(_ text: String) -> String {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map {
            $0.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\u{00A0}" }).joined(separator: " ")
        }
        return lines.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `amp`, `lt`, `gt`, `quot`, `apos`, `nbsp`, and numeric references.
    static func entity(_ name: String) -> Character? {
        switch name {
        case "amp": return "&"
        case "lt": return "<"
        case "gt": return ">"
        case "quot": return "\""
        case "apos": return "'"
        case "nbsp": return " "
        default:
            guard name.hasPrefix("#") else { return nil }
            let digits = name.dropFirst()
            let value = digits.first == "x" || digits.first == "X" ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits)
            guard let value, value >= 0x20, let scalar = Unicode.Scalar(value) else { return nil }
            return Character(scalar)
        }
    }
}
