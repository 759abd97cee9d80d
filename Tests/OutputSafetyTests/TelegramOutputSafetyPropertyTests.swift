import RelayCore
import RelayTestSupport
import Testing

@testable import TelegramAdapter

/// Escaping, splitting and rendering hold for any text: 100 000 strings and 5 000 whole replies
/// (about four seconds in a debug build, most of it in the shared splitter), from an alphabet
/// rich in what breaks an HTML escaper — tags Telegram honours (`<a href>`, `tg://` mentions,
/// spoilers, `<pre>`), entities whole and cut, Unicode "Prepend" scalars (which glue onto what
/// follows), combining marks, ZWJ, direction marks, and the neighbours of the surrogate range.
@Suite("Telegram output safety, for any text")
struct TelegramOutputSafetyPropertyTests {
    static let alphabet: [String] =
        [
            "<", ">", "&", "\"", "'", "/", "=", ";", "#", " ", "\n", "a", "Z", "7", "<b>", "</b>", "<i>", "</i>", "<a href=\"tg://user?id=1\">",
            "</a>", "<tg-spoiler>", "<pre>", "<code>", "<blockquote expandable>", "&amp;", "&lt;", "&gt;", "&quot;", "&#60;", "&#x3C;", "&am", "&",
            "https://evil.example", "tg://user?id=1", "@admin", "/start", "fact-check #9", "@durov", "@Ab_c9", "TG://user?id=42", "tg:", "//",
            "[Pavel](tg://user?id=1)", "@", "_", "9",
            "\u{600}", "\u{605}", "\u{110BD}", "\u{D4A}",  // Prepend
            "\u{301}", "\u{20E3}", "\u{FE0F}", "\u{200D}",  // Extend, ZWJ, selectors
            "\u{200E}", "\u{202E}", "\u{2066}",  // direction marks
            "\u{D7FF}", "\u{E000}", "\u{FFFD}", "\u{10FFFF}", "😀", "👩‍💻", "🇫🇷",
        ]

    /// The alphabet and odd web addresses with mentions around them (`HostileURLs`, issue 47,
    /// point 1), for the bodies of whole replies: long enough to hold many addresses each.
    static let withAddresses = alphabet + HostileURLs.pieces

    static func nonWhitespace(_ text: String) -> [Unicode.Scalar] {
        text.unicodeScalars.filter { !$0.properties.isWhitespace && $0 != "\u{2060}" }
    }

    /// The shapes Telegram pings or links a person by, unbroken, in a message's parsed text: `@`
    /// before a name character (a username mention) and `tg://` (a mention by id).
    static func pings(in text: String) -> [String] {
        let scalars = Array(text.unicodeScalars)
        var found: [String] = []
        for (index, scalar) in scalars.enumerated() where scalar == "@" && index + 1 < scalars.count {
            let next = scalars[index + 1]
            if next == "_" || next.properties.isAlphabetic || next.properties.numericType != nil { found.append("@" + String(next)) }
        }
        if text.lowercased().contains("tg://") { found.append("tg://") }
        return found
    }

    @Test func aHundredThousandStringsEscapeAndSplitSafely() {
        var random = SplitMix64(seed: 0x7E1E_6CA4_5AFE)
        var failures: [String] = []
        for _ in 0..<100_000 {
            let text = random.text(from: Self.alphabet, tokens: 14)
            let escaped = TelegramHTML.escape(text)
            switch TelegramHTMLReader.parse(escaped) {
            case .failure(let problem): failures.append("escape: \(problem) in \(text.debugDescription) → \(escaped.debugDescription)")
            case .success(let parsed):
                if Self.nonWhitespace(parsed.text) != Self.nonWhitespace(text) { failures.append("round trip of \(text.debugDescription)") }
                let pings = Self.pings(in: parsed.text)
                if !pings.isEmpty { failures.append("pings \(pings) from \(text.debugDescription)") }
                if !parsed.bold.isEmpty || !parsed.italic.isEmpty { failures.append("a tag from \(text.debugDescription)") }
                if parsed.length > TelegramHTML.parsedLength(of: text) { failures.append("parsed length over the bound of \(text.debugDescription)") }
            }

            let limit = 2 + random.below(30)
            let pieces = TelegramHTML.split(text, limit: limit)
            for piece in pieces {
                switch TelegramHTMLReader.parse(TelegramHTML.escape(piece)) {
                case .failure(let problem): failures.append("split: \(problem) in \(text.debugDescription)")
                case .success(let parsed) where parsed.length > limit: failures.append("split over \(limit) in \(text.debugDescription)")
                case .success: break
                }
            }
            if Self.nonWhitespace(pieces.joined()) != Self.nonWhitespace(text) { failures.append("split lost text of \(text.debugDescription)") }
            if failures.count > 10 { break }
        }
        #expect(failures.isEmpty, "\(failures.prefix(10).joined(separator: "\n"))")
    }

