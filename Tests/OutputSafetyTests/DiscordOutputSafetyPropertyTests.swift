import RelayCore
import RelayTestSupport
import Testing

@testable import DiscordAdapter

/// Escaping and splitting hold for any text: 200 000 strings from an alphabet rich in what breaks
/// escapers — Discord's markdown and mention syntax, web addresses around them, Unicode
/// "Prepend" scalars (which glue onto what follows), combining marks, ZWJ, direction marks,
/// spaces JavaScript counts as whitespace, and the neighbours of the surrogate range.
@Suite("Discord output safety, for any text")
struct DiscordOutputSafetyPropertyTests {
    static let alphabet: [String] =
        [
            "*", "_", "~", "`", "|", ">", "#", "[", "]", "(", ")", "<", "@", "\\", ":", "/", ".", ",", "-", " ", "\n", "a", "Z", "7",
            "everyone", "here", "<@123>", "<@!1>", "<@&2>", "<#3>", "<t:4:R>", "</help:5>", "<:e:6>", "[x](https://y.z)", "||", "```", "**", "-# ",
            "https://", "http://", "HTTPS://", "https://a.b/", "ex.com/x_y", "\u{200B}", "\u{00A0}", "\u{3000}", "\u{FEFF}",
            "\u{600}", "\u{605}", "\u{110BD}", "\u{D4A}",  // Prepend
            "\u{301}", "\u{20E3}", "\u{FE0F}", "\u{200D}",  // Extend, ZWJ, selectors
            "\u{200E}", "\u{202E}", "\u{2066}",  // direction marks
            "\u{D7FF}", "\u{E000}", "\u{FFFD}", "\u{10FFFF}", "😀", "👩‍💻", "🇫🇷",
        ]

    /// The alphabet and odd web addresses with mentions around them (`HostileURLs`, issue 47,
    /// point 1), for the bodies of whole replies: long enough to hold many addresses each.
    static let withAddresses = alphabet + HostileURLs.pieces

    static let escapable: Set<Unicode.Scalar> = ["\\", "*", "_", "~", "`", "|", ">", "#", "[", "]", "<"]
    /// Formatting characters Discord does not apply inside a link.
    static let linkSafe: Set<Unicode.Scalar> = ["*", "_", "~", "#"]

