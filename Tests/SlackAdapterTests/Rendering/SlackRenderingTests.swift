import RelayCore
import RelayTestSupport
import SlackAdapter
import Testing

@Suite("Slack rendering")
struct SlackRenderingTests {
    // MARK: escaping

    @Test func modelTextCannotPingOrLink() {
        let hostile = "<!channel> <@U123> & <https://x|y> <!here|here> <#C1>"
        let footer = AgreementFooter(
            ConsensusResult(
                answer: "", verdict: .partly, agreement: 0.5, answered: 2, asked: 2,
                dissent: [Dissent(model: "m<!everyone>", reason: "<@U9> said so")], elapsed: .seconds(1)))
        let reply = Reply(
            kind: .result, title: "Title <!here>", body: hostile, footer: footer, notes: ["note <@U1>"],
            actions: [.runAgain(commandLine: "/ai <!channel>")])
        let messages = SlackReplyRenderer.render(reply)
        #expect(messages.count == 1)
        let message = messages[0]
        let shown = [message.text] + message.blocks.flatMap(\.mrkdwnTexts)
        for text in shown {
            #expect(!text.contains("<"), "\(text)")
            #expect(!text.contains(">"), "\(text)")
            #expect(Self.onlyEntities(text), "\(text)")
        }
        #expect(message.blocks.flatMap(\.mrkdwnTexts).contains("&lt;!channel&gt; &lt;@U123&gt; &amp; &lt;https://x|y&gt; &lt;!here|here&gt; &lt;#C1&gt;"))
        #expect(message.text.contains("&lt;!channel&gt; &lt;@U123&gt; &amp; &lt;https://x|y&gt;"))
        // Slack must not pre-process the text either (bare `@here`, channel names, addresses).
        for object in message.blocks.flatMap(\.mrkdwnObjects) {
            #expect(object["verbatim"] == true)
        }
        // A button value is data, not shown text: it keeps the command line as typed.
        #expect(message.buttons.map(\.value) == ["/ai <!channel>"])
    }

