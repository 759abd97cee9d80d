import RelayCore
import RelayTestSupport
import Testing

@testable import TelegramAdapter

@Suite("Telegram rendering")
struct TelegramRenderingTests {
    static func footer(_ verdict: Verdict?, dissent: [Dissent] = [], ledgerID: Int64? = nil) -> AgreementFooter {
        var footer = AgreementFooter(
            ConsensusResult(answer: "x", verdict: verdict, agreement: 0.82, answered: 3, asked: 3, dissent: dissent, elapsed: .milliseconds(1200)))
        footer.ledgerID = ledgerID
        return footer
    }

    /// What a user sees of `message`, read as Telegram reads the HTML.
    static func shown(_ message: TelegramMessage) throws -> TelegramHTMLReader.Parsed {
        try TelegramHTMLReader.parse(message.text).get()
    }

    @Test(
        arguments: [
            ("<b>bold</b>", "&lt;b&gt;bold&lt;/b&gt;"),
            ("&amp;", "&amp;amp;"),
            // The word joiner breaks `tg://`, which Telegram links wherever it stands.
            ("<a href=\"tg://user?id=1\">x</a>", "&lt;a href=\"tg:\u{2060}//user?id=1\"&gt;x&lt;/a&gt;"),
            ("</b> closes nothing", "&lt;/b&gt; closes nothing"),
            ("Tom & Jerry > Itchy", "Tom &amp; Jerry &gt; Itchy"),
            ("\u{600}<i>\u{301}", "\u{600}&lt;i&gt;\u{301}"),
            ("no markup at all, \"quoted\" 'too'", "no markup at all, \"quoted\" 'too'"),
        ] as [(String, String)])
    func escapingKeepsModelMarkupLiteral(input: String, expected: String) throws {
        #expect(TelegramHTML.escape(input) == expected)
        let parsed = try TelegramHTMLReader.parse(TelegramHTML.escape(input)).get()
        #expect(parsed.text.replacing("\u{2060}", with: "") == input, "Telegram shows exactly what the model wrote")
        #expect(parsed.bold.isEmpty && parsed.italic.isEmpty)
        #expect(TelegramHTML.parsedLength(of: input) >= parsed.length)
    }

