import RelayCore

/// The relay's own words in Matrix's syntax: its help and errors name commands as `/translate`,
/// which a Matrix client takes as one of its own (and does not send); a room reads `!translate`.
///
/// Only what the relay writes (`info` and `error` replies, every reply's notes) is rewritten,
/// never a model's answer (a `result`'s body and title). A `/` counts as a command's when it
/// starts a word (after the text's start, a space, a backtick, a bracket or a quote) and a
/// lower-case letter follows: `/translate`, `` `/run name` `` — not the slashes of a web address
/// or a path (`https://…`, `a/b`).
enum MatrixCommandWords {
    static func rewrite(_ reply: Reply) -> Reply {
        var reply = reply
        // A reply's notes are the relay's own words whatever its kind ("Cut here: … read on with
        // `/history last 5`").
        reply.notes = reply.notes.map(rewrite)
        guard reply.kind != .result else { return reply }
        reply.title = reply.title.map(rewrite)
        reply.body = rewrite(reply.body)
        return reply
    }

    static func rewrite(_ text: String) -> String {
        guard text.contains("/") else { return text }
        var out = String.UnicodeScalarView()
        var previous: Unicode.Scalar?
        let scalars = Array(text.unicodeScalars)
        for (index, scalar) in scalars.enumerated() {
            let next = index + 1 < scalars.count ? scalars[index + 1] : nil
            let startsWord = previous.map { startsAfter.contains($0) || $0.properties.isWhitespace } ?? true
            if scalar == "/", startsWord, let next, ("a"..."z").contains(next) {
                out.append("!")
            } else {
                out.append(scalar)
            }
            previous = scalar
        }
        return String(out)
    }

    /// What may come right before a command's `/`, besides a space.
    static let startsAfter: Set<Unicode.Scalar> = ["`", "(", "[", "\"", "'", "“", "‘"]
}
