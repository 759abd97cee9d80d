import Foundation
import MattermostAdapter
import RelayCore
import RelayTestSupport
import Testing

/// Reads a rendered Mattermost message the way Mattermost could misread it: any markup, HTML,
/// Slack-style `<…>` translation, entity or mention that the relay did not write is a problem.
///
/// Allowed: backslash escapes (the next scalar is literal), `&lt;`, `&gt;`, `&amp;`, an `@`
/// followed by U+200B, and, inside a web address (`http://` or `https://` up to whitespace),
/// `_ * ~ #` and `@` as they are; an `@` between an e-mail address's local part and its dotted
/// domain. The title's `**…**` on the first line of the first message, when `bold` says so.
enum MattermostMarkdownReader {
    static let markup: Set<Unicode.Scalar> = ["*", "_", "~", "`", "|", "#", "[", "]"]
    static let keptInAddresses: Set<Unicode.Scalar> = ["*", "_", "~", "#", "@"]

    static func problems(in message: String, bold: Bool = false) -> [String] {
        // By scalars throughout: a combining mark or a Prepend scalar next to `*` must not hide it.
        var scalars = Array(message.unicodeScalars)
        if bold, scalars.starts(with: ["*", "*"]) {
            let lineEnd = scalars.firstIndex(of: "\n") ?? scalars.count
            guard lineEnd >= 4, scalars[lineEnd - 2] == "*", scalars[lineEnd - 1] == "*" else { return ["a bold title that does not close"] }
            scalars.removeSubrange((lineEnd - 2)..<lineEnd)
            scalars.removeFirst(2)
        }
        var problems: [String] = []
        var index = 0
        var addressEnd = -1
        while index < scalars.count {
            let scalar = scalars[index]
            if index > addressEnd, startsAddress(scalars, at: index) {
                var end = index
                while end + 1 < scalars.count, !scalars[end + 1].properties.isWhitespace { end += 1 }
                // Mattermost links only a host of letters, digits, `-` and `.`; anything else is
                // text, where an `@` pings and markup is markup.
                if linksHost(scalars[index...end]) { addressEnd = end }
            }
            let inAddress = index <= addressEnd
            switch scalar {
            case "\\":
                index += 2
                continue
            case "<", ">":
                problems.append("a raw \(scalar) at \(index)")
            case "&":
                let entity = ["&lt;", "&gt;", "&amp;"].contains { scalars[index...].starts(with: $0.unicodeScalars) }
                if !entity { problems.append("a raw & at \(index)") }
            case "@":
                let neutralised = index + 1 < scalars.count && scalars[index + 1] == "\u{200B}"
                if !neutralised && !inAddress && !isEmail(scalars, at: index) { problems.append("a live @ at \(index)") }
            default:
                if markup.contains(scalar), !(inAddress && keptInAddresses.contains(scalar)) { problems.append("markup \(scalar) at \(index)") }
            }
            index += 1
        }
        return problems
    }

    /// The host after `://`, up to `/ : ? #`: Mattermost's autolinker takes a dotted name of
    /// ASCII letters, digits and `-` (or `localhost`) — not `a_b`, not `x_y.example.com`.
    static func linksHost(_ address: ArraySlice<Unicode.Scalar>) -> Bool {
        let text = String(String.UnicodeScalarView(address)).lowercased()
        guard let scheme = text.range(of: "://") else { return false }
        let host = text[scheme.upperBound...].prefix { !"/:?#".contains($0) }
        guard !host.isEmpty, host.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "." }) else {
            return false
        }
        return host.contains(".") || host == "localhost"
    }

    static func startsAddress(_ scalars: [Unicode.Scalar], at index: Int) -> Bool {
        let rest = String(String.UnicodeScalarView(scalars[index...].prefix(8))).lowercased()
        return rest.hasPrefix("http://") || rest.hasPrefix("https://")
    }

    /// `local@domain.tld`: a letter, digit or `._-+` before, a dotted domain after.
    static func isEmail(_ scalars: [Unicode.Scalar], at index: Int) -> Bool {
        guard index > 0 else { return false }
        let before = scalars[index - 1]
        guard before.properties.isAlphabetic || before.properties.numericType != nil || "._-+".unicodeScalars.contains(before) else { return false }
        let domain = String(
            String.UnicodeScalarView(
                scalars[(index + 1)...].prefix { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "." || $0 == "-") }))
        let trimmed = domain.reversed().drop { $0 == "." }
        return String(trimmed.reversed()).dropFirst().contains(".")
    }
}