    /// What Discord would turn into a link, read the way its parser does
    /// (`https?://[^\s<]+[^<.,:;"')\]\s]`), as scalar ranges of `scalars`.
    static func links(in scalars: [Unicode.Scalar]) -> [Range<Int>] {
        func isAlphanumeric(_ scalar: Unicode.Scalar) -> Bool { scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)) }
        func isSpace(_ scalar: Unicode.Scalar) -> Bool { scalar.properties.isWhitespace || scalar == "\u{FEFF}" }
        var ranges: [Range<Int>] = []
        var index = 0
        while index < scalars.count {
            // Only an `h` or `H` lowercases to a string whose first character is `h`: the string
            // below is made only there, not at every scalar (where it took most of this suite's
            // time); what it decides is unchanged.
            guard scalars[index] == "h" || scalars[index] == "H" else {
                index += 1
                continue
            }
            let rest = String(String.UnicodeScalarView(scalars[index..<min(scalars.count, index + 8)])).lowercased()
            let scheme = rest.hasPrefix("https://") ? 8 : rest.hasPrefix("http://") ? 7 : 0
            guard scheme > 0, index == 0 || !isAlphanumeric(scalars[index - 1]) else {
                index += 1
                continue
            }
            var end = index + scheme
            while end < scalars.count, !isSpace(scalars[end]), scalars[end] != "<" { end += 1 }
            var last = end
            while last > index + scheme, ".,:;\"')]".unicodeScalars.contains(scalars[last - 1]) { last -= 1 }
            if last - (index + scheme) >= 2 { ranges.append(index..<last) }
            index = max(end, index + 1)
        }
        return ranges
    }

    /// What is wrong with `escaped`, read as Discord would: a markdown or mention character not
    /// escaped (outside a link, for those a link keeps literal), a backslash escaping nothing
    /// (a cut escape), or an `@` without the zero-width space that defuses `@everyone`.
    static func problem(in escaped: String) -> String? {
        let scalars = Array(escaped.unicodeScalars)
        let linked = links(in: scalars)
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "\\" {
                guard index + 1 < scalars.count, escapable.contains(scalars[index + 1]) else { return "a lone backslash at scalar \(index)" }
                index += 2
                continue
            }
            if scalar == "@", index + 1 >= scalars.count || scalars[index + 1] != "\u{200B}" {
                // Left whole only inside a link or an e-mail address, and never as `@everyone`/`@here`.
                let next = String(String.UnicodeScalarView(scalars[(index + 1)...].prefix(8))).lowercased()
                let inLink = linked.contains { $0.contains(index) }
                if next.hasPrefix("everyone") || next.hasPrefix("here") || !(inLink || Self.isEmail(scalars, at: index)) {
                    return "a live @ at scalar \(index)"
                }
            }
            if escapable.contains(scalar), !(linkSafe.contains(scalar) && linked.contains { $0.contains(index) }) {
                return "an unescaped \(scalar) at scalar \(index)"
            }
            index += 1
        }
        return nil
    }

    /// An e-mail address's `@`, read independently of the escaper: a letter, digit or `._-+`
    /// before it, and a domain with a dot after it.
    static func isEmail(_ scalars: [Unicode.Scalar], at index: Int) -> Bool {
        guard index > 0,
            scalars[index - 1].properties.isAlphabetic || scalars[index - 1].properties.numericType != nil || "._-+".unicodeScalars.contains(scalars[index - 1])
        else {
            return false
        }
        let domain = scalars[(index + 1)...].prefix { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == ".") }
        let labels = String(String.UnicodeScalarView(domain)).split(separator: ".", omittingEmptySubsequences: false)
        return labels.count >= 2 && !labels[0].isEmpty && labels.dropFirst().contains { !$0.isEmpty }
    }

    /// The text the escaped form shows: escapes and the inserted zero-width spaces removed.
    static func shown(_ escaped: String) -> String {
        var out = String.UnicodeScalarView()
        let scalars = Array(escaped.unicodeScalars)
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "\\", index + 1 < scalars.count {
                out.append(scalars[index + 1])
                index += 2
                continue
            }
            out.append(scalar)
            // The zero-width space the escaper puts after an `@` (one left whole in an address
            // has none).
            if scalar == "@", index + 1 < scalars.count, scalars[index + 1] == "\u{200B}" { index += 1 }
            index += 1
        }
        return String(out)
    }

    @Test func twoHundredThousandStringsEscapeAndSplitSafely() async throws {
        // A thread of its own: the loop would hold a thread of the pool every test shares.
        let failures = try await offThePool {
            var random = SplitMix64(seed: 0xD15C_0DE5_AFE7)
            var failures: [String] = []
            for _ in 0..<200_000 {
                let text = random.text(from: Self.alphabet, tokens: 14)
                let escaped = DiscordMarkdown.escape(text)
                if let problem = Self.problem(in: escaped) { failures.append("escape: \(problem) in \(text.debugDescription) → \(escaped.debugDescription)") }
                // A zero-width space right after an `@` reads the same whether the model or the
                // escaper put it there.
                if Self.shown(escaped).replacing("@\u{200B}", with: "@") != text.replacing("@\u{200B}", with: "@") {
                    failures.append("round trip of \(text.debugDescription)")
                }
                if escaped.utf16.count > DiscordMarkdown.maximumEscapedLength(text) { failures.append("length bound of \(text.debugDescription)") }

                let limit = 2 + random.below(30)
                let pieces = DiscordTextSplitter.split(text, limit: limit)
                for piece in pieces {
                    let escapedPiece = DiscordMarkdown.escape(piece)
                    if let problem = Self.problem(in: escapedPiece) { failures.append("split: \(problem) in \(text.debugDescription)") }
                    if escapedPiece.utf16.count > limit { failures.append("split over \(limit) in \(text.debugDescription)") }
                }
                let kept = pieces.joined().unicodeScalars.filter { !$0.properties.isWhitespace }
                if !kept.elementsEqual(text.unicodeScalars.filter { !$0.properties.isWhitespace }) {
                    failures.append("split lost text of \(text.debugDescription)")
                }
                if failures.count > 10 { break }
            }
            return failures
        }
        #expect(failures.isEmpty, "\(failures.prefix(10).joined(separator: "\n"))")
    }

    @Test func renderedRepliesHoldNoMarkupTheRendererDidNotWrite() {
        var random = SplitMix64(seed: 0xFACE_FEED)
        var failures: [String] = []
        for _ in 0..<5_000 {
            let body = random.text(from: Self.withAddresses, tokens: 60)
            let reply = Reply(
                kind: .result, title: random.text(from: Self.alphabet, tokens: 6), body: body,
                footer: random.dissentingFooter(answer: body, from: Self.alphabet, modelTokens: 3, reasonTokens: 10))
            for message in DiscordRenderer.render(reply) {
                #expect(message.body()["allowed_mentions"] == ["parse": []])
                let embed = message.embeds[0]
                let texts = [embed["title"], embed["description"]] + (embed["fields"]?.arrayValue ?? []).flatMap { [$0["name"], $0["value"]] }
                for text in texts.compactMap({ $0?.stringValue }) {
                    if let problem = Self.problem(in: text) { failures.append("\(problem) in a reply to \(body.debugDescription)") }
                }
            }
            // Without a title, content holds no markup of the renderer's own.
            var untitled = reply
            untitled.title = nil
            for message in DiscordRenderer.renderAsContent(untitled) {
                if let problem = Self.problem(in: message.content) { failures.append("content: \(problem) in a reply to \(body.debugDescription)") }
            }
            if failures.count > 10 { break }
        }
        #expect(failures.isEmpty, "\(failures.prefix(10).joined(separator: "\n"))")
    }

    @Test(arguments: ["\u{600}<@&123>\u{301} hi", "<\u{301}@everyone>", "\u{110BD}@here", "a\u{200D}||x||\u{FE0F}", "\u{605}[a](https://evil)"])
    func gluedAttacksAreEscaped(text: String) {
        #expect(Self.problem(in: DiscordMarkdown.escape(text)) == nil)
        let description = DiscordRenderer.render(Reply(kind: .result, body: text))[0].embeds[0]["description"]?.stringValue ?? ""
        #expect(Self.problem(in: description) == nil)
    }
}
