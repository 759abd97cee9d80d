/// XMPP's XML stream, read as it arrives (RFC 6120 §4, §11): the stream's opening tag, then one
/// complete stanza (a child of the stream element, with everything in it) at a time, then the
/// stream's end. Bytes come in pieces of any size; nothing waits for the stream to end, which
/// happens only when the session does.
///
/// XMPP forbids most of XML (§11.1: no comments, processing instructions, DTDs, or entities but
/// the five predefined), so this reads exactly what it allows — elements, attributes in either
/// quote, character data, character references, the predefined entities and CDATA sections — and
/// refuses the rest as malformed, as the RFC has a server do. Foundation's `XMLParser` reads a
/// whole document, and no package of the stack reads XML: this is the one reader of the stream.
///
/// Bounded: a stanza past `maximumStanzaBytes` (Prosody's default limit), nesting past
/// `maximumDepth`, a name or an attribute count past their limits, or bytes that are not UTF-8
/// end the stream with an error, never an unbounded buffer.
struct XMLStreamParser: Sendable {
    enum Event: Sendable, Hashable {
        case streamOpened(XMLElement)
        case stanza(XMLElement)
        case streamClosed
    }

    struct Malformed: Error, Hashable, CustomStringConvertible {
        var reason: String
        var description: String { "malformed XML stream: \(reason)" }
    }

    static let streamNamespace = "http://etherx.jabber.org/streams"
    static let maximumStanzaBytes = 256 * 1024
    static let maximumDepth = 64
    static let maximumNameBytes = 256
    static let maximumAttributes = 64

    /// Bytes not yet read as a whole token.
    private var pending: [UInt8] = []
    /// Open elements below the stream element (the stanza being read), innermost last.
    private var open: [XMLElement] = []
    /// Namespace scopes: the stream's, then one per open element. Prefix ("" the default) → URI.
    private var scopes: [[String: String]] = []
    private var streamOpen = false
    private(set) var ended = false
    /// Bytes of the stanza being read so far.
    private var stanzaBytes = 0

    init() {}

    /// Reads `bytes`, returning every event they complete, in order.
    mutating func feed(_ bytes: some Sequence<UInt8>) throws(Malformed) -> [Event] {
        guard !ended else { throw Malformed(reason: "data after the stream's end") }
        pending.append(contentsOf: bytes)
        var events: [Event] = []
        var cursor = 0
        while cursor < pending.count && !ended {
            if pending[cursor] == UInt8(ascii: "<") {
                guard let end = tagEnd(from: cursor) else { break }
                let token = pending[cursor..<end]
                cursor = end
                if let event = try tag(token) { events.append(event) }
            } else {
                // Text is read when the tag after it has begun: a character reference or a UTF-8
                // sequence cut at the end of this piece is read whole with the next. Between
                // stanzas only whitespace may come: anything else is refused at once.
                guard let end = pending[cursor...].firstIndex(of: UInt8(ascii: "<")) else {
                    if open.isEmpty, pending[cursor...].contains(where: { !" \t\r\n".utf8.contains($0) }) {
                        throw Malformed(reason: "character data outside a stanza")
                    }
                    break
                }
                try text(pending[cursor..<end])
                cursor = end
            }
        }
        pending.removeFirst(cursor)
        if !open.isEmpty || !pending.isEmpty, stanzaBytes + pending.count > Self.maximumStanzaBytes {
            throw Malformed(reason: "a stanza longer than \(Self.maximumStanzaBytes) bytes")
        }
        return events
    }