    @Test func escapingReplacesOnlyTheThreeCharacters() {
        #expect(
            SlackMrkdwn.escape(#"a & b < c > d "quoted" 'single' *bold* _it_ ~s~ `code` é"#)
                == #"a &amp; b &lt; c &gt; d "quoted" 'single' *bold* _it_ ~s~ `code` é"#)
        #expect(SlackMrkdwn.escape("&amp;") == "&amp;amp;")
    }

    // MARK: splitting

    /// A long answer of words, lines and paragraphs, with characters that escaping lengthens
    /// and characters of several UTF-16 units.
    static func longAnswer(characters: Int) -> String {
        let words = ["alpha", "&", "<b>", "café", "naïve", "👩‍👩‍👧", "e\u{301}tude", "x>y", "日本語", "R&D", "—", "ok"]
        var text = ""
        var count = 0
        var index = 0
        while count < characters {
            let word = words[(index * 7 + index / 5) % words.count]
            index += 1
            let separator = index % 97 == 0 ? "\n\n" : index % 13 == 0 ? "\n" : " "
            text += word + separator
            count += word.count + separator.count
        }
        return text
    }

    @Test func aHundredThousandCharacterAnswerIsSplitWithinEveryLimit() {
        let answer = Self.longAnswer(characters: 100_000)
        let reply = Reply(
            kind: .result, title: "Summary", body: answer,
            footer: AgreementFooter(ConsensusResult(answer: answer, agreement: 0.9, answered: 3, asked: 3, elapsed: .milliseconds(12500))),
            notes: ["council of 3"], actions: [.runAgain(commandLine: "/summarize")])
        let messages = SlackReplyRenderer.render(reply)
        #expect(messages.count > 25)
        var shownWords: [String] = []
        for (index, message) in messages.enumerated() {
            #expect(message.blocks.count <= SlackLimits.blocksPerMessage)
            #expect(message.text.utf16.count <= SlackLimits.messageText)
            // Fallbacks stay near the preferred size (the first also holds the title, the last the footer).
            #expect(message.text.utf16.count <= SlackLimits.preferredMessageText + 200)
            #expect(Self.onlyEntities(message.text))
            for text in message.blocks.flatMap(\.mrkdwnTexts) {
                #expect(text.utf16.count <= SlackLimits.sectionText)
                #expect(Self.onlyEntities(text))
            }
            let sections = message.blocks.filter { $0["type"] == "section" }.compactMap { $0["text"]?["text"]?.stringValue }
            let body = index == 0 ? Array(sections.dropFirst()) : sections
            shownWords += body.flatMap { Self.unescape($0).split(whereSeparator: \.isWhitespace).map(String.init) }
            #expect(message.buttons.isEmpty == (index != messages.count - 1))
        }
        let complete = shownWords == answer.split(whereSeparator: \.isWhitespace).map(String.init)
        #expect(complete, "the sections together do not hold every word of the answer, in order")
        #expect(messages[0].blocks.first?["text"]?["text"] == "*Summary*")
        let closing: [String] = messages.last!.blocks.flatMap(\.mrkdwnTexts)
        #expect(closing.contains { $0.contains("Agreement 90%") })
    }

    @Test func hardCutsNeverSplitACharacterOrAnEntity() {
        let units = ["e\u{301}", "&", "👩‍👩‍👧", "<", "x", "🇫🇷", ">"]
        let answer = (0..<9000).map { units[($0 * 5 + $0 / 3) % units.count] }.joined()
        let messages = SlackReplyRenderer.render(Reply(kind: .result, body: answer))
        #expect(messages.count > 5)
        var rebuilt = ""
        for message in messages {
            #expect(message.text.utf16.count <= SlackLimits.preferredMessageText)
            for text in message.blocks.flatMap(\.mrkdwnTexts) {
                #expect(text.utf16.count <= SlackLimits.sectionText)
                #expect(Self.onlyEntities(text))
                let plain = Self.unescape(text)
                #expect(plain.allSatisfy { units.contains(String($0)) }, "a section starts or ends inside a character")
                rebuilt += plain
            }
        }
        let complete = rebuilt == answer  // a Bool, so a failure does not print 9000 characters twice
        #expect(complete, "the sections together are not the answer")
    }

    @Test func splitsPreferParagraphsThenLinesThenWords() {
        let paragraph = String(repeating: "word ", count: 500)  // 2500 characters
        let answer = paragraph + "\n\n" + paragraph + "\nline two " + paragraph
        let messages = SlackReplyRenderer.render(Reply(kind: .result, body: answer))
        let sections = messages.flatMap { $0.blocks.compactMap { $0["text"]?["text"]?.stringValue } }
        #expect(sections.first == String(paragraph.dropLast()))
        #expect(sections.allSatisfy { !$0.hasPrefix(" ") && !$0.hasPrefix("\n") && !$0.hasSuffix("\n") })
        #expect(sections.allSatisfy { !$0.hasPrefix("ord") && !$0.hasSuffix("wor") }, "no word is cut")
    }

    // MARK: footer, notes, errors

    @Test func theFooterShowsVerdictAgreementModelsTimeAndEachDissent() {
        let footer = AgreementFooter(
            ConsensusResult(
                answer: "No.", verdict: .false, agreement: 0.6, answered: 4, asked: 5,
                dissent: [
                    Dissent(model: "llama-3", verdict: .true, reason: "It moved\n  in 1999 & stayed."),
                    Dissent(model: "qwen", reason: "Unclear sources."),
                ], elapsed: .milliseconds(3240)))
        let message = SlackReplyRenderer.render(Reply(kind: .result, body: "No.", footer: footer, notes: ["Checked by 5 models"]))[0]
        let context = message.blocks.filter { $0["type"] == "context" }.flatMap(\.mrkdwnTexts).joined(separator: "\n")
        #expect(footer.summary == "Verdict: false · Agreement 60% · 4 of 5 answered · 3.2 s")
        #expect(context.contains("Verdict: false · Agreement 60% · 4 of 5 answered · 3.2 s"))
        #expect(context.contains("Dissent · llama-3 (true): It moved in 1999 &amp; stayed.\n"))
        #expect(context.contains("Dissent · qwen: Unclear sources."))
        #expect(context.contains("Checked by 5 models") && !context.contains("· Checked"))
        #expect(message.text.hasSuffix("Verdict: false · Agreement 60% · 4 of 5 answered · 3.2 s"))
        let order = message.blocks.compactMap { $0["type"]?.stringValue }
        #expect(order == ["section", "context", "context"])

        let allAnswered = AgreementFooter(ConsensusResult(answer: "", agreement: 1, answered: 3, asked: 3, elapsed: .seconds(1), scoreMeaning: .answeredShare))
        let shared = SlackReplyRenderer.render(Reply(kind: .result, body: "x", footer: allAnswered))[0]
        let sharedContext = shared.blocks.flatMap(\.mrkdwnTexts).joined()
        #expect(sharedContext.contains("Answered 100% · 3/3 models"))
        #expect(sharedContext.contains("share of models that answered"))
    }

    @Test func errorsLookLikeErrors() {
        let plain = SlackReplyRenderer.render(.error("No model answered in time. Try again."))[0]
        #expect(plain.text == "⚠️ No model answered in time. Try again.")
        #expect(plain.blocks.first?["text"]?["text"] == "⚠️ No model answered in time. Try again.")
        let titled = SlackReplyRenderer.render(Reply(kind: .error, title: "Chain stopped", body: "Block 2 failed.", isPrivate: true))[0]
        #expect(titled.blocks.first?["text"]?["text"] == "⚠️ *Chain stopped*")
        #expect(titled.text == "⚠️ *Chain stopped*\nBlock 2 failed.")
    }

    @Test func anEmptyReplyStillHasFallbackText() {
        let message = SlackReplyRenderer.render(Reply(kind: .info, body: ""))
        #expect(message.count == 1)
        #expect(!message[0].text.isEmpty)
        #expect(SlackReplyRenderer.render(Reply(kind: .info, title: "Saved", body: " \n "))[0].text == "*Saved*")
    }

    // MARK: buttons

    @Test func buttonsFollowTheReplysActions() {
        let reply = Reply(kind: .result, body: "Bonjour", isPrivate: true, actions: [.postToChannel, .runAgain(commandLine: "/translate fr Good morning")])
        let both = SlackReplyRenderer.render(reply, postToChannelID: "outbox-7")[0]
        #expect(both.blocks.last?["type"] == "actions")
        #expect(both.buttons.map(\.actionID) == ["post_to_channel", "run_again"])
        #expect(both.buttons.map(\.value) == ["outbox-7", "/translate fr Good morning"])
        #expect(both.buttons.map(\.label) == ["Post to channel", "Run again"])

        // No id to resolve later: no "Post to channel".
        #expect(SlackReplyRenderer.render(reply)[0].buttons.map(\.actionID) == ["run_again"])

        // A command line too long for a button value: no "Run again".
        let long = "/ai " + String(repeating: "é", count: SlackLimits.buttonValue)
        let tooLong = Reply(kind: .result, body: "x", actions: [.runAgain(commandLine: long)])
        #expect(SlackReplyRenderer.render(tooLong)[0].buttons.isEmpty)
        #expect(!SlackReplyRenderer.render(tooLong)[0].blocks.contains { $0["type"] == "actions" })
        let fits = "/ai " + String(repeating: "a", count: SlackLimits.buttonValue - 4)
        #expect(SlackReplyRenderer.render(Reply(kind: .result, body: "x", actions: [.runAgain(commandLine: fits)]))[0].buttons.map(\.value) == [fits])

        // Info and errors offer none.
        #expect(!SlackReplyRenderer.render(.info("Help"))[0].blocks.contains { $0["type"] == "actions" })
    }

    @Test func whatComesBackFromAButtonIsWhatWasRendered() {
        let reply = Reply(kind: .result, body: "x", isPrivate: true, actions: [.postToChannel, .runAgain(commandLine: "/fix its done")])
        let rendered = SlackReplyRenderer.render(reply, postToChannelID: "outbox-9")[0].buttons
        let clicked = rendered.map { SlackButton(SlackBlockAction(actionID: $0.actionID, value: $0.value, type: "button")) }
        #expect(clicked == [.postToChannel(id: "outbox-9"), .runAgain(commandLine: "/fix its done")])
    }

    // MARK: progress, response_url, acks

    @Test func progressIsOneEscapedLine() {
        let message = SlackReplyRenderer.render(RunProgress(completed: 2, total: 5, block: "rewrite:<formal>"))
        #expect(message.text == "⏳ Running… 2/5 (rewrite:&lt;formal&gt;)")
        #expect(
            message.blocks == [["type": "context", "elements": [["type": "mrkdwn", "text": "⏳ Running… 2/5 (rewrite:&lt;formal&gt;)", "verbatim": true]]]])
    }

