/// Splits raw text into pieces that fit a platform's limit once escaped — one splitter for every
/// platform, each giving its own escaped length.
///
/// Pieces are cut between characters (grapheme clusters) of the raw text and escaped only
/// afterwards, each whole, so a piece never ends inside a scalar, a surrogate pair or an escape,
/// which exist only once it is escaped. A character longer than the limit once escaped
/// (thousands of combining marks) is broken into runs of whole scalars that fit. A cut prefers
/// the end of a paragraph, then of a line, then of a word, as long as the piece stays at least
/// half full; otherwise it is cut at the limit. The whitespace a cut happens at, and at the end
/// of a piece, is dropped; leading spaces stay (indentation); every other character is kept, in
/// order.
public struct EscapedTextSplitter: Sendable {
    /// The length of a text once escaped, in the limit's unit (an upper bound is enough).
    let escapedLength: @Sendable (String) -> Int

    public init(escapedLength: @escaping @Sendable (String) -> Int) {
        self.escapedLength = escapedLength
    }

    /// The pieces, each at most `limit` once escaped (a piece holds at least one scalar).
    public func split(_ text: String, limit: Int) -> [String] {
        precondition(limit > 0, "a piece must hold something")
        // Most text fits whole: one piece, its trailing whitespace dropped, without walking it.
        if escapedLength(text) <= limit {
            guard let last = text.lastIndex(where: { !Self.isWhitespace(String($0)) }) else { return [] }
            return [String(text[...last])]
        }
        let units = self.units(of: text, limit: limit)
        let costs = units.map(escapedLength)
        var pieces: [String] = []
        var start = 0
        while start < units.count {
            var end = start
            var cost = 0
            while end < units.count, cost + costs[end] <= limit {
                cost += costs[end]
                end += 1
            }
            if end == units.count {
                Self.append(units[start..<end], to: &pieces)
                break
            }
            let (cut, next) = Self.boundary(in: units, start: start, end: end)
            Self.append(units[start..<cut], to: &pieces)
            start = next
        }
        return pieces
    }

    /// `text` cut to `limit` once escaped, ending with "…" when something was cut.
    public func truncate(_ text: String, limit: Int) -> String {
        let pieces = split(text, limit: limit)
        guard pieces.count > 1 else { return pieces.first ?? "" }
        return (limit > 1 ? split(text, limit: limit - 1).first ?? "" : "") + "…"
    }

    /// Where the piece `start..<end` ends (`end` being the first unit that does not fit), and
    /// where the next starts.
    private static func boundary(in units: [String], start: Int, end: Int) -> (cut: Int, next: Int) {
        let minimum = start + max(1, (end - start) / 2)
        func last(where isBoundary: (Int) -> Bool) -> Int? {
            stride(from: end, through: minimum, by: -1).first(where: isBoundary)
        }
        if let cut = last(where: { isNewline(units[$0]) && $0 > start && isNewline(units[$0 - 1]) }) {
            // A blank line: the piece ends before it, the next starts after all its newlines.
            var first = cut
            while first > start, isNewline(units[first - 1]) { first -= 1 }
            var next = cut
            while next < units.count, isNewline(units[next]) { next += 1 }
            return (first, next)
        }
        if let cut = last(where: { isNewline(units[$0]) }) { return (cut, cut + 1) }
        if let cut = last(where: { isWhitespace(units[$0]) }) { return (cut, cut + 1) }
        return (end, end)
    }

    /// Adds a piece without its trailing whitespace.
    private static func append(_ units: ArraySlice<String>, to pieces: inout [String]) {
        guard let last = units.lastIndex(where: { !isWhitespace($0) }) else { return }
        pieces.append(units[...last].joined())
    }

    // By scalars: a space followed by a combining mark is one `Character` that Swift calls
    // whitespace, and dropping it would drop the mark too.
    private static func isNewline(_ unit: String) -> Bool {
        !unit.isEmpty && unit.unicodeScalars.allSatisfy { $0 == "\n" || $0 == "\r" || $0 == "\u{2028}" || $0 == "\u{2029}" || $0 == "\u{85}" }
    }