    /// The end of the token starting at `start` (one past its `>`), or nil when it has not all come.
    private func tagEnd(from start: Int) -> Int? {
        let cdata = Array("<![CDATA[".utf8)
        if pending.count - start >= cdata.count, pending[start..<(start + cdata.count)].elementsEqual(cdata) {
            var index = start + cdata.count
            while index + 2 < pending.count {
                if pending[index] == UInt8(ascii: "]") && pending[index + 1] == UInt8(ascii: "]") && pending[index + 2] == UInt8(ascii: ">") {
                    return index + 3
                }
                index += 1
            }
            return nil
        }
        var quote: UInt8?
        var index = start + 1
        while index < pending.count {
            let byte = pending[index]
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: ">") {
                return index + 1
            }
            index += 1
        }
        return nil
    }

    // MARK: Tags

    private mutating func tag(_ token: ArraySlice<UInt8>) throws(Malformed) -> Event? {
        if !open.isEmpty { try count(token.count) }
        if token.starts(with: Array("<![CDATA[".utf8)) {
            guard !open.isEmpty else { throw Malformed(reason: "character data outside a stanza") }
            guard let text = String(validating: token.dropFirst(9).dropLast(3), as: UTF8.self) else {
                throw Malformed(reason: "bytes that are not UTF-8")
            }
            open[open.count - 1].text += text
            return nil
        }
        if token.starts(with: Array("<?xml ".utf8)) || token.starts(with: Array("<?xml?".utf8)) {
            // The XML declaration, before the stream's tag only.
            guard !streamOpen, token.dropLast().last == UInt8(ascii: "?") else { throw Malformed(reason: "a processing instruction") }
            return nil
        }
        if token.starts(with: Array("<!".utf8)) { throw Malformed(reason: "a comment or a DTD") }
        if token.starts(with: Array("<?".utf8)) { throw Malformed(reason: "a processing instruction") }
        guard let body = String(validating: token.dropFirst().dropLast(), as: UTF8.self) else { throw Malformed(reason: "bytes that are not UTF-8") }
        if body.unicodeScalars.first == "/" { return try close(String(body.unicodeScalars.dropFirst()).trimmingXMLSpace) }
        let selfClosing = body.unicodeScalars.last == "/"
        let element = try start(selfClosing ? String(body.unicodeScalars.dropLast()) : body)
        if !streamOpen {
            guard element.name == "stream", element.namespace == Self.streamNamespace, !selfClosing else {
                throw Malformed(reason: "a stream that does not start with <stream:stream>")
            }
            streamOpen = true
            return .streamOpened(element)
        }
        if open.isEmpty { stanzaBytes = token.count }
        if selfClosing {
            scopes.removeLast()
            if open.isEmpty {
                stanzaBytes = 0
                return .stanza(element)
            }
            open[open.count - 1].children.append(element)
            return nil
        }
        guard open.count < Self.maximumDepth else { throw Malformed(reason: "elements nested deeper than \(Self.maximumDepth)") }
        open.append(element)
        return nil
    }

    private mutating func count(_ bytes: Int) throws(Malformed) {
        stanzaBytes += bytes
        if stanzaBytes > Self.maximumStanzaBytes { throw Malformed(reason: "a stanza longer than \(Self.maximumStanzaBytes) bytes") }
    }

    /// An opening tag's name and attributes, its namespaces resolved; pushes its scope.
    ///
    /// Read scalar by scalar, never by `Character`: a combining mark after a quote or a `;`
    /// would join it into one grapheme and hide it.
    private mutating func start(_ body: String) throws(Malformed) -> XMLElement {
        var scanner = Substring(body).unicodeScalars
        let qualified = String(Substring(scanner.prefix { !$0.isXMLSpace }))
        scanner = scanner.dropFirst(qualified.unicodeScalars.count)
        guard !qualified.isEmpty, qualified.utf8.count <= Self.maximumNameBytes, !qualified.contains("=") else {
            throw Malformed(reason: "an element without a name")
        }
        var attributes: [(String, String)] = []
        while true {
            scanner = scanner.drop { $0.isXMLSpace }
            if scanner.isEmpty { break }
            let name = String(Substring(scanner.prefix { $0 != "=" && !$0.isXMLSpace }))
            guard !name.isEmpty, name.utf8.count <= Self.maximumNameBytes else { throw Malformed(reason: "an attribute without a name") }
            scanner = scanner.dropFirst(name.unicodeScalars.count).drop { $0.isXMLSpace }
            guard scanner.first == "=" else { throw Malformed(reason: "the attribute \(name) without a value") }
            scanner = scanner.dropFirst().drop { $0.isXMLSpace }
            guard let quote = scanner.first, quote == "\"" || quote == "'" else { throw Malformed(reason: "an attribute value without quotes") }
            scanner = scanner.dropFirst()
            guard let close = scanner.firstIndex(of: quote) else { throw Malformed(reason: "an attribute value without its closing quote") }
            let raw = Substring(scanner[..<close])
            guard !raw.unicodeScalars.contains("<") else { throw Malformed(reason: "a `<` in an attribute value") }
            attributes.append((name, try Self.unescape(raw)))
            scanner = scanner[scanner.index(after: close)...]
            guard attributes.count <= Self.maximumAttributes else { throw Malformed(reason: "more than \(Self.maximumAttributes) attributes") }
        }
        var scope = scopes.last ?? ["xml": "http://www.w3.org/XML/1998/namespace"]
        var plain: [String: String] = [:]
        for (name, value) in attributes {
            if name == "xmlns" {
                scope[""] = value
            } else if name.hasPrefix("xmlns:") {
                scope[String(name.dropFirst(6))] = value
            } else {
                guard plain[name] == nil else { throw Malformed(reason: "the attribute \(name) twice") }
                plain[name] = value
            }
        }
        let parts = qualified.split(separator: ":", maxSplits: 1)
        let (prefix, local) = parts.count == 2 ? (String(parts[0]), String(parts[1])) : ("", String(qualified))
        guard let namespace = scope[prefix] else { throw Malformed(reason: "the undeclared prefix \(prefix):") }
        scopes.append(scope)
        return XMLElement(name: local, namespace: namespace, attributes: plain)
    }

    private mutating func close(_ qualified: String) throws(Malformed) -> Event? {
        let local = qualified.split(separator: ":").last.map(String.init) ?? qualified
        guard let element = open.popLast() else {
            guard streamOpen, local == "stream" else { throw Malformed(reason: "</\(qualified)> with nothing open") }
            ended = true
            return .streamClosed
        }
        guard local == element.name else { throw Malformed(reason: "</\(qualified)> closing <\(element.name)>") }
        scopes.removeLast()
        if open.isEmpty {
            stanzaBytes = 0
            return .stanza(element)
        }
        open[open.count - 1].children.append(element)
        return nil
    }

    // MARK: Text

    private mutating func text(_ bytes: ArraySlice<UInt8>) throws(Malformed) {
        guard let raw = String(validating: bytes, as: UTF8.self) else { throw Malformed(reason: "bytes that are not UTF-8") }
        guard !open.isEmpty else {
            // Between stanzas only whitespace may come (a keepalive).
            guard raw.unicodeScalars.allSatisfy(\.isXMLSpace) else { throw Malformed(reason: "character data outside a stanza") }
            return
        }
        try count(bytes.count)
        open[open.count - 1].text += try Self.unescape(Substring(raw))
    }

    /// `&lt;` `&gt;` `&amp;` `&quot;` `&apos;` and character references; any other entity is
    /// refused (XMPP has no DTD to define one). Read by scalars, as `start`.
    static func unescape(_ raw: Substring) throws(Malformed) -> String {
        let scalars = raw.unicodeScalars
        guard scalars.contains("&") else { return String(raw) }
        var out = String.UnicodeScalarView()
        var rest = scalars[...]
        while let amp = rest.firstIndex(of: "&") {
            out.append(contentsOf: rest[..<amp])
            guard let semicolon = rest[amp...].firstIndex(of: ";"), rest.distance(from: amp, to: semicolon) <= 12 else {
                throw Malformed(reason: "an `&` that starts no entity")
            }
            let name = String(Substring(rest[rest.index(after: amp)..<semicolon]))
            switch name {
            case "lt": out.append("<")
            case "gt": out.append(">")
            case "amp": out.append("&")
            case "quot": out.append("\"")
            case "apos": out.append("'")
            default:
                guard name.hasPrefix("#") else { throw Malformed(reason: "the entity &\(name); (XMPP allows only the predefined five)") }
                let digits = name.dropFirst()
                let value = digits.hasPrefix("x") ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits)
                guard let value, let scalar = Unicode.Scalar(value), isXMLCharacter(scalar) else {
                    throw Malformed(reason: "the character reference &\(name);")
                }
                out.append(scalar)
            }
            rest = rest[rest.index(after: semicolon)...]
        }
        out.append(contentsOf: rest)
        return String(out)
    }

    /// XML 1.0's Char: tab, LF, CR and from space on, less the surrogates and U+FFFE, U+FFFF.
    static func isXMLCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x9, 0xA, 0xD, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: true
        default: false
        }
    }
}

/// One element of a stanza, with its namespace resolved.
struct XMLElement: Sendable, Hashable {
    var name: String
    var namespace: String
    var attributes: [String: String]
    var children: [XMLElement]
    /// Its character data, all of it (XMPP's elements hold text or children, rarely both).
    var text: String

    init(name: String, namespace: String, attributes: [String: String] = [:], children: [XMLElement] = [], text: String = "") {
        self.name = name
        self.namespace = namespace
        self.attributes = attributes
        self.children = children
        self.text = text
    }

    /// The first child called `name` (in `namespace`, when given).
    func child(_ name: String, namespace: String? = nil) -> XMLElement? {
        children.first { $0.name == name && (namespace == nil || $0.namespace == namespace) }
    }

    subscript(attribute name: String) -> String? { attributes[name] }
}

extension Unicode.Scalar {
    var isXMLSpace: Bool { self == " " || self == "\t" || self == "\n" || self == "\r" }
}

extension StringProtocol {
    /// Without XML's white space at either end (scalar by scalar).
    var trimmingXMLSpace: String {
        String(String.UnicodeScalarView(unicodeScalars.drop { $0.isXMLSpace }.reversed().drop { $0.isXMLSpace }.reversed()))
    }
}
