import Foundation

/// Commands typed `!translate fr …`, on the platforms whose clients keep `/…` for their own
/// commands and never send it: Matrix and IRC. Both read a message's `!word` and show the relay's
/// own words that way.
///
/// A `!word` that is not the relay's is left alone (`line`): other bots in the room use `!` too.
/// The relay's help and errors name commands as `/translate`; here they read `!translate`
/// (`rewrite`).
///
/// Only what the relay writes (`info` and `error` replies, every reply's notes) is rewritten,
/// never a model's answer (a `result`'s body and title). A `/` counts as a command's when it
/// starts a word (after the text's start, a space, a backtick, a bracket or a quote) and a
/// lower-case letter follows: `/translate`, `` `/run name` `` — not the slashes of a web address
/// or a path (`https://…`, `a/b`).
public enum BangCommands {
    public static let prefix = "!"

    /// `cmd rest` (after the `!`) as the relay's `/cmd rest`, when `cmd` is one of the relay's
    /// commands or `rhea` (the catch-all); nil for any other word.
    public static func line(_ text: String) -> String? {
        let word = text.prefix { !$0.isWhitespace }.lowercased()
        guard word == "rhea" || CommandTable.spec(named: word) != nil else { return nil }
        return "/" + text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    public static func rewrite(_ reply: Reply) -> Reply {
        var reply = reply
        // A reply's notes are the relay's own words whatever its kind ("Cut here: … read on with
        // `/history last 5`").
        reply.notes = reply.notes.map(rewrite)
        guard reply.kind != .result else { return reply }
        reply.title = reply.title.map(rewrite)
        reply.body = rewrite(reply.body)
        return reply
    }

    public static func rewrite(_ text: String) -> String {
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