    @Test func responseURLBodiesAndTheImmediateAck() {
        let message = SlackMessage(text: "hi", blocks: [["type": "section", "text": ["type": "mrkdwn", "text": "hi"]]])
        #expect(
            message.responseURLBody(.inChannel)
                == [
                    "text": "hi", "blocks": .array(message.blocks), "response_type": "in_channel", "replace_original": false,
                    "unfurl_links": false, "unfurl_media": false,
                ])
        #expect(message.responseURLBody(.ephemeral, replaceOriginal: true)["replace_original"] == true)
        #expect(String(decoding: SlackAck.workingOnIt().encoded(), as: UTF8.self) == #"{"response_type":"ephemeral","text":"⏳ Working on it…"}"#)
    }

    // MARK: helpers

    /// Every `&` starts one of the three entities.
    static func onlyEntities(_ text: String) -> Bool {
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            let after = rest[amp...]
            guard after.hasPrefix("&amp;") || after.hasPrefix("&lt;") || after.hasPrefix("&gt;") else { return false }
            rest = rest[rest.index(after: amp)...]
        }
        return true
    }

    static func unescape(_ text: String) -> String {
        text.replacing("&lt;", with: "<").replacing("&gt;", with: ">").replacing("&amp;", with: "&")
    }
}

struct RenderedButton: Equatable {
    var actionID: String
    var value: String
    var label: String
}

extension SlackMessage {
    var buttons: [RenderedButton] {
        blocks.filter { $0["type"] == "actions" }.flatMap { $0["elements"]?.arrayValue ?? [] }.compactMap { button in
            guard let actionID = button["action_id"]?.stringValue, let value = button["value"]?.stringValue,
                let label = button["text"]?["text"]?.stringValue
            else { return nil }
            return RenderedButton(actionID: actionID, value: value, label: label)
        }
    }
}