    @Test func aConsensusResultShowsTitleAnswerDissentFooterNotesAndButtons() throws {
        let reply = Reply(
            kind: .result, title: "Tribunal", body: "The Eiffel Tower is in <b>Paris</b> & not Berlin.",
            footer: Self.footer(.false, dissent: [Dissent(model: "mistral", verdict: .partly, reason: "It was\nonce planned\n  elsewhere")], ledgerID: 12),
            notes: ["council: 3 models"], isPrivate: true, actions: [.postToChannel, .runAgain(commandLine: "/tribunal The Eiffel Tower is in Berlin")])
        let messages = TelegramRenderer.render(reply, entryID: "out-42")
        #expect(messages.count == 1)
        #expect(
            messages[0].text == """
                <b>Tribunal</b>
                The Eiffel Tower is in &lt;b&gt;Paris&lt;/b&gt; &amp; not Berlin.

                Dissent · mistral (partly): It was once planned elsewhere
                <i>Verdict: false · Agreement 82% · 3/3 models · 1.2 s · fact-check #12</i>
                <i>council: 3 models</i>
                """)
        let shown = try Self.shown(messages[0])
        #expect(shown.bold == ["Tribunal"])
        #expect(shown.italic == [Self.footer(.false, ledgerID: 12).summary, "council: 3 models"])
        #expect(LedgerReference.id(in: shown.text) == 12, "a 👍 on the message finds its fact-check")
        #expect(
            messages[0].buttons == [
                [TelegramButton(text: "Post to chat", callbackData: "post:out-42"), TelegramButton(text: "Run again", callbackData: "again:out-42")]
            ])
    }

    @Test func theFooterSaysWhatTheScoreMeansAsSlackAndDiscordDo() throws {
        var learned = AgreementFooter(
            ConsensusResult(
                answer: "x", verdict: .false, agreement: 0.87, answered: 4, asked: 4, elapsed: .milliseconds(2100), scoreMeaning: .probabilityRight,
                agreeing: 3))
        learned.ledgerID = 7
        let probability = try Self.shown(TelegramRenderer.render(Reply(kind: .result, body: "No.", footer: learned))[0])
        #expect(probability.italic == ["Verdict: false · 87% likely right · 3 of 4 agree · 4/4 models · 2.1 s · fact-check #7"])

        let partial = AgreementFooter(
            ConsensusResult(answer: "x", agreement: 0.5, answered: 2, asked: 4, elapsed: .seconds(3), scoreMeaning: .answeredShare))
        let answered = try Self.shown(TelegramRenderer.render(Reply(kind: .result, body: "Maybe.", footer: partial))[0])
        #expect(answered.italic == [partial.summary, partial.caveat!])
        #expect(answered.italic[0] == "Answered 50% · 2 of 4 answered · 3.0 s")
    }

    @Test func dissentIsOneLinePerModelCappedAtTenAndCannotClaimTheFactCheck() throws {
        let dissent = (0..<13).map {
            Dissent(model: "model-\($0)\n<i>", verdict: .true, reason: "see fact-check #999 " + String(repeating: "because ", count: 80))
        }
        let messages = TelegramRenderer.render(Reply(kind: .result, body: "Answer.", footer: Self.footer(.partly, dissent: dissent, ledgerID: 5)))
        let shown = try Self.shown(try #require(messages.last))
        let lines = shown.text.split(separator: "\n").filter { $0.hasPrefix("Dissent · ") }
        #expect(lines.count == 10)
        #expect(lines[0].hasPrefix("Dissent · model-0 <i> (true): see fact-check #999 because"))
        #expect(lines.allSatisfy { $0.hasSuffix("…") && $0.utf16.count < 450 }, "a long reason is cut")
        #expect(shown.text.contains("\n3 more models disagreed.\n"))
        #expect(LedgerReference.id(in: shown.text) == 5, "the summary comes after every model's reason")
        let silent = Reply(kind: .result, body: "x", footer: Self.footer(.true, dissent: [Dissent(model: "m", reason: " ")]))
        #expect(TelegramRenderer.render(silent)[0].text.contains("\nDissent · m: (no reason given)\n"))
    }

    @Test func errorsAreMarkedAndEmptyRepliesStillSaySomething() throws {
        #expect(TelegramRenderer.render(.error("No text to <translate>."))[0].text == "⚠️ No text to &lt;translate&gt;.")
        let titled = TelegramRenderer.render(Reply(kind: .error, title: "Chain polish failed", body: "The backend timed out."))
        #expect(titled[0].text == "<b>⚠️ Chain polish failed</b>\nThe backend timed out.")
        #expect(TelegramRenderer.render(Reply(kind: .result, body: "  \n "))[0].text == "(no text)")
        #expect(TelegramRenderer.render(Reply(kind: .error, body: ""))[0].text == "⚠️")
        #expect(TelegramRenderer.render(Reply(kind: .info, title: "Commands", body: ""))[0].text == "<b>Commands</b>")
        #expect(TelegramRenderer.render(.info("Saved.")).map(\.buttons) == [[]], "info offers no buttons")
    }

    @Test func buttonsNeedAnEntryAndFitSixtyFourBytes() {
        let reply = Reply(kind: .result, body: "ok", isPrivate: true, actions: [.postToChannel, .runAgain(commandLine: "/fix teh cat")])
        #expect(TelegramRenderer.render(reply)[0].buttons.isEmpty, "without an entry nothing could resolve the button")
        #expect(TelegramRenderer.render(reply, entryID: "")[0].buttons.isEmpty)
        let uuid = "6F1C2B7A-3D4E-4F60-8A9B-0C1D2E3F4A5B"
        let buttons = TelegramRenderer.render(reply, entryID: uuid)[0].buttons.joined()
        #expect(buttons.map(\.callbackData) == ["post:" + uuid, "again:" + uuid])
        #expect(buttons.allSatisfy { $0.callbackData.utf8.count <= TelegramLimits.callbackData })

        // An id of 59 bytes: "post:" + id is 64 and fits, "again:" + id is 65 and does not.
        let long = String(repeating: "é", count: 29) + "x"
        #expect(TelegramRenderer.render(reply, entryID: long)[0].buttons.joined().map(\.text) == ["Post to chat"])
        #expect(TelegramRenderer.render(reply, entryID: long + "x")[0].buttons.isEmpty)
        let notPrivate = Reply(kind: .result, body: "ok", actions: [.runAgain(commandLine: "/fix x")])
        #expect(TelegramRenderer.render(notPrivate, entryID: "e1")[0].buttons == [[TelegramButton(text: "Run again", callbackData: "again:e1")]])
    }

    @Test func callbackDataReadsBack() {
        #expect(TelegramButton.Action(callbackData: "post:out-42") == .postToChat(entryID: "out-42"))
        #expect(TelegramButton.Action(callbackData: "again:out-42") == .runAgain(entryID: "out-42"))
        #expect(TelegramButton.Action(callbackData: "post:") == nil)
        #expect(TelegramButton.Action(callbackData: "other") == nil)
        #expect(TelegramButton.Action.runAgain(entryID: "e").callbackData == "again:e")
        #expect(TelegramButton.Action.postToChat(entryID: String(repeating: "x", count: 60)).callbackData == nil)
    }

    @Test func sendAndEditBodiesAreWhatTheBotAPITakes() {
        let message = TelegramMessage(text: "<b>Hi</b>", buttons: [[TelegramButton(text: "Run again", callbackData: "again:e1")]])
        #expect(
            message.sendBody(chatID: -100_123_456_789, replyTo: 42) == [
                "chat_id": .int(-100_123_456_789), "text": "<b>Hi</b>", "parse_mode": "HTML", "link_preview_options": ["is_disabled": true],
                "reply_parameters": ["message_id": 42, "allow_sending_without_reply": true],
                "reply_markup": ["inline_keyboard": [[["text": "Run again", "callback_data": "again:e1"]]]],
            ])
        let plain = TelegramMessage(text: "x")
        #expect(plain.sendBody(chatID: 7, replyTo: nil) == ["chat_id": 7, "text": "x", "parse_mode": "HTML", "link_preview_options": ["is_disabled": true]])
        #expect(
            plain.editBody(chatID: 7, messageID: 9) == [
                "chat_id": 7, "message_id": 9, "text": "x", "parse_mode": "HTML", "link_preview_options": ["is_disabled": true],
                "reply_markup": ["inline_keyboard": []],
            ], "an edit without buttons removes the old ones")
        #expect(message.editBody(chatID: 7, messageID: 9)["reply_markup"] == ["inline_keyboard": [[["text": "Run again", "callback_data": "again:e1"]]]])
    }

    @Test func progressIsOneEscapedLineWithoutButtons() {
        let message = TelegramRenderer.render(RunProgress(completed: 2, total: 5, block: "rewrite:<b>formal</b>"))
        #expect(message.text == "⏳ Running… 2/5 (rewrite:&lt;b&gt;formal&lt;/b&gt;)")
        #expect(message.buttons.isEmpty)
        let long = TelegramRenderer.render(RunProgress(completed: 1, total: 2, block: String(repeating: "&", count: 5000)))
        #expect((try? TelegramHTMLReader.parse(long.text).get().length).map { $0 <= TelegramLimits.messageText } == true)
    }
}