/// Rendering holds for any text: 100 000 hostile strings escaped, and 2 000 whole replies. A live
/// `@` (no U+200B after it, outside an address or an e-mail address) is a failure, so `@channel`,
/// `@all`, `@here` and `@alice` cannot survive; nor can `*`, `_`, `~`, backticks, `|`, `#`, `[`,
/// `]` without their backslash, nor a raw `<`, `>` or `&`.
@Suite("Mattermost output safety, for any text")
struct MattermostOutputSafetyPropertyTests {
    static let alphabet: [String] =
        [
            "@channel", "@all", "@here", "@alice", "@", "@@", "x@here", "ada@example.com", "a@b", "@\u{301}channel", "<!channel>", "<!here|here>",
            "<https://evil.example|click me>", "[bank](https://evil.example)", "![i](http://e.example/i.png)", "**", "*", "_", "~", "~~", "~town-square", "`",
            "```", "|", "#", "# ", "#tag", "\\", "&", "&lt;", "&amp;", "&#64;", "<", ">", "https://example.com/a_b*c~d#e@f", "https://a_b/@channel",
            "https://x_y.example.com/@channel", "http://localhost:8065/@here",
            "https://ex.com:8080/@all", "https://u@ex.com/", "http://", ")", "]", "(", " ", "\n",
            "\u{200B}", "\u{301}", "\u{600}", "😀", "é", ":smile:", "$x$", "fact-check #9", "a", "Z", "7", ".",
        ]

    /// The alphabet and odd web addresses with mentions around them (`HostileURLs`, issue 47,
    /// point 1), for the bodies of whole replies: long enough to hold many addresses each.
    static let withAddresses = alphabet + HostileURLs.pieces

    @Test func aHundredThousandHostileStringsRenderWithoutMarkupOrMentions() async throws {
        // A thread of its own: the loop would hold a thread of the pool every test shares.
        let failures = try await offThePool { Self.hundredThousandStrings() }
        #expect(failures.isEmpty, "\(failures.prefix(10).joined(separator: "\n"))")
    }

    static func hundredThousandStrings() -> [String] {
        var random = SplitMix64(seed: 0x3A77_E2B0_57)
        var failures: [String] = []
        for _ in 0..<100_000 {
            let text = random.text(from: Self.alphabet, tokens: 12)
            let escaped = MattermostMarkdown.escape(text)
            let problems = MattermostMarkdownReader.problems(in: escaped)
            if !problems.isEmpty { failures.append("\(problems) in \(text.debugDescription) → \(escaped.debugDescription)") }
            if !text.unicodeScalars.contains("\u{200B}"), MattermostMarkdown.unescape(escaped) != text {
                failures.append("round trip of \(text.debugDescription)")
            }
            if failures.count > 10 { break }
        }
        return failures
    }

    @Test func wholeRepliesHoldOnlyTheTitlesBoldAndFitTheLimit() async throws {
        let failures = try await offThePool { Self.wholeReplies() }
        #expect(failures.isEmpty, "\(failures.prefix(10).joined(separator: "\n"))")
    }

    static func wholeReplies() -> [String] {
        var random = SplitMix64(seed: 0xFEED_0BAD)
        var failures: [String] = []
        for round in 0..<2_000 {
            let body = random.text(from: Self.withAddresses, tokens: round % 100 == 0 ? 9000 : 40)
            let title = random.text(from: Self.alphabet, tokens: 5)
            let footer = random.dissentingFooter(answer: body, from: Self.alphabet)
            let reply = Reply(kind: .result, title: title, body: body, footer: footer, notes: [random.text(from: Self.alphabet, tokens: 6)])
            let messages = MattermostRenderer.render(reply, limit: round % 100 == 0 ? MattermostLimits.postRunes : 400)
            for (index, message) in messages.enumerated() {
                let problems = MattermostMarkdownReader.problems(in: message, bold: index == 0)
                if !problems.isEmpty { failures.append("\(problems) in a reply to \(body.prefix(200).debugDescription)") }
                let limit = round % 100 == 0 ? MattermostLimits.postRunes : 400
                if message.unicodeScalars.count > limit { failures.append("\(message.unicodeScalars.count) runes over \(limit)") }
            }
            if failures.count > 10 { break }
        }
        return failures
    }
}
