/// Telegram's HTML parse mode, as the Bot API applies it to `text` with `parse_mode: "HTML"`.
///
/// A port of TDLib's `parse_html` (the parser behind the Bot API): the tags `b strong i em u ins
/// s strike del code pre a tg-spoiler span tg-emoji blockquote` (tag names in any case, attributes
/// quoted or not), the entities `&lt; &gt; &amp; &quot;` and `&#N;`/`&#xN;` (the `;` optional),
/// and its error texts (`Unsupported start tag "p" at byte offset 0`, `Unmatched end tag at byte
/// offset 7, expected "</b>", found "</i>"`, `Can't find end tag corresponding to start tag "b"`…).
/// Offsets and lengths are in UTF-16 code units of the parsed text, as Telegram counts.
///
/// One deliberate strictness: TDLib keeps an unknown entity (`&nbsp;`, `&foo;`) as literal text;
/// with `strictEntities` the fake refuses it instead ("Unsupported HTML entity"), since text
/// meant literally must have its `&` escaped anyway.
public enum FakeTelegramHTML {
    /// The parsed text and its entities, sorted by offset.
    public struct Parsed: Sendable, Hashable {
        public var text: String
        public var entities: [FakeTelegramEntity]
    }

    /// Why Telegram cannot parse the text: the part after `Bad Request: can't parse entities: `.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    private struct Open {
        var tag: String
        var argument: String
        var expandable: Bool
        var offset: Int
        var beginByte: Int
    }

    /// Parses `html` as Telegram does; throws the reason it cannot.
    public static func parse(_ html: String, strictEntities: Bool = true) throws(ParseError) -> Parsed {
        // A NUL ends the text, as TDLib's C string does: every look-ahead stops there.
        let text = Array(html.utf8) + [0]
        let size = text.count - 1
        var result: [UInt8] = []
        result.reserveCapacity(size)
        var entities: [FakeTelegramEntity] = []
        var open: [Open] = []
        var utf16 = 0
        var i = 0
        while i < size {
            let c = text[i]
            if c == ascii("&") {
                if let (code, end) = decodeEntity(text, at: i) {
                    if (0xD800...0xDFFF).contains(code) {
                        throw ParseError(
                            message: "Text contains invalid Unicode characters after decoding HTML entities, check for unmatched surrogate code units")
                    }
                    utf16 += code > 0xFFFF ? 2 : 1
                    if let scalar = UnicodeScalar(code) { result += Array(String(Character(scalar)).utf8) }
                    i = end
                    continue
                }
                if strictEntities, let name = unknownEntity(text, at: i) {
                    throw ParseError(message: "Unsupported HTML entity \"\(name)\" at byte offset \(i)")
                }
            }
            if c != ascii("<") {
                if c & 0xC0 != 0x80 { utf16 += c >= 0xF0 ? 2 : 1 }
                result.append(c)
                i += 1
                continue
            }
            let begin = i
            i += 1
            if text[i] != ascii("/") {
                // A start tag.
                while !isSpace(text[i]) && text[i] != ascii(">") { i += 1 }
                if text[i] == 0 { throw ParseError(message: "Unclosed start tag at byte offset \(begin)") }
                let tag = lowercased(text[(begin + 1)..<i])
                guard supportedTags.contains(tag) else {
                    throw ParseError(message: "Unsupported start tag \"\(tag)\" at byte offset \(begin)")
                }
                var argument = ""
                var expandable = false
                while text[i] != ascii(">") {
                    while text[i] != 0 && isSpace(text[i]) { i += 1 }
                    if text[i] == ascii(">") { break }
                    let nameBegin = i
                    while !isSpace(text[i]) && text[i] != ascii("=") && text[i] != ascii(">") { i += 1 }
                    let name = String(decoding: text[nameBegin..<i], as: UTF8.self)
                    if name.isEmpty {
                        throw ParseError(message: "Empty attribute name in the tag \"\(tag)\" at byte offset \(begin)")
                    }
                    while text[i] != 0 && isSpace(text[i]) { i += 1 }
                    if text[i] != ascii("=") {
                        // `<blockquote expandable>`, the one attribute without a value.
                        if tag == "blockquote" && name.lowercased() == "expandable" && text[i] != 0 {
                            expandable = true
                            continue
                        }
                        throw ParseError(message: "Expected equal sign in declaration of an attribute of the tag \"\(tag)\" at byte offset \(begin)")
                    }
                    i += 1
                    while text[i] != 0 && isSpace(text[i]) { i += 1 }
                    if text[i] == 0 { throw ParseError(message: "Unclosed start tag \"\(tag)\" at byte offset \(begin)") }
                    var value: String
                    if text[i] != ascii("'") && text[i] != ascii("\"") {
                        // A name token: letters, digits, periods and hyphens, case-insensitive.
                        let tokenBegin = i
                        while isAlnum(text[i]) || text[i] == ascii(".") || text[i] == ascii("-") { i += 1 }
                        value = lowercased(text[tokenBegin..<i])
                        if !isSpace(text[i]) && text[i] != ascii(">") {
                            throw ParseError(message: "Unexpected end of name token at byte offset \(tokenBegin)")
                        }
                    } else {
                        let quote = text[i]
                        i += 1
                        var bytes: [UInt8] = []
                        while text[i] != quote && text[i] != 0 {
                            if text[i] == ascii("&"), let (code, end) = decodeEntity(text, at: i), let scalar = UnicodeScalar(code) {
                                bytes += Array(String(Character(scalar)).utf8)
                                i = end
                                continue
                            }
                            bytes.append(text[i])
                            i += 1
                        }
                        if text[i] == quote { i += 1 }
                        value = String(decoding: bytes, as: UTF8.self)
                    }
                    if text[i] == 0 { throw ParseError(message: "Unclosed start tag at byte offset \(begin)") }
                    switch (tag, name) {
                    case ("a", "href"), ("tg-emoji", "emoji-id"):
                        argument = value
                    case ("code", "class") where value.hasPrefix("language-"):
                        argument = String(value.dropFirst("language-".count))
                    case ("span", "class") where value.hasPrefix("tg-"):
                        argument = String(value.dropFirst("tg-".count))
                    default:
                        break
                    }
                }
                if tag == "span" && argument != "spoiler" {
                    throw ParseError(message: "Tag \"span\" must have class \"tg-spoiler\" at byte offset \(begin)")
                }
                open.append(Open(tag: tag, argument: argument, expandable: expandable, offset: utf16, beginByte: result.count))
            } else {
                // An end tag.
                guard let top = open.last else { throw ParseError(message: "Unexpected end tag at byte offset \(begin)") }
                while !isSpace(text[i]) && text[i] != ascii(">") { i += 1 }
                let endTag = lowercased(text[(begin + 2)..<i])
                while isSpace(text[i]) && text[i] != 0 { i += 1 }
                if text[i] != ascii(">") { throw ParseError(message: "Unclosed end tag at byte offset \(begin)") }
                if !endTag.isEmpty && endTag != top.tag {
                    throw ParseError(message: "Unmatched end tag at byte offset \(begin), expected \"</\(top.tag)>\", found \"</\(endTag)>\"")
                }
                if utf16 > top.offset {
                    try close(top, length: utf16 - top.offset, result: result, into: &entities)
                }
                open.removeLast()
            }
            i += 1
        }
        if let top = open.last {
            throw ParseError(message: "Can't find end tag corresponding to start tag \"\(top.tag)\"")
        }
        for index in entities.indices where entities[index].type == "code" { entities[index].language = nil }
        let sorted = entities.enumerated().sorted { lhs, rhs in
            if lhs.element.offset != rhs.element.offset { return lhs.element.offset < rhs.element.offset }
            if lhs.element.length != rhs.element.length { return lhs.element.length > rhs.element.length }
            return lhs.offset < rhs.offset
        }
        return Parsed(text: String(decoding: result, as: UTF8.self), entities: sorted.map(\.element))
    }

    /// Drops leading and trailing whitespace as Telegram does before storing a text, moving and
    /// clipping the entities with it (entities left empty are dropped).
    public static func trimmed(_ parsed: Parsed) -> Parsed {
        let scalars = Array(parsed.text.unicodeScalars)
        var start = 0
        while start < scalars.count && scalars[start].properties.isWhitespace { start += 1 }
        var end = scalars.count
        while end > start && scalars[end - 1].properties.isWhitespace { end -= 1 }
        if start == 0 && end == scalars.count { return parsed }
        let lead = scalars[..<start].reduce(0) { $0 + UTF16.width($1) }
        var kept = String.UnicodeScalarView()
        kept.append(contentsOf: scalars[start..<end])
        let text = String(kept)
        let length = text.utf16.count
        let entities = parsed.entities.compactMap { entity -> FakeTelegramEntity? in
            var entity = entity
            let from = max(0, entity.offset - lead)
            let to = min(length, entity.offset + entity.length - lead)
            guard to > from else { return nil }
            entity.offset = from
            entity.length = to - from
            return entity
        }
        return Parsed(text: text, entities: entities)
    }

    static let supportedTags: Set<String> = [
        "a", "b", "strong", "i", "em", "s", "strike", "del", "u", "ins", "tg-spoiler", "tg-emoji", "span", "pre", "code", "blockquote",
    ]

    /// Turns a closed tag into its entity, merging `<pre><code class="language-x">` into one.
    private static func close(_ top: Open, length: Int, result: [UInt8], into entities: inout [FakeTelegramEntity]) throws(ParseError) {
        let offset = top.offset
        func add(_ type: String) { entities.append(FakeTelegramEntity(type: type, offset: offset, length: length)) }
        switch top.tag {
        case "i", "em": add("italic")
        case "b", "strong": add("bold")
        case "s", "strike", "del": add("strikethrough")
        case "u", "ins": add("underline")
        case "tg-spoiler", "span": add("spoiler")
        case "blockquote": add(top.expandable ? "expandable_blockquote" : "blockquote")
        case "tg-emoji":
            guard let id = Int64(top.argument), id != 0 else { throw ParseError(message: "Invalid custom emoji identifier specified") }
            entities.append(FakeTelegramEntity(type: "custom_emoji", offset: offset, length: length, customEmojiID: String(id)))
        case "a":
            var url = top.argument
            if url.isEmpty { url = String(decoding: result[top.beginByte...], as: UTF8.self) }
            if let user = userID(fromLink: url) {
                entities.append(FakeTelegramEntity(type: "text_mention", offset: offset, length: length, userID: user))
            } else if let checked = checkedLink(url) {
                entities.append(FakeTelegramEntity(type: "text_link", offset: offset, length: length, url: checked))
            }
        case "pre":
            if let last = entities.last, last.type == "code", last.offset == offset, last.length == length, last.language?.isEmpty == false {
                entities[entities.count - 1].type = "pre"
            } else {
                add("pre")
            }
        case "code":
            if let last = entities.last, last.type == "pre", last.offset == offset, last.length == length, !top.argument.isEmpty {
                entities[entities.count - 1].language = top.argument
            } else {
                entities.append(FakeTelegramEntity(type: "code", offset: offset, length: length, language: top.argument.isEmpty ? nil : top.argument))
            }
        default:
            break
        }
    }

    /// `tg://user?id=123` → 123.
    static func userID(fromLink url: String) -> Int64? {
        let lower = url.lowercased()
        guard lower.hasPrefix("tg://user?id=") else { return nil }
        guard let id = Int64(lower.dropFirst("tg://user?id=".count)), id > 0 else { return nil }
        return id
    }

    /// The link Telegram keeps for an `<a href>`: http(s), tg and ton links, and bare domains
    /// (made `http://…`); nil (the entity is dropped, the text stays) for anything else, such as
    /// `javascript:`.
    static func checkedLink(_ url: String) -> String? {
        let trimmed = url.strippedOfWhitespace
        guard !trimmed.isEmpty, !trimmed.unicodeScalars.contains(where: { $0.value < 0x21 }) else { return nil }
        if let range = trimmed.firstRange(of: "://") {
            let scheme = trimmed[..<range.lowerBound].lowercased()
            let rest = trimmed[range.upperBound...]
            switch scheme {
            case "http", "https":
                let host = rest.prefix { !"/?#".contains($0) }
                guard isHost(String(host)) else { return nil }
                return host.count < rest.count ? "\(scheme)://\(rest)" : "\(scheme)://\(rest)/"
            case "tg", "ton", "ftp":
                return rest.isEmpty ? nil : "\(scheme)://\(rest)"
            default:
                return nil
            }
        }
        if trimmed.contains(":") { return nil }
        let host = trimmed.prefix { !"/?#".contains($0) }
        guard isHost(String(host)) else { return nil }
        return host.count < trimmed.count ? "http://\(trimmed)" : "http://\(trimmed)/"
    }

    /// `example.com`, `a.b.example:8080`, `127.0.0.1`: labels of letters, digits and hyphens
    /// with at least one dot (a port allowed).
    private static func isHost(_ text: String) -> Bool {
        let hostPort = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        if hostPort.count == 2, hostPort[1].isEmpty || !hostPort[1].allSatisfy(\.isASCIIDigit) { return false }
        let labels = hostPort[0].split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2 else { return false }
        return labels.allSatisfy { label in
            !label.isEmpty && label.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" }
        }
    }

    /// TDLib's `decode_html_entity`: the code point and the index after it, or nil.
    private static func decodeEntity(_ text: [UInt8], at position: Int) -> (UInt32, Int)? {
        var end = position + 1
        var value: UInt64 = 0
        if text[position + 1] == ascii("#") {
            end += 1
            if text[position + 2] == ascii("x") {
                end += 1
                while let digit = hexValue(text[end]) {
                    value = min(value * 16 + UInt64(digit), 0xFFFF_FFFF)
                    end += 1
                }
            } else {
                while isDigit(text[end]) {
                    value = min(value * 10 + UInt64(text[end] - ascii("0")), 0xFFFF_FFFF)
                    end += 1
                }
            }
            if value == 0 || value >= 0x10FFFF || end - position >= 10 { return nil }
        } else {
            while isAlpha(text[end]) { end += 1 }
            switch String(decoding: text[(position + 1)..<end], as: UTF8.self) {
            case "lt": value = UInt64(ascii("<"))
            case "gt": value = UInt64(ascii(">"))
            case "amp": value = UInt64(ascii("&"))
            case "quot": value = UInt64(ascii("\""))
            default: return nil
            }
        }
        if text[end] == ascii(";") { end += 1 }
        return (UInt32(value), end)
    }

    /// `&name;`, `&#…;` or `&#x…;` that TDLib would keep as literal text; nil for a plain `&`.
    private static func unknownEntity(_ text: [UInt8], at position: Int) -> String? {
        var end = position + 1
        if text[end] == ascii("#") {
            end += 1
            if text[end] == ascii("x") { end += 1 }
            while isAlnum(text[end]) { end += 1 }
        } else {
            guard isAlpha(text[end]) else { return nil }
            while isAlnum(text[end]) { end += 1 }
        }
        guard text[end] == ascii(";") else { return nil }
        return String(decoding: text[position...end], as: UTF8.self)
    }

    private static func ascii(_ character: Unicode.Scalar) -> UInt8 { UInt8(character.value) }
    /// TDLib's `is_space`, NUL included.
    private static func isSpace(_ c: UInt8) -> Bool { c == 32 || c == 9 || c == 10 || c == 13 || c == 0 || c == 11 || c == 12 }
    private static func isDigit(_ c: UInt8) -> Bool { (48...57).contains(c) }
    private static func isAlpha(_ c: UInt8) -> Bool { (65...90).contains(c) || (97...122).contains(c) }
    private static func isAlnum(_ c: UInt8) -> Bool { isDigit(c) || isAlpha(c) }
    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: c - 48
        case 65...70: c - 55
        case 97...102: c - 87
        default: nil
        }
    }
    private static func lowercased(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes.map { isAlpha($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}

extension String {
    /// Without leading and trailing whitespace and newlines.
    fileprivate var strippedOfWhitespace: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(String.UnicodeScalarView(scalars[first...last]))
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