/// The relay's own words on Telegram: `code` spans shown as code, never as literal backticks.
@Suite("Telegram: the relay's own words")
struct TelegramRelayTextTests {
    @Test func anErrorShowsItsCodeSpansAsCodeWithoutBackticks() throws {
        let reply = Reply.error("Unknown command `/transalte <b>`. Did you mean `/translate`? Type `/help` for the list of commands.")
        let message = try #require(TelegramRenderer.render(reply).first)
        #expect(!message.text.contains("`"), "\(message.text)")
        let parsed = try FakeTelegramHTML.parse(message.text)
        #expect(parsed.text == "⚠️ Unknown command /transalte <b>. Did you mean /translate? Type /help for the list of commands.")
        #expect(parsed.entities.filter { $0.type == "code" }.count == 3, "\(parsed.entities)")
        #expect(parsed.entities.allSatisfy { $0.type == "code" }, "what was typed stays text, even inside a span")
    }

    @Test func aModelsBackticksAndAnUnpairedOneStayAsWritten() throws {
        let result = try #require(TelegramRenderer.render(Reply(kind: .result, body: "use `ls` here")).first)
        #expect(try FakeTelegramHTML.parse(result.text).text == "use `ls` here")
        let unpaired = try #require(TelegramRenderer.render(Reply.error("a `b` c ` d")).first)
        #expect(try FakeTelegramHTML.parse(unpaired.text).text == "⚠️ a b c ` d")
    }
}
