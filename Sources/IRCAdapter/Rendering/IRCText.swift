/// Text as it may go on an IRC line: no control characters, no formatting, no CTCP, within the
/// protocol's 512 bytes, and no highlight of everyone in the channel.
enum IRCText {
    /// `text` with every C0 control character removed — mIRC formatting (bold `\u{02}`, colour
    /// `\u{03}` with its digits, hex colour `\u{04}` with its digits, reset `\u{0F}`, monospace
    /// `\u{11}`, reverse `\u{16}`, italic `\u{1D}`, strike-through `\u{1E}`, underline
    /// `\u{1F}`), CTCP's `\u{01}`, and CR, LF and NUL, which would end the line and start
    /// another command — tabs as spaces, and DEL. What is left cannot start a CTCP or inject a
    /// command, whatever a model wrote.
    static func cleaned(_ text: Substring) -> String {
        var out = String.UnicodeScalarView()
        var scalars = text.unicodeScalars[...]
        while let scalar = scalars.popFirst() {
            switch scalar.value {
            case 0x09: out.append(" ")
            case 0x03:
                // Colour: up to two digits, then optionally a comma and up to two more.
                dropColour(&scalars, digits: 2, isDigit: isDecimal)
            case 0x04:
                dropColour(&scalars, digits: 6, isDigit: isHex)
            case 0x00...0x1F, 0x7F: continue
            // The C1 controls and the line and paragraph separators: some clients break lines
            // at them.
            case 0x80...0x9F, 0x2028, 0x2029: continue
            default: out.append(scalar)
            }
        }
        return String(out)
    }

    private static func dropColour(_ scalars: inout Substring.UnicodeScalarView.SubSequence, digits: Int, isDigit: (Unicode.Scalar) -> Bool) {
        var taken = 0
        while taken < digits, let next = scalars.first, isDigit(next) {
            scalars.removeFirst()
            taken += 1
        }
        guard taken > 0, scalars.first == ",", scalars.dropFirst().first.map(isDigit) == true else { return }
        scalars.removeFirst()
        taken = 0
        while taken < digits, let next = scalars.first, isDigit(next) {
            scalars.removeFirst()
            taken += 1
        }
    }

    private static func isDecimal(_ scalar: Unicode.Scalar) -> Bool { ("0"..."9").contains(scalar) }
    private static func isHex(_ scalar: Unicode.Scalar) -> Bool { isDecimal(scalar) || ("a"..."f").contains(scalar) || ("A"..."F").contains(scalar) }

    /// `text`'s lines, cleaned, each cut to at most `limit` bytes of UTF-8: at the last space
    /// that fits where there is one, else between two characters, and inside a character (a
    /// grapheme cluster longer than the limit) only between its scalars — never inside one's
    /// bytes. Empty lines are left out: IRC has no empty message.
    /// `sparing` names the channel's members, broken so none is highlighted
    /// (`withoutHighlights`) — after the text is cleaned, so no removed code can join a nick
    /// back together.
    static func lines(_ text: String, limit: Int, sparing nicks: Set<String> = []) -> [String] {
        let limit = max(4, limit)
        var out: [String] = []
        for raw in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) {
            var line = Substring(withoutHighlights(cleaned(raw), nicks: nicks))
            while !line.isEmpty {
                if line.utf8.count <= limit {
                    appendTrimmed(line, to: &out)
                    break
                }
                let cut = cutIndex(line, limit: limit)
                appendTrimmed(line[..<cut], to: &out)
                line = line[cut...].drop { $0 == " " }
            }
        }
        return out
    }

    private static func appendTrimmed(_ line: Substring, to out: inout [String]) {
        let trimmed = line.reversed().drop { $0 == " " }
        guard !trimmed.isEmpty else { return }
        out.append(String(line.prefix(trimmed.count)))
    }

    /// Where to cut `line` (longer than `limit` bytes) so that its head fits.
    private static func cutIndex(_ line: Substring, limit: Int) -> Substring.Index {
        var bytes = 0
        var lastFit = line.startIndex
        var lastSpace: Substring.Index?
        var index = line.startIndex
        while index < line.endIndex {
            let character = line[index]
            let size = character.utf8.count
            if bytes + size > limit { break }
            bytes += size
            if character == " " { lastSpace = index }
            index = line.index(after: index)
            lastFit = index
        }
        // A space in the last third: the line breaks between words.
        if let lastSpace, line.utf8.distance(from: line.startIndex, to: lastSpace) > limit * 2 / 3 { return lastSpace }
        if lastFit > line.startIndex { return lastFit }
        // One character longer than a line: its scalars, as many as fit.
        var scalarBytes = 0
        var scalarIndex = line.unicodeScalars.startIndex
        while scalarIndex < line.unicodeScalars.endIndex {
            let size = UTF8.width(line.unicodeScalars[scalarIndex])
            if scalarBytes + size > limit { break }
            scalarBytes += size
            scalarIndex = line.unicodeScalars.index(after: scalarIndex)
        }
        return scalarIndex == line.startIndex ? line.unicodeScalars.index(after: scalarIndex) : scalarIndex
    }

    /// `text` with every nick of `nicks` (the channel's members) written so that no client
    /// highlights it: a zero-width space (U+200B) after the first character of each place it
    /// appears — as a word or inside one, in any case (IRC compares nicks by RFC 1459's case
    /// mapping) — so no run of characters anywhere spells a member's nick, whatever a client
    /// counts as a word boundary. It reads the same. One-character nicks cannot be broken and
    /// are left.
    static func withoutHighlights(_ text: String, nicks: Set<String>) -> String {
        let wanted = nicks.filter { $0.unicodeScalars.count > 1 }.map { Array(fold($0).unicodeScalars) }
        guard !wanted.isEmpty else { return text }
        let scalars = Array(text.unicodeScalars)
        let folded = Array(fold(text).unicodeScalars)
        var breaks = Set<Int>()
        for start in folded.indices {
            for nick in wanted where folded[start...].starts(with: nick) {
                breaks.insert(start)
                break
            }
        }
        guard !breaks.isEmpty else { return text }
        var out = String.UnicodeScalarView()
        for (index, scalar) in scalars.enumerated() {
            out.append(scalar)
            if breaks.contains(index) { out.append("\u{200B}") }
        }
        return String(out)
    }

    /// Letters, digits and `[ ] \ ` _ ^ { | } -`: what a nick is made of (RFC 2812 §2.3.1).
    static func isNickCharacter(_ character: Character) -> Bool {
        guard let ascii = character.asciiValue else { return false }
        switch ascii {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): return true
        default: return "[]\\`_^{|}-".utf8.contains(ascii)
        }
    }

    /// A nick as IRC compares it: lower case, with `[]\~` as `{}|^` (RFC 1459's case mapping,
    /// ngIRCd's and most servers').
    static func fold(_ nick: some StringProtocol) -> String {
        String(
            String.UnicodeScalarView(
                nick.unicodeScalars.map { scalar -> Unicode.Scalar in
                    switch scalar {
                    case "[": "{"
                    case "]": "}"
                    case "\\": "|"
                    case "~": "^"
                    default: ("A"..."Z").contains(scalar) ? Unicode.Scalar(scalar.value + 32)! : scalar
                    }
                }))
    }
}
