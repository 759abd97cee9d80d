import Foundation
import RelayCore
import Testing

@testable import TeamsAdapter

/// What Teams shows of a reply: model text as written, never a mention or markup, within
/// Teams' message size; results as Adaptive Cards with their buttons.
@Suite("Teams: rendering")
struct TeamsRenderingTests {
    /// Teams pings only through a mention entity pointing at an `<at>` in the text: the model's
    /// `<at>`, tags and entities arrive escaped, and no entity is ever sent.
    @Test func modelTextCannotMentionOrMarkUp() {
        let hostile = "<at>General</at> <b>bold</b> &amp; <script>alert(1)</script>\u{0007}\nline two"
        let messages = TeamsRenderer.render(Reply(kind: .info, body: hostile, isPrivate: false), entryID: "e")
        #expect(messages.count == 1)
        guard case .text(let html) = messages.first else {
            Issue.record("not text")
            return
        }
        #expect(!html.contains("<at>") && !html.contains("<b>bold") && !html.contains("<script"))
        #expect(html.contains("&lt;at&gt;General&lt;/at&gt;"))
        #expect(TeamsHTML.unescape(html) == "<at>General</at> <b>bold</b> &amp; <script>alert(1)</script>\nline two")
        #expect(messages.first?.activity()["entities"] == nil)
    }

    /// A card's text runs are never read as Markdown or HTML; the title is the card's only
    /// emphasis; the footer and the buttons close the last card.
    @Test func aResultIsACardWithItsButtons() {
        let reply = Reply(
            kind: .result, title: "Tribunal", body: "**Not** true.\n\n<at>Everyone</at> [click](javascript:alert(1))",
            footer: AgreementFooter(ConsensusResult(answer: "No", verdict: .false, agreement: 0.8, answered: 5, asked: 5, dissent: [], elapsed: .seconds(3))),
            actions: [.runAgain(commandLine: "/tribunal the moon is cheese")])
        let messages = TeamsRenderer.render(reply, entryID: "entry-9")
        #expect(messages.count == 1)
        guard case .card(let card) = messages.first else {
            Issue.record("not a card")
            return
        }
        let runs = (card["body"]?.arrayValue ?? []).flatMap { $0["inlines"]?.arrayValue ?? [] }
        #expect(runs.first?["text"]?.stringValue == "Tribunal")
        #expect(runs.first?["weight"]?.stringValue == "Bolder")
        #expect(runs.contains { $0["text"]?.stringValue == "**Not** true." })
        #expect(runs.contains { $0["text"]?.stringValue == "<at>Everyone</at> [click](javascript:alert(1))" })
        #expect(runs.contains { $0["text"]?.stringValue?.contains("Agreement 80%") == true })
        #expect((card["body"]?.arrayValue ?? []).allSatisfy { $0["type"]?.stringValue == "RichTextBlock" })
        let actions = card["actions"]?.arrayValue ?? []
        #expect(actions.map { $0["type"]?.stringValue } == ["Action.Submit"])
        #expect(actions.first?["data"]?["line"]?.stringValue == "/tribunal the moon is cheese")
    }

    /// A long answer becomes several messages, each within the limit once encoded, nothing lost.
    @Test(arguments: ["word ", "日本語 ", "😀 ", "<&> ", "line\n"])
    func longRepliesSplitWithinTheLimit(unit: String) {
        let body = String(repeating: unit, count: 9_000)
        for kind in [Reply.Kind.info, .result] {
            let messages = TeamsRenderer.render(Reply(kind: kind, body: body, isPrivate: false), entryID: "e")
            #expect(messages.count > 1)
            for message in messages {
                #expect((message.activity().serialized()?.count ?? .max) <= TeamsLimits.messageBytes + 4_096)
            }
            if kind == .info {
                let shown = messages.map { message -> String in
                    guard case .text(let html) = message else { return "" }
                    return TeamsHTML.unescape(html)
                }
                #expect(shown.joined().filter { !$0.isWhitespace } == body.filter { !$0.isWhitespace })
            }
        }
    }
}
