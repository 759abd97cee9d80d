import RelayCore
import RelayTestSupport
import Testing

@testable import MatrixAdapter

/// What a Matrix client shows of a rendered message, read strictly: the only markup allowed is
/// the renderer's own (`<strong>`, `<em>`, `<br>`, without attributes) and `&lt; &gt; &amp;`;
/// anything else that is markup (a tag, an attribute, a stray `<` or `>`, another entity) is a
/// problem, since a client would render it.
enum MatrixHTMLReader {
    static let tags = ["<strong>", "</strong>", "<em>", "</em>", "<br>"]

    /// The text of `html`, or what is wrong with it; read scalar by scalar, as a client's HTML
    /// parser does (a combining mark after `>` does not hide the tag).
    static func text(_ html: String) -> Result<String, Problem> {
        let scalars = Array(html.unicodeScalars)
        var out = String.UnicodeScalarView()
        var index = 0
        func starts(with literal: String) -> Bool {
            var position = index
            for wanted in literal.unicodeScalars {
                guard position < scalars.count, scalars[position] == wanted else { return false }
                position += 1
            }
            return true
        }
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "<" {
                guard let tag = tags.first(where: starts(with:)) else {
                    return .failure(
                        Problem("a tag the relay does not write: \(String(String.UnicodeScalarView(scalars[index...].prefix(20))).debugDescription)"))
                }
                if tag == "<br>" { out.append("\n") }
                index += tag.unicodeScalars.count
            } else if scalar == ">" {
                return .failure(Problem("a raw >"))
            } else if scalar == "&" {
                guard let (entity, character) = [("&lt;", "<"), ("&gt;", ">"), ("&amp;", "&")].first(where: { starts(with: $0.0) }) else {
                    return .failure(Problem("an entity the relay does not write"))
                }
                out.append(Unicode.Scalar(character)!)
                index += entity.unicodeScalars.count
            } else {
                out.append(scalar)
                index += 1
            }
        }
        return .success(String(out))
    }

    struct Problem: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// The mention shapes a client or a linkifier may act on, unbroken, in `text`: `@room`, an
    /// id after an at sign or a `#` (`x:y`), and `matrix.to`.
    static func mentions(in text: String) -> [String] {
        var found: [String] = []
        let scalars = Array(text.unicodeScalars)
        for (index, scalar) in scalars.enumerated() where ["@", "＠", "﹫", "#"].contains(scalar) {
            guard index + 1 < scalars.count, scalars[index + 1] != "\u{2060}" else { continue }
            let name = String(String.UnicodeScalarView(scalars[(index + 1)...].prefix { $0 != ":" && !$0.properties.isWhitespace }))
            let after = index + 1 + name.unicodeScalars.count
            if scalar != "#", name.lowercased().hasPrefix("room") { found.append("@room") }
            if !name.isEmpty, after + 1 < scalars.count, scalars[after] == ":", !scalars[after + 1].properties.isWhitespace {
                found.append(String(scalar) + name + ":")
            }
        }
        if text.lowercased().contains("matrix.to") { found.append("matrix.to") }
        return found
    }
}

/// Rendering holds for any text: 100 000 hostile strings, then whole replies. Model text never
/// becomes markup, a link, a pill or a mention, shows exactly as written (word joiners aside),
/// and every message fits the homeserver's event limit even as an edit.
@Suite("Matrix output safety, for any text")
struct MatrixOutputSafetyPropertyTests {
    static let alphabet: [String] =
        [
            "<", ">", "&", "\"", "'", "/", "=", ";", "#", ":", " ", "\n", "a", "Z", "7", "<strong>", "</em>", "<br>",
            "<a href=\"https://matrix.to/#/@ada:example.org\">",
            "</a>", "<font color=red>", "<span data-mx-spoiler>", "<mx-reply>", "&amp;", "&lt;", "&#60;", "&am", "@room", "@Room", "＠room", "@ada:example.org",
            "@ada", ":example.org", "#general:example.org", "https://matrix.to/#/@bob:x.org", "matrix.to", "https://evil.example",
            "[link](https://evil.example)",
            "!tribunal", "fact-check #9", "\u{600}", "\u{301}", "\u{20E3}", "\u{FE0F}", "\u{200D}", "\u{2060}", "\u{202E}", "\u{10FFFF}", "😀", "👩‍💻",
        ]