    /// Whole replies — hostile title, body, dissent and notes — hold only the relay's own tags,
    /// fit Telegram's limit, and show the answer exactly as the model wrote it.
    @Test func renderedRepliesHoldOnlyTheRelaysMarkupAndTheModelsExactText() {
        var random = SplitMix64(seed: 0xFACE_FEED)
        var failures: [String] = []
        for round in 0..<5_000 {
            // Every fiftieth answer is long enough to be split.
            let body = random.text(from: Self.withAddresses, tokens: round % 50 == 0 ? 2500 : 60)
            let title = random.text(from: Self.alphabet, tokens: 6)
            let dissent = (0..<random.below(13)).map { _ in
                Dissent(model: random.text(from: Self.alphabet, tokens: 3), verdict: .false, reason: random.text(from: Self.alphabet, tokens: 10))
            }
            let footer = AgreementFooter(
                ConsensusResult(answer: body, verdict: .partly, agreement: 0.5, answered: 2, asked: 3, dissent: dissent, elapsed: .seconds(1)))
            let reply = Reply(
                kind: .result, title: title, body: body, footer: footer, notes: [random.text(from: Self.alphabet, tokens: 8)],
                actions: [.runAgain(commandLine: body)])
            let messages = TelegramRenderer.render(reply, entryID: random.text(from: Self.alphabet, tokens: 3))
            for (index, message) in messages.enumerated() {
                switch TelegramHTMLReader.parse(message.text) {
                case .failure(let problem): failures.append("\(problem) in a reply to \(body.debugDescription)")
                case .success(let parsed):
                    if parsed.length > TelegramLimits.messageText { failures.append("\(parsed.length) units in a reply to \(body.debugDescription)") }
                    let pings = Self.pings(in: parsed.text)
                    if !pings.isEmpty { failures.append("pings \(pings) in a reply to \(body.debugDescription)") }
                    if index == 0, parsed.bold.first.map(Self.nonWhitespace) != Self.nonWhitespace(title) {
                        failures.append("title \(title.debugDescription) shown as \(parsed.bold)")
                    }
                }
                for button in message.buttons.joined() where button.callbackData.utf8.count > TelegramLimits.callbackData {
                    failures.append("callback data of \(button.callbackData.utf8.count) bytes")
                }
            }

            // Without title and tail, the messages show the body and nothing else.
            let bare = TelegramRenderer.render(Reply(kind: .result, body: body))
            let shown = bare.compactMap { try? TelegramHTMLReader.parse($0.text).get().text }.joined()
            let expected = Self.nonWhitespace(body).isEmpty ? "(no text)" : body
            if Self.nonWhitespace(shown) != Self.nonWhitespace(expected) {
                failures.append("the body of \(body.debugDescription) shown as \(shown.debugDescription)")
            }
            if failures.count > 10 { break }
        }
        #expect(failures.isEmpty, "\(failures.prefix(10).joined(separator: "\n"))")
    }

    /// Telegram's own parser — the fake's port of TDLib's `parse_html` — reads every rendered
    /// message as the reader above does: the same text, no entity but bold and italic.
    @Test func telegramsParserReadsWhatTheReaderReads() {
        var random = SplitMix64(seed: 0x7D1B_0A71)
        var failures: [String] = []
        for round in 0..<2_000 {
            let body = random.text(from: Self.withAddresses, tokens: round % 100 == 0 ? 2500 : 40)
            let footer = AgreementFooter(
                ConsensusResult(
                    answer: body, verdict: .true, agreement: 1, answered: 1, asked: 1,
                    dissent: [Dissent(model: random.text(from: Self.alphabet, tokens: 2), reason: random.text(from: Self.alphabet, tokens: 6))],
                    elapsed: .seconds(1)))
            let reply = Reply(
                kind: .result, title: random.text(from: Self.alphabet, tokens: 4), body: body, footer: footer,
                notes: [random.text(from: Self.alphabet, tokens: 4)])
            for message in TelegramRenderer.render(reply) {
                do {
                    let telegram = try FakeTelegramHTML.parse(message.text)
                    let ours = try TelegramHTMLReader.parse(message.text).get()
                    if telegram.text != ours.text { failures.append("Telegram reads \(telegram.text.debugDescription), we \(ours.text.debugDescription)") }
                    if let foreign = telegram.entities.first(where: { $0.type != "bold" && $0.type != "italic" }) {
                        failures.append("a \(foreign.type) entity in a reply to \(body.debugDescription)")
                    }
                } catch {
                    failures.append("\(error) in a reply to \(body.debugDescription)")
                }
            }
            if failures.count > 10 { break }
        }
        #expect(failures.isEmpty, "\(failures.prefix(10).joined(separator: "\n"))")
    }

    @Test(arguments: [
        "\u{600}<a href=\"tg://user?id=1\">\u{301}admin</a>", "<\u{301}b>bold</b>", "\u{110BD}<tg-spoiler>x</tg-spoiler>", "&\u{301}amp;",
        "\u{605}<a href=\"https://evil\">bank.com</a>",
    ])
    func gluedAttacksAreEscaped(text: String) throws {
        let escaped = TelegramHTML.escape(text)
        #expect(try TelegramHTMLReader.parse(escaped).get().text.replacing("\u{2060}", with: "") == text)
        let rendered = try TelegramHTMLReader.parse(TelegramRenderer.render(Reply(kind: .result, body: text))[0].text).get()
        #expect(rendered.text.replacing("\u{2060}", with: "") == text && rendered.bold.isEmpty && rendered.italic.isEmpty)
    }
}
