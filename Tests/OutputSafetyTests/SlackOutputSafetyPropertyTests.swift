import RelayCore
import RelayTestSupport
import Testing

@testable import SlackAdapter

/// Escaping and splitting hold for any text, not just the examples someone thought of: a million
/// strings from an alphabet rich in what breaks escapers — `< > & ! @ | #`, Unicode "Prepend"
/// characters (which glue onto what follows), combining marks, ZWJ, variation selectors, RTL
/// marks, the neighbours of the surrogate range, and Slack's own markup.
@Suite("Output safety, for any text")
struct OutputSafetyPropertyTests {
    static let alphabet: [String] =
        [
            "<", ">", "&", "!", "@", "|", "#", "a", "Z", " ", "\n", ":", "/", "channel", "here", "everyone",
            "\u{600}", "\u{605}", "\u{6DD}", "\u{110BD}", "\u{D4A}",  // Prepend
            "\u{301}", "\u{308}", "\u{20E3}", "\u{FE0F}", "\u{FE0E}", "\u{200D}",  // Extend, ZWJ, selectors
            "\u{200E}", "\u{200F}", "\u{202E}", "\u{2066}",  // direction marks
            "\u{D7FF}", "\u{E000}", "\u{FFFD}", "\u{10FFFF}",  // around the surrogates, and the last scalar
            "😀", "👩‍💻", "🇫🇷", "&amp;", "&lt;", "&gt;", "<!channel>", "<@U1>", "<https://x|y>",
        ]

    /// The alphabet and odd web addresses with mentions around them (`HostileURLs`, issue 47,
    /// point 1), for the bodies of whole replies: long enough to hold many addresses each.
    static let withAddresses = alphabet + HostileURLs.pieces

    /// What is wrong with `escaped`, if anything: a raw `<` or `>`, or an `&` that does not
    /// start one of the three entities the escaper writes (a cut entity, say).
    static func problem(in escaped: String) -> String? {
        let scalars = Array(escaped.unicodeScalars)
        for (index, scalar) in scalars.enumerated() {
            if scalar == "<" || scalar == ">" { return "raw \(scalar) at scalar \(index)" }
            // Compared as scalars: a String's `hasPrefix` would compare grapheme clusters, and be
            // fooled by a combining mark after the `;` exactly as a Character-based escaper is.
            if scalar == "&" {
                let rest = scalars[index...]
                guard ["&amp;", "&lt;", "&gt;"].contains(where: { rest.starts(with: $0.unicodeScalars) }) else {
                    return "a cut or foreign entity at scalar \(index)"
                }
            }
        }
        return nil
    }

    @Test func aMillionStringsEscapeAndSplitSafely() async throws {
        // A thread of its own: a million rounds would hold a thread of the pool every test shares.
        let failures = try await offThePool {
            var random = SplitMix64(seed: 0x5EED_0F_0D7E_57)
            var failures: [String] = []
            for _ in 0..<1_000_000 {
                let text = random.text(from: Self.alphabet, tokens: 12)

                let escaped = SlackMrkdwn.escape(text)
                if let problem = Self.problem(in: escaped) { failures.append("escape: \(problem) in \(text.debugDescription)") }
                // Escaping loses nothing: reading it back as Slack text gives the original.
                if SlackIncomingText.normalize(escaped) != text { failures.append("round trip of \(text.debugDescription)") }
                // The length limits are checked against is the escaped text's.
                if SlackMrkdwn.escaper.escapedUTF16Count(text) != escaped.utf16.count { failures.append("escaped length of \(text.debugDescription)") }

                let limit = 5 + random.below(24)
                for piece in SlackTextSplitter.split(text, limit: limit) {
                    let escapedPiece = SlackMrkdwn.escape(piece)
                    if let problem = Self.problem(in: escapedPiece) { failures.append("split: \(problem) in \(text.debugDescription)") }
                    if escapedPiece.utf16.count > limit { failures.append("split over \(limit) in \(text.debugDescription)") }
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
        for _ in 0..<20_000 {
            let body = random.text(from: Self.withAddresses, tokens: 40)
            let reply = Reply(kind: .result, title: "T" + body.prefix(8), body: body, notes: [String(body.suffix(10))])
            for message in SlackReplyRenderer.render(reply) {
                for text in [message.text] + message.blocks.flatMap(\.mrkdwnTexts) {
                    if let problem = Self.problem(in: text) { failures.append("\(problem) in a reply to \(body.debugDescription)") }
                }
            }
            if failures.count > 10 { break }
        }
        #expect(failures.isEmpty, "\(failures.prefix(10).joined(separator: "\n"))")
    }

    @Test(arguments: ["\u{600}<!channel>\u{301} hi", "<\u{301}!here>", "\u{110BD}<@U1>", "a\u{200D}<!everyone>\u{FE0F}"])
    func theReportedAttackIsEscaped(text: String) {
        #expect(Self.problem(in: SlackMrkdwn.escape(text)) == nil)
        let message = SlackReplyRenderer.render(Reply(kind: .result, body: text))[0]
        #expect(!message.text.unicodeScalars.contains("<"))
    }
}
