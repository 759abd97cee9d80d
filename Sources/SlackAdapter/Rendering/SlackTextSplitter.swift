import RelayCore

/// Splits text that will be escaped for mrkdwn into pieces that fit a limit once escaped.
///
/// Splits happen between characters (grapheme clusters) of the raw text, so a piece never ends
/// inside a multi-byte character, and never inside an escape entity, which exists only after
/// each piece is escaped whole (scalar by scalar, and counted that way). A split prefers the end of a paragraph, then of a line, then of a
/// word, as long as the piece stays at least half full; otherwise the piece is cut at the limit.
/// The whitespace a split happens at, and at the end of a piece, is dropped; every other
/// character is kept, in order.
enum SlackTextSplitter {
    static func split(_ text: String, limit: Int) -> [String] {
        precondition(limit > 0, "a piece must hold something")
        // Most text fits whole: one piece, its trailing whitespace dropped as below, without
        // walking its characters.
        if SlackMrkdwn.escaper.escapedUTF16Count(text) <= limit {
            guard let last = text.lastIndex(where: { !$0.isWhitespace }) else { return [] }
            return [String(text[...last])]
        }
        let characters = units(of: text, limit: limit)
        let costs = characters.map { $0.reduce(0) { $0 + SlackMrkdwn.escapedLength($1) } }
        var pieces: [String] = []
        var start = 0
        while start < characters.count {
            var end = start
            var cost = 0
            while end < characters.count, cost + costs[end] <= limit {
                cost += costs[end]
                end += 1
            }
            if end == characters.count {
                appendPiece(characters[start..<end], to: &pieces)
                break
            }
            let (cut, next) = boundary(in: characters, start: start, end: end)
            appendPiece(characters[start..<cut], to: &pieces)
            start = next
        }
        return pieces
    }

    /// The text cut to `limit` once escaped, ending with "…" when something was cut.
    static func truncate(_ text: String, limit: Int) -> String {
        let pieces = split(text, limit: limit)
        guard pieces.count > 1 else { return pieces.first ?? "" }
        return split(text, limit: limit - 1).first.map { $0 + "…" } ?? "…"
    }

    /// Where to end the piece `start..<end` (`end` being the first character that does not fit),
    /// and where the next piece starts.
    private static func boundary(in characters: [String], start: Int, end: Int) -> (cut: Int, next: Int) {
        let minimum = start + max(1, (end - start) / 2)
        func last(where isBoundary: (Int) -> Bool) -> Int? {
            stride(from: end, through: minimum, by: -1).first(where: isBoundary)
        }
        // A blank line: cut before it, start the next piece after all of its newlines.
        if let cut = last(where: { isNewline(characters[$0]) && $0 + 1 < characters.count && isNewline(characters[$0 + 1]) }) {
            var next = cut
            while next < characters.count, isNewline(characters[next]) { next += 1 }
            return (cut, next)
        }
        if let cut = last(where: { isNewline(characters[$0]) }) {
            return (cut, cut + 1)
        }
        if let cut = last(where: { isWhitespace(characters[$0]) }) {
            return (cut, cut + 1)
        }
        return (end, end)
    }

    /// Adds a piece without its trailing whitespace (Slack would drop it anyway); leading spaces
    /// stay, as they may be indentation.
    private static func appendPiece(_ units: ArraySlice<String>, to pieces: inout [String]) {
        guard let last = units.lastIndex(where: { !isWhitespace($0) }) else { return }
        pieces.append(units[...last].joined())
    }

    private static func isNewline(_ unit: String) -> Bool { unit.count == 1 && unit.first!.isNewline }
    private static func isWhitespace(_ unit: String) -> Bool { unit.count == 1 && unit.first!.isWhitespace }

    /// The text's characters (grapheme clusters), except that a character longer than `limit`
    /// once escaped (one with thousands of combining marks) is broken into runs of whole Unicode
    /// scalars that fit, so no piece can be over the limit.
    private static func units(of text: String, limit: Int) -> [String] {
        var out: [String] = []
        for character in text {
            guard SlackMrkdwn.escapedLength(character) > limit else {
                out.append(String(character))
                continue
            }
            var run = ""
            var runCost = 0
            for scalar in character.unicodeScalars {
                // Counted escaped: a cluster may hold `&`, `<` or `>` scalars too.
                let cost = SlackMrkdwn.escaper.escapedUTF16Count(String(scalar))
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
