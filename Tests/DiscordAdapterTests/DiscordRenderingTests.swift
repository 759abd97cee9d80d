import Foundation
import RelayCore
import Testing

@testable import DiscordAdapter

@Suite("Discord rendering")
struct DiscordRenderingTests {
    static func footer(_ verdict: Verdict?, dissent: [Dissent] = []) -> AgreementFooter {
        AgreementFooter(
            ConsensusResult(answer: "x", verdict: verdict, agreement: 0.82, answered: 3, asked: 3, dissent: dissent, elapsed: .milliseconds(1200)))
    }

    @Test func aConsensusResultIsAnEmbedColouredByVerdictWithFooterDissentAndButtons() throws {
        let reply = Reply(
            kind: .result, title: "Tribunal", body: "The Eiffel Tower is in **Paris**.",
            footer: Self.footer(.false, dissent: [Dissent(model: "mistral", verdict: .partly, reason: "It was\nonce planned\n  elsewhere")]),
            notes: ["council: 3 models"], isPrivate: true, actions: [.postToChannel, .runAgain(commandLine: "/tribunal The Eiffel Tower is in Berlin")])
        let messages = DiscordRenderer.render(reply, postToChannelID: "out-42")
        #expect(messages.count == 1)
        let body = messages[0].body(ephemeral: true)
        #expect(body["allowed_mentions"] == ["parse": []])
        #expect(body["flags"] == 64)
        #expect(body["content"] == "")
        let embed = try #require(body["embeds"]?[0])
        #expect(embed["title"] == "Tribunal")
        #expect(embed["description"] == #"The Eiffel Tower is in \*\*Paris\*\*."#)
        #expect(embed["color"] == .int(0xED4245))
        #expect(embed["footer"]?["text"] == "Verdict: false · Agreement 82% · 3/3 models · 1.2 s\ncouncil: 3 models")
        #expect(embed["fields"] == [["name": "Dissent · mistral (partly)", "value": "It was once planned elsewhere", "inline": false]])
        #expect(
            body["components"] == [
                [
                    "type": 1,
                    "components": [
                        ["type": 2, "style": 1, "label": "Post to channel", "custom_id": "rhea:post:out-42"],
                        ["type": 2, "style": 2, "label": "Run again", "custom_id": "rhea:again:/tribunal The Eiffel Tower is in Berlin"],
                    ],
                ]
            ])
        #expect(DiscordButton(customID: "rhea:again:/fix x") == .runAgain(commandLine: "/fix x"))
        #expect(DiscordButton(customID: "rhea:post:out-42") == .postToChannel(id: "out-42"))
        #expect(DiscordButton(customID: "rhea:post:") == .other(customID: "rhea:post:"))
    }

    @Test(arguments: [
        (Verdict.true, 0x57F287), (.false, 0xED4245), (.partly, 0xF0B232), (.unverifiable, 0x95A5A6),
    ])
    func coloursByVerdict(verdict: Verdict, colour: Int) {
        #expect(DiscordRenderer.colour(of: Reply(kind: .result, body: "x", footer: Self.footer(verdict))) == colour)
    }

    @Test func errorsAreRedAndMarkedAndPlainResultsBlurple() {
        let error = DiscordRenderer.render(.error("No text to translate."))[0].body()
        #expect(error["embeds"]?[0]?["description"] == "⚠️ No text to translate.")
        #expect(error["embeds"]?[0]?["color"] == .int(0xED4245))
        #expect(DiscordRenderer.colour(of: Reply(kind: .result, body: "x")) == 0x5865F2)
        #expect(DiscordRenderer.render(Reply(kind: .result, body: "   "))[0].embeds[0]["description"] == "(no text)")
    }

    @Test func aLongAnswerIsSplitInOrderWithinEveryLimit() throws {
        let paragraph = String(repeating: "word_with*stars ", count: 40) + "\n\n"
        let body = String(repeating: paragraph, count: 40)
        let dissent = (0..<14).map { Dissent(model: "model-\($0)", verdict: .true, reason: String(repeating: "because ", count: 80)) }
        let reply = Reply(
            kind: .result, title: String(repeating: "T", count: 400), body: body, footer: Self.footer(.partly, dissent: dissent),
            notes: [String(repeating: "n", count: 3000)])
        let messages = DiscordRenderer.render(reply)
        #expect(messages.count > 3)
        var rebuilt = ""
        for (index, message) in messages.enumerated() {
            let embed = try #require(message.embeds.first)
            let description = embed["description"]?.stringValue ?? ""
            #expect(description.utf16.count <= DiscordLimits.embedDescription)
            let title = embed["title"]?.stringValue ?? ""
            #expect(title.utf16.count <= DiscordLimits.embedTitle)
            let footer = embed["footer"]?["text"]?.stringValue ?? ""
            #expect(footer.utf16.count <= DiscordLimits.embedFooter)
            let fields = embed["fields"]?.arrayValue ?? []
            #expect(fields.count <= DiscordLimits.fields)
            let fieldText = fields.reduce(0) { $0 + ($1["name"]?.stringValue?.utf16.count ?? 0) + ($1["value"]?.stringValue?.utf16.count ?? 0) }
            #expect(title.utf16.count + description.utf16.count + footer.utf16.count + fieldText <= DiscordLimits.embedTotal)
            #expect((index == 0) == !title.isEmpty, "the title opens the first message only")
            #expect((index == messages.count - 1) == !footer.isEmpty, "the footer closes the last only")
            rebuilt += description.replacingOccurrences(of: "\\", with: "")
        }
        #expect(rebuilt.filter { !$0.isWhitespace } == body.filter { !$0.isWhitespace }, "nothing lost, nothing reordered")
        #expect(messages.last?.embeds[0]["fields"]?.arrayValue?.count == 11, "ten dissenters, then how many more")
    }

    @Test func contentRenderingSplitsAt2000AndSuppressesPreviews() {
        let reply = Reply(
            kind: .result, title: "Answer", body: String(repeating: "See https://example.com/a_b @everyone. ", count: 150), footer: Self.footer(.true))
        let messages = DiscordRenderer.renderAsContent(reply)
        #expect(messages.count > 1)
        for message in messages {
            #expect(message.content.utf16.count <= DiscordLimits.content)
            #expect(message.embeds.isEmpty)
            #expect(message.body()["flags"] == 4)
            #expect(message.body()["allowed_mentions"] == ["parse": []])
            #expect(!message.content.contains("@everyone"))
        }
        #expect(messages[0].content.hasPrefix("**Answer**\nSee https://example.com/a_b @\u{200B}everyone."))
        #expect(messages.last!.content.hasSuffix("Verdict: true · Agreement 82% · 3/3 models · 1.2 s"))
    }

    @Test func progressIsOneEscapedLine() {
        let message = DiscordRenderer.render(RunProgress(completed: 2, total: 5, block: "rewrite:*formal*"))
        #expect(message.content == #"⏳ Running… 2/5 (rewrite:\*formal\*)"#)
        #expect(message.body()["allowed_mentions"] == ["parse": []])
    }

    @Test func buttonsThatDoNotFitAreLeftOut() {
        let long = "/ai " + String(repeating: "x", count: 200)
        let reply = Reply(kind: .result, body: "ok", isPrivate: true, actions: [.postToChannel, .runAgain(commandLine: long)])
        #expect(DiscordRenderer.render(reply)[0].components.isEmpty, "no id for Post to channel, and the line is over 100")
    }

    @Test(
        arguments: [
            ("@everyone and @here", "@\u{200B}everyone and @\u{200B}here"),
            (
                "<@123> <@!123> <@&456> <#789> <t:1700000000:R> </help:1>",
                "\\<@\u{200B}123\\> \\<@\u{200B}!123\\> \\<@\u{200B}&456\\> \\<\\#789\\> \\<t:1700000000:R\\> \\</help:1\\>"
            ),
            ("[bank.com](https://evil.example)", #"\[bank.com\](https://evil.example)"#),
            (
                "||hidden|| ~~gone~~ `code` > quote\n# Title\n-# small",
                #"\|\|hidden\|\| \~\~gone\~\~ \`code\` \> quote"# + "\n" + ##"\# Title"## + "\n" + ##"-\# small"##
            ),
            ("https://en.wikipedia.org/wiki/Eiffel_Tower#History.", #"https://en.wikipedia.org/wiki/Eiffel_Tower#History."#),
            ("snake_case and https://x.y/a_b_ (see https://x.y/c_d)", #"snake\_case and https://x.y/a_b_ (see https://x.y/c_d)"#),
            ("https://_x_ and xhttps://a.b/_c_", #"https://\_x\_ and xhttps://a.b/\_c\_"#),
            ("back\\slash", #"back\\slash"#),
            ("\u{600}<@1>\u{301}", "\u{600}\\<@\u{200B}1\\>\u{301}"),
            // An `@` in an e-mail or web address is left whole; a mass mention never is.
            ("mail ada@example.com, see https://mastodon.social/@ada", "mail ada@example.com, see https://mastodon.social/@ada"),
            ("x@everyone.com and https://a.b/@here", "x@\u{200B}everyone.com and https://a.b/@\u{200B}here"),
            ("a@..b and @ada", "a@\u{200B}..b and @\u{200B}ada"),
        ] as [(String, String)])
    func escaping(input: String, expected: String) {
        #expect(DiscordMarkdown.escape(input) == expected)
    }
}
