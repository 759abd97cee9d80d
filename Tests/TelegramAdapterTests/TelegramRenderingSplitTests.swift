import Foundation
import RelayCore
import RelayTestSupport
import Testing

@testable import TelegramAdapter

/// Long answers become several messages, each within Telegram's 4 096 parsed UTF-16 units, with
/// nothing cut that Telegram would refuse (an entity, a tag) or show broken (an emoji).
@Suite("Telegram rendering, split at 4096")
struct TelegramRenderingSplitTests {
    static func shown(_ messages: [TelegramMessage]) throws -> [TelegramHTMLReader.Parsed] {
        try messages.map { try TelegramHTMLReader.parse($0.text).get() }
    }

    static let footer = AgreementFooter(
        ConsensusResult(
            answer: "x", verdict: .true, agreement: 1, answered: 3, asked: 3, dissent: [Dissent(model: "m", verdict: .false, reason: "no")],
            elapsed: .seconds(2)))

    /// 10 000 characters of words dense in `&`, `<` and `>`, with a title, footer, notes and buttons.
    @Test func aTenThousandCharacterAnswerIsSplitInOrderWithinTheLimit() throws {
        let body = String(String(repeating: "Tom & Jerry <3 a>b ", count: 530).prefix(10_000))
        let reply = Reply(
            kind: .result, title: "Answer", body: body, footer: Self.footer, notes: ["mistral · 2.0 s"], isPrivate: true,
            actions: [.postToChannel, .runAgain(commandLine: "/ai x")])
        let messages = TelegramRenderer.render(reply, entryID: "e1")
        let shown = try Self.shown(messages)
        #expect(messages.count == 3)
        for (index, message) in shown.enumerated() {
            #expect(message.length <= TelegramLimits.messageText)
            #expect((index == 0) == (message.bold == ["Answer"]), "the title opens the first message only")
            #expect((index == messages.count - 1) == !message.italic.isEmpty, "the footer and notes close the last only")
            #expect((index == messages.count - 1) == !messages[index].buttons.isEmpty, "the buttons sit under the last only")
        }
        let last = try #require(shown.last)
        #expect(last.text.hasSuffix("\n\nDissent · m (false): no\n\(Self.footer.summary)\nmistral · 2.0 s"))
        // Title and tail off, the pieces are the answer, in order; only the spaces cuts fell on are gone.
        let answer = shown.enumerated().map { index, message in
            var text = message.text
            if index == 0 { text.removeFirst("Answer\n".count) }
            if index == shown.count - 1, let tail = text.range(of: "\n\nDissent · ") { text = String(text[..<tail.lowerBound]) }
            return text
        }
        #expect(answer.joined(separator: " ") == body.trimmingSuffix(" "))
    }

    /// Without spaces a piece is cut at the limit exactly: the parsed texts, joined, are the
    /// answer to the last character, and no piece ends inside `&amp;` or a surrogate pair.
    @Test func unbrokenTextIsCutBetweenCharactersNeverInsideAnEntityOrEmoji() throws {
        let body = String(repeating: "&😀a&👩‍💻🇫🇷<", count: 900)
        #expect(body.count > 5000 && body.utf16.count > 10_000)
        let messages = TelegramRenderer.render(Reply(kind: .result, body: body))
        let shown = try Self.shown(messages)
        #expect(shown.count == 4)
        #expect(shown.map(\.text).joined() == body)
        for (message, parsed) in zip(messages, shown) {
            #expect(parsed.length <= TelegramLimits.messageText)
            #expect(parsed.length >= TelegramLimits.messageText - 10 || parsed.text == shown.last?.text, "full messages but the last")
            #expect(Set(parsed.text).isSubset(of: ["&", "😀", "a", "👩‍💻", "🇫🇷", "<"]), "every emoji whole")
            #expect(!message.text.hasSuffix("&") && !message.text.hasSuffix("&amp") && !message.text.hasSuffix("&lt"))
        }
    }

    /// A short tail is kept with the end of the answer rather than sent alone.
    @Test func aShortFooterIsNeverAMessageOfItsOwn() throws {
        let body = String(repeating: "x", count: TelegramLimits.messageText)
        let shown = try Self.shown(TelegramRenderer.render(Reply(kind: .result, body: body, footer: Self.footer)))
        #expect(shown.count == 2)
        #expect(shown[1].text.hasPrefix("x"))
        #expect(shown.allSatisfy { $0.length <= TelegramLimits.messageText })
        #expect(shown.map { $0.text.prefix { $0 == "x" }.count }.reduce(0, +) == body.count)
    }

    /// Huge notes and many long dissent lines still fit, in as many messages as they need.
    @Test func aTailLongerThanAMessageFlowsIntoMoreMessages() throws {
        let dissent = (0..<12).map { _ in Dissent(model: String(repeating: "M", count: 300), reason: String(repeating: "<r> ", count: 200)) }
        let footer = AgreementFooter(ConsensusResult(answer: "x", agreement: 0.4, answered: 12, asked: 12, dissent: dissent, elapsed: .seconds(1)))
        let reply = Reply(kind: .result, title: "T", body: "Short.", footer: footer, notes: [String(repeating: "n&", count: 6000)])
        let shown = try Self.shown(TelegramRenderer.render(reply))
        #expect(shown.count == 5)
        #expect(shown.allSatisfy { $0.length <= TelegramLimits.messageText })
        #expect(shown[0].text.hasPrefix("T\nShort.\n\nDissent · "))
        #expect(shown.map { $0.italic.joined() }.joined().filter { $0 == "&" }.count == 6000, "every character of the note, in italics")
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
