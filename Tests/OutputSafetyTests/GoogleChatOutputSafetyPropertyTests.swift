import Foundation
import RelayCore
import RelayTestSupport
import Testing

@testable import GoogleChatAdapter

/// Hostile model text on Google Chat (issue 42, points 6 and 8): whatever a model writes, no
/// `<users/…>` (a mention that notifies, `<users/all>` everyone) and no `<url|label>` link can
/// form in a message's text, a card holds no markup but the relay's own, and every message fits.
@Suite("Google Chat: hostile model text")
struct GoogleChatOutputSafetyPropertyTests {
    static let alphabet =
        [
            "<users/all>", "<users/112233>", "<users/", "all>", "<https://evil.example|click>", "<", ">", "|", "&", "&lt;", "&amp;", "&#60;", "<b>",
            "</b>", "<br>", "<font color=\"red\">", "<a href=\"javascript:alert(1)\">x</a>", "@all", "*", "_", "~", "`", "```", "\n", "\r", "\t", "\u{0}",
            "\u{7}", "\u{1B}[31m", "\u{7F}", "\u{85}", "\u{2060}", "\u{200B}", "\u{202E}", "\u{301}", "😀", "日本", "é", " ", "a", "Z", "7", ".", "\"",
            "\\",
        ] + HostileURLs.pieces

    /// Where Google Chat would read markup in a message's text: `<` straight before anything
    /// but the relay's word joiner.
    static func textProblems(_ text: String) -> [String] {
        let scalars = Array(text.unicodeScalars)
        var problems: [String] = []
        for (index, scalar) in scalars.enumerated() where scalar == "<" {
            if index + 1 >= scalars.count || scalars[index + 1] != "\u{2060}" { problems.append("a live `<` at \(index)") }
        }
        if text.unicodeScalars.contains(where: { $0 != "\t" && $0 != "\n" && GoogleChatText.isDropped($0) }) { problems.append("a control character") }
        return problems
    }

    /// Markup in card HTML other than the relay's `<br>`, `<font color="#5f6368">`, `</font>`,
    /// and entities other than the four it writes.
    static func htmlProblems(_ html: String) -> [String] {
        let scalars = Array(html.unicodeScalars)
        let tags = ["<br>", "<font color=\"#5f6368\">", "</font>"].map { Array($0.unicodeScalars) }
        let entities = ["&lt;", "&gt;", "&amp;", "&quot;"].map { Array($0.unicodeScalars) }
        var problems: [String] = []
        for (index, scalar) in scalars.enumerated() {
            let tail = scalars[index...]
            if scalar == "<", !tags.contains(where: { tail.starts(with: $0) }) { problems.append("markup at \(index)") }
            if scalar == "&", !entities.contains(where: { tail.starts(with: $0) }) { problems.append("an entity at \(index)") }
        }
        return problems
    }

    @Test func aHundredThousandHostileStringsShowAsWritten() async throws {
        let failures = try await offThePool { Self.hundredThousandStrings() }
        #expect(failures.isEmpty, "\(failures.prefix(10).joined(separator: "\n"))")
    }

    static func hundredThousandStrings() -> [String] {
        var random = SplitMix64(seed: 0x6C4A_0001)
        var failures: [String] = []
        for _ in 0..<100_000 {
            let text = random.text(from: Self.alphabet, tokens: 12)
            let readable = String(String.UnicodeScalarView(text.unicodeScalars.filter { !GoogleChatText.isDropped($0) }))
            let sent = GoogleChatText.text(text)
            let problems = Self.textProblems(sent)
            if !problems.isEmpty { failures.append("\(problems) in \(text.debugDescription) → \(sent.debugDescription)") }
            let withoutJoiners = String(String.UnicodeScalarView(readable.unicodeScalars.filter { $0 != "\u{2060}" }))
            if GoogleChatText.shown(sent).unicodeScalars.elementsEqual(withoutJoiners.unicodeScalars) == false {
                failures.append("text round trip of \(text.debugDescription)")
            }
            let html = GoogleChatText.html(text)
            let htmlProblems = Self.htmlProblems(html)
            if !htmlProblems.isEmpty { failures.append("\(htmlProblems) in \(text.debugDescription) → \(html.debugDescription)") }
            if GoogleChatText.unescapeHTML(html) != readable { failures.append("HTML round trip of \(text.debugDescription)") }
            if failures.count > 10 { break }
        }
        return failures
    }

    @Test func wholeRepliesHoldOnlyTheirOwnMarkupAndFit() async throws {
        let failures = try await offThePool { Self.wholeReplies() }
        #expect(failures.isEmpty, "\(failures.prefix(10).joined(separator: "\n"))")
    }

    static func wholeReplies() -> [String] {
        var random = SplitMix64(seed: 0x6C4A_0002)
        var failures: [String] = []
        for round in 0..<1_000 {
            let body = random.text(from: Self.alphabet, tokens: round % 100 == 0 ? 9_000 : 40)
            let title = random.text(from: Self.alphabet, tokens: 5)
            let footer = random.dissentingFooter(answer: body, from: Self.alphabet)
            let kind: Reply.Kind = round.isMultiple(of: 2) ? .result : .info
            let reply = Reply(
                kind: kind, title: title, body: body, footer: kind == .result ? footer : nil, notes: [random.text(from: Self.alphabet, tokens: 6)],
                actions: [.runAgain(commandLine: "/tribunal " + random.text(from: Self.alphabet, tokens: 6))])
            for message in GoogleChatRenderer.render(reply, entryID: "entry-\(round)") {
                let body = message.body(privateTo: nil, thread: FakeGoogleChat.space + "/threads/t")
                let size = body.serialized()?.count ?? .max
                if size > 32_000 { failures.append("\(size) bytes") }
                switch message {
                case .text(let text):
                    let problems = Self.textProblems(text)
                    if !problems.isEmpty { failures.append("\(problems) in a reply to \(reply.body.prefix(120).debugDescription)") }
                case .card(_, let card, let fallback):
                    if !Self.textProblems(fallback).isEmpty { failures.append("a live `<` in the fallback text") }
                    for section in card["sections"]?.arrayValue ?? [] {
                        for widget in section["widgets"]?.arrayValue ?? [] {
                            if let html = widget["textParagraph"]?["text"]?.stringValue {
                                let problems = Self.htmlProblems(html)
                                if !problems.isEmpty { failures.append("\(problems) in a card") }
                            } else if widget["buttonList"] == nil {
                                failures.append("a widget the relay did not make: \(widget)")
                            }
                        }
                    }
                    if let header = card["header"]?["title"]?.stringValue, header.unicodeScalars.contains(where: { GoogleChatText.isDropped($0) || $0 == "\n" })
                    {
                        failures.append("a control character in the header")
                    }
                }
            }
            if failures.count > 10 { break }
        }
        return failures
    }
}