    private static func isWhitespace(_ unit: String) -> Bool {
        !unit.isEmpty && unit.unicodeScalars.allSatisfy(\.properties.isWhitespace)
    }

    /// The text's characters, except that one longer than `limit` once escaped is broken into
    /// runs of whole scalars that fit.
    private func units(of text: String, limit: Int) -> [String] {
        var out: [String] = []
        for character in text {
            let unit = String(character)
            guard escapedLength(unit) > limit else {
                out.append(unit)
                continue
            }
            var run = ""
            var runCost = 0
            for scalar in character.unicodeScalars {
                let cost = escapedLength(String(scalar))
                if !run.isEmpty, runCost + cost > limit {
                    out.append(run)
                    run = ""
                    runCost = 0
                }
                run.unicodeScalars.append(scalar)
                runCost += cost
            }
            if !run.isEmpty { out.append(run) }
        }
        return out
    }
}

/// Escapes text one Unicode scalar at a time: the primitive every renderer's output safety
/// stands on (Slack's `& < >`, and the escapes later platforms need).
///
/// Never by `Character`: a grapheme cluster can hold a `<` together with a Unicode "Prepend"
/// character before it or a combining mark after it (`"\u{600}<"`, `"<\u{301}"`), and such a
/// cluster is not equal to `"<"`, so an escaper that compares characters lets it through — and
/// the platform, which reads scalars, sees a raw `<`. Comparing scalars cannot be fooled that way.
public struct ScalarEscaper: Sendable {
    /// What each special scalar is written as; every other scalar is kept as it is.
    public let replacements: [Unicode.Scalar: String]
    /// The replacements of ASCII scalars, by value, when every special scalar is ASCII: then the
    /// text is walked as UTF-8 bytes, where a byte below 0x80 is always a whole scalar (never
    /// part of a longer one) — the same scalars, compared without decoding or hashing.
    private let ascii: [[UInt8]?]?
    /// For each ASCII special scalar, how many UTF-16 units its replacement adds beyond its own one.
    private let asciiExtraUTF16: [Int]

    public init(_ replacements: [Unicode.Scalar: String]) {
        self.replacements = replacements
        var table: [[UInt8]?] = Array(repeating: nil, count: 128)
        var extra = Array(repeating: 0, count: 128)
        for (scalar, replacement) in replacements where scalar.isASCII {
            table[Int(scalar.value)] = Array(replacement.utf8)
            extra[Int(scalar.value)] = replacement.utf16.count - 1
        }
        ascii = replacements.keys.allSatisfy(\.isASCII) ? table : nil
        asciiExtraUTF16 = extra
    }

    /// `text` with every special scalar replaced.
    public func escape(_ text: some StringProtocol) -> String {
        guard let ascii else { return escapeScalars(text) }
        var out: [UInt8] = []
        var changed = false
        for byte in text.utf8 {
            if byte < 0x80, let replacement = ascii[Int(byte)] {
                if !changed {
                    changed = true
                    out.reserveCapacity(text.utf8.count + 16)
                    // Everything before the first special byte, unchanged.
                    out += text.utf8.prefix { $0 >= 0x80 || ascii[Int($0)] == nil }
                }
                out += replacement
            } else if changed {
                out.append(byte)
            }
        }
        return changed ? String(decoding: out, as: UTF8.self) : String(text)
    }

    /// How many UTF-16 code units `text` takes once escaped (the unit Slack and Discord count
    /// their limits in).
    public func escapedUTF16Count(_ text: some StringProtocol) -> Int {
        guard ascii != nil else {
            return text.unicodeScalars.reduce(0) { total, scalar in
                total + (replacements[scalar].map { $0.utf16.count } ?? scalar.utf16.count)
            }
        }
        var extra = 0
        for byte in text.utf8 where byte < 0x80 { extra += asciiExtraUTF16[Int(byte)] }
        return text.utf16.count + extra
    }

    private func escapeScalars(_ text: some StringProtocol) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if let replacement = replacements[scalar] {
                out.append(contentsOf: replacement.unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }
}
