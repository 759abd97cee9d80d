import Foundation
import RelayCore
import RelayTestSupport
import Testing

@testable import TeamsAdapter

/// Hostile model text on Teams (issue 42, point 8): whatever a model writes, what the relay sends
/// holds no markup but its own (`<br>`, the title's `<b>`), no entity but the three it writes, no
/// `<at>` and no mention entity (Teams' only way to ping), and fits Teams' size.
@Suite("Teams: hostile model text")
struct TeamsOutputSafetyPropertyTests {
    static let alphabet =
        [
            "<at>", "</at>", "<at>Everyone</at>", "<", ">", "&", "&lt;", "&amp;", "&#60;", "&#x3C;at&#x3E;", "<b>", "</b>", "<br>", "<script>",
            "<a href=\"javascript:alert(1)\">x</a>", "@everyone", "@channel", "@team", "**", "_", "`", "[x](https://evil.example)", "\n", "\r", "\t",
            "\u{0}", "\u{7}", "\u{1B}[31m", "\u{7F}", "\u{85}", "\u{200B}", "\u{202E}", "\u{301}", "😀", "日本", "é", " ", "a", "Z", "7", ".", "\"", "\\",
        ] + HostileURLs.pieces

    /// Problems in escaped HTML, read by scalars as an HTML parser reads it: a tag other than
    /// `<br>` and `<b>`/`</b>`, an `&` that starts no entity the relay writes, a control character.
    static func problems(in html: String, allowBold: Bool) -> [String] {
        var problems: [String] = []
        let scalars = Array(html.unicodeScalars)
        let tags = (["<br>"] + (allowBold ? ["<b>", "</b>"] : [])).map { Array($0.unicodeScalars) }
        let entities = ["&lt;", "&gt;", "&amp;"].map { Array($0.unicodeScalars) }
        for (index, scalar) in scalars.enumerated() {
            guard scalar == "<" || scalar == "&" else { continue }
            let tail = scalars[index...]
            let shown = { String(String.UnicodeScalarView(tail.prefix(10))).debugDescription }
            if scalar == "<", !tags.contains(where: { tail.starts(with: $0) }) { problems.append("markup at \(shown())") }
            if scalar == "&", !entities.contains(where: { tail.starts(with: $0) }) { problems.append("an entity at \(shown())") }
        }
        if html.unicodeScalars.contains(where: { $0 != "\t" && TeamsHTML.isDropped($0) }) { problems.append("a control character") }
        return problems
    }

    @Test func aHundredThousandHostileStringsShowAsWritten() async throws {
        let failures = try await offThePool { Self.hundredThousandStrings() }
        #expect(failures.isEmpty, "\(failures.prefix(10).joined(separator: "\n"))")
    }

    static func hundredThousandStrings() -> [String] {
        var random = SplitMix64(seed: 0x7EA5_0001)
        var failures: [String] = []
        for _ in 0..<100_000 {
            let text = random.text(from: Self.alphabet, tokens: 12)
            let escaped = TeamsHTML.escape(text)
            let problems = Self.problems(in: escaped, allowBold: false)
            if !problems.isEmpty { failures.append("\(problems) in \(text.debugDescription) → \(escaped.debugDescription)") }
            let readable = String(String.UnicodeScalarView(text.unicodeScalars.filter { $0 == "\n" || $0 == "\t" || !TeamsHTML.isDropped($0) }))
            if TeamsHTML.unescape(escaped) != readable { failures.append("round trip of \(text.debugDescription)") }
            let plain = TeamsHTML.plain(text)
            if plain.unicodeScalars.contains(where: { $0 != "\t" && TeamsHTML.isDropped($0) }) { failures.append("a control character in a text run") }
            if failures.count > 10 { break }
        }
        return failures
    }

    @Test func wholeRepliesHoldOnlyTheirOwnMarkupAndFitTeams() async throws {
        let failures = try await offThePool { Self.wholeReplies() }
        #expect(failures.isEmpty, "\(failures.prefix(10).joined(separator: "\n"))")
    }

    static func wholeReplies() -> [String] {
        var random = SplitMix64(seed: 0x7EA5_0002)
        var failures: [String] = []
        for round in 0..<1_000 {
            let body = random.text(from: Self.alphabet, tokens: round % 100 == 0 ? 9_000 : 40)
            let title = random.text(from: Self.alphabet, tokens: 5)
            let footer = random.dissentingFooter(answer: body, from: Self.alphabet)
            let kind: Reply.Kind = round.isMultiple(of: 2) ? .result : .info
            let reply = Reply(
                kind: kind, title: title, body: body, footer: kind == .result ? footer : nil, notes: [random.text(from: Self.alphabet, tokens: 6)],
                actions: [.runAgain(commandLine: "/tribunal " + random.text(from: Self.alphabet, tokens: 6))])
            for message in TeamsRenderer.render(reply, entryID: "entry-\(round)") {
                let activity = message.activity()
                let size = activity.serialized()?.count ?? .max
                if size > TeamsLimits.messageBytes + TeamsLimits.buttonLineBytes + 2_048 { failures.append("\(size) bytes") }
                if activity["entities"] != nil { failures.append("a mention entity") }
                switch message {
                case .text(let html):
                    let problems = Self.problems(in: html, allowBold: true)
                    if !problems.isEmpty { failures.append("\(problems) in a reply to \(body.prefix(120).debugDescription)") }
                case .card(let card):
                    for block in card["body"]?.arrayValue ?? [] {
                        if block["type"]?.stringValue != "RichTextBlock" { failures.append("a block that reads Markdown: \(block)") }
                        for run in block["inlines"]?.arrayValue ?? [] where run["type"]?.stringValue != "TextRun" {
                            failures.append("an inline that is no text run: \(run)")
                        }
                    }
                    for action in card["actions"]?.arrayValue ?? [] where action["type"]?.stringValue != "Action.Submit" {
                        failures.append("an action the relay did not make: \(action)")
                    }
                }
            }
            if failures.count > 10 { break }
        }
        return failures
    }
}