    /// The alphabet and odd web addresses with mentions around them (`HostileURLs`, issue 47,
    /// point 1), for the bodies of whole replies: long enough to hold many addresses each.
    static let withAddresses = alphabet + HostileURLs.pieces

    static func visible(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { !$0.properties.isWhitespace && $0 != "\u{2060}" }))
    }

    @Test func aHundredThousandStringsRenderAsTheirOwnTextWithNoMentionOrMarkup() async throws {
        // A thread of its own: the loop would hold a thread of the pool every test shares.
        let failures = try await offThePool { Self.hundredThousandStrings() }
        #expect(failures.isEmpty, "\(failures.prefix(10).joined(separator: "\n"))")
    }

    static func hundredThousandStrings() -> [String] {
        var random = SplitMix64(seed: 0x4D41_5452_4958)
        var failures: [String] = []
        for _ in 0..<100_000 {
            let text = random.text(from: Self.alphabet, tokens: 12)
            let shown = MatrixHTML.defanged(text)
            switch MatrixHTMLReader.text(MatrixHTML.escape(shown)) {
            case .failure(let problem): failures.append("\(problem) from \(text.debugDescription)")
            case .success(let read):
                if Self.visible(read) != Self.visible(text) { failures.append("shown as \(read.debugDescription): \(text.debugDescription)") }
                let mentions = MatrixHTMLReader.mentions(in: read) + MatrixHTMLReader.mentions(in: shown)
                if !mentions.isEmpty { failures.append("mentions \(mentions) from \(text.debugDescription)") }
            }
            if failures.count > 10 { break }
        }
        return failures
    }

    @Test func wholeRepliesHoldOnlyTheRelaysMarkupAndFitAnEventAsAnEdit() async throws {
        let failures = try await offThePool { Self.wholeReplies() }
        #expect(failures.isEmpty, "\(failures.prefix(10).joined(separator: "\n"))")
    }

    static func wholeReplies() -> [String] {
        var random = SplitMix64(seed: 0x5AFE_3A7)
        var failures: [String] = []
        for round in 0..<2_000 {
            // Every fiftieth answer is long enough to be split.
            let body = random.text(from: Self.withAddresses, tokens: round % 50 == 0 ? 6_000 : 60)
            let dissent = (0..<random.below(13)).map { _ in
                Dissent(model: random.text(from: Self.alphabet, tokens: 3), verdict: .false, reason: random.text(from: Self.alphabet, tokens: 10))
            }
            let footer = AgreementFooter(
                ConsensusResult(answer: body, verdict: .partly, agreement: 0.5, answered: 2, asked: 3, dissent: dissent, elapsed: .seconds(1)))
            let reply = Reply(
                kind: .result, title: random.text(from: Self.alphabet, tokens: 6), body: body, footer: footer,
                notes: [random.text(from: Self.alphabet, tokens: 8)])
            let messages = MatrixRenderer.render(reply)
            for message in messages {
                for content in [message.content(replyTo: "$cmd", thread: nil), message.editContent(of: "$progress")] {
                    let size = content.serialized()?.count ?? .max
                    if size > 65_536 - 1_000 { failures.append("an event of \(size) bytes") }
                    if content["m.mentions"] != .object([:]) { failures.append("m.mentions is not empty") }
                }
                switch MatrixHTMLReader.text(message.html) {
                case .failure(let problem): failures.append("\(problem) in a reply")
                case .success(let read):
                    let mentions = MatrixHTMLReader.mentions(in: read) + MatrixHTMLReader.mentions(in: message.body)
                    if !mentions.isEmpty { failures.append("mentions \(mentions) in a reply") }
                }
            }
            let bare = MatrixRenderer.render(Reply(kind: .result, body: body))
            let shown = bare.compactMap { try? MatrixHTMLReader.text($0.html).get() }.joined()
            let expected = body.unicodeScalars.allSatisfy(\.properties.isWhitespace) ? "(no text)" : body
            if Self.visible(shown) != Self.visible(expected) { failures.append("the body of \(body.prefix(80).debugDescription) shown differently") }
            if failures.count > 10 { break }
        }
        return failures
    }
}
