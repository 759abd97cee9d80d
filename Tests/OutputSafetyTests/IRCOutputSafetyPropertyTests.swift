import Foundation
import Logging
import RelayCore
import RelayTestSupport
import Testing

@testable import IRCAdapter

/// Hostile model text on IRC (issue 43, points 3, 4 and 10): whatever a model writes, every line
/// the relay sends is one command — no CR, LF or NUL to start another, no `\u{01}` to start a
/// CTCP, no formatting code — fits 512 bytes as the server relays it with the relay's longest
/// prefix, is valid UTF-8 cut between characters, and spells no channel member's nick anywhere
/// (in any case, as a word or inside one).
@Suite("IRC: hostile model text")
struct IRCOutputSafetyPropertyTests {
    static let alphabet = [
        "\r", "\n", "\r\n", "\u{0}", "\u{01}", "\u{01}ACTION", "\u{01}DCC SEND x 1 2 3\u{01}", "\u{02}", "\u{03}", "\u{03}04,12", "\u{04}FF00AA",
        "\u{0F}", "\u{11}", "\u{16}", "\u{1D}", "\u{1E}", "\u{1F}", "\u{7}", "\u{1B}[31m", "\u{7F}", "\u{85}", "\u{2028}", "\u{2029}",
        "QUIT :bye", "PRIVMSG #ops :hi", ":", " :", "ada", "Bob", "carol", "ADA", "b0b", "[x]", "{x}", "@everyone", "\u{200B}", "\u{202E}",
        "\u{301}", "😀", "👩‍👩‍👧‍👦", "日本", "é", " ", "a", "Z", "7", ".", "\t", "!", "/",
    ]
    static let members: Set<String> = ["ada", "Bob", "carol", "[x]"]

    /// What a line must never hold or be.
    static func problems(_ line: String, target: String, asker: String? = nil) -> [String] {
        var problems: [String] = []
        if line.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || (0x80...0x9F).contains($0.value) }) {
            problems.append("a control character")
        }
        if line.isEmpty { problems.append("an empty line") }
        let relayed = ":Rhea__!~rhea_____@" + String(repeating: "h", count: 63) + " PRIVMSG \(target) :" + line + "\r\n"
        if relayed.utf8.count > 512 { problems.append("\(relayed.utf8.count) bytes relayed") }
        // Highlights matter where the channel reads: a private message is the asker's alone.
        for nick in members where nick != asker && target.hasPrefix("#") && IRCText.fold(line).contains(IRCText.fold(nick)) {
            problems.append("a live highlight of \(nick)")
        }
        return problems
    }

    @Test func aHundredThousandHostileStringsBecomeSafeLines() async throws {
        let failures = try await offThePool { Self.hundredThousandStrings() }
        #expect(failures.isEmpty, "\(failures.prefix(10).joined(separator: "\n"))")
    }

    static func hundredThousandStrings() -> [String] {
        var random = SplitMix64(seed: 0x1AC0_0001)
        var failures: [String] = []
        for _ in 0..<100_000 {
            let text = random.text(from: Self.alphabet, tokens: 12)
            let lines = IRCText.lines(text, limit: 60, sparing: Self.members)
            for line in lines {
                let problems = Self.problems(line, target: "#rhea")
                if !problems.isEmpty { failures.append("\(problems) in \(text.debugDescription) → \(line.debugDescription)") }
                if line.utf8.count > 60 { failures.append("a line of \(line.utf8.count) bytes over 60") }
            }
            // Nothing readable lost: the words (letters and digits) of the cleaned text, in order.
            let readable = IRCText.cleaned(Substring(text)).unicodeScalars.filter { $0.properties.isAlphabetic || $0.properties.numericType != nil }
            let kept = lines.joined().unicodeScalars.filter { $0.properties.isAlphabetic || $0.properties.numericType != nil }
            if !readable.elementsEqual(kept) { failures.append("text lost or doubled in \(text.debugDescription) → \(lines)") }
            if failures.count > 10 { break }
        }
        return failures
    }

    @Test func wholeRepliesAreSafeLinesInBoundedMessages() async throws {
        let failures = try await offThePool { Self.wholeReplies() }
        #expect(failures.isEmpty, "\(failures.prefix(10).joined(separator: "\n"))")
    }

    static func wholeReplies() -> [String] {
        var random = SplitMix64(seed: 0x1AC0_0002)
        let link = IRCLink(nick: "Rhea", clock: ManualClock())
        link.update(IRCLink.Presence(nick: "Rhea", members: ["#rhea": Self.members]))
        let delivery = IRCDelivery(link: link, pacer: IRCPacer(), configuredNick: "Rhea", channelLines: 6, logger: Logger(label: "test"))
        var failures: [String] = []
        for round in 0..<1_000 {
            let body = random.text(from: Self.alphabet, tokens: round % 100 == 0 ? 3_000 : 40)
            let footer = random.dissentingFooter(answer: body, from: Self.alphabet)
            let kind: Reply.Kind = round.isMultiple(of: 2) ? .result : .info
            let reply = Reply(
                kind: kind, title: random.text(from: Self.alphabet, tokens: 5), body: body, footer: kind == .result ? footer : nil,
                notes: [random.text(from: Self.alphabet, tokens: 6)], isPrivate: round.isMultiple(of: 5))
            let address = IRCAddress(channel: round.isMultiple(of: 7) ? nil : "#rhea", nick: "ada")
            let messages = delivery.render(reply, entryID: "entry-\(round)", address: address)
            for message in messages {
                let target = message.privately || address.channel == nil ? "ada" : "#rhea"
                if !message.privately && address.channel != nil && message.lines.count > 6 { failures.append("\(message.lines.count) lines in the channel") }
                for line in message.lines {
                    // "ada: " may lead the first line, and the relay's note names where the rest
                    // went: the asker is meant to see both.
                    let shown = line.hasPrefix("ada: ") ? String(line.dropFirst(5)) : line
                    let isNote = line.hasPrefix("… ") && line.hasSuffix(" in a private message to ada.")
                    let problems = Self.problems(shown, target: target, asker: isNote ? "ada" : nil)
                    if !problems.isEmpty { failures.append("\(problems) in a reply to \(reply.body.prefix(80).debugDescription): \(line.debugDescription)") }
                }
            }
            if failures.count > 10 { break }
        }
        return failures
    }
}
