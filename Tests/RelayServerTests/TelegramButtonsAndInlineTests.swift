import Foundation
import Hummingbird
import HummingbirdTesting
import RelayCore
import RelayTestSupport
import TelegramAdapter
import Testing

/// Telegram's buttons ("Post to chat", "Run again"), inline mode, restarts and hostile model text,
/// through the real server against the fake Bot API.
@Suite("Telegram: buttons, inline mode, restarts, escaping")
struct TelegramButtonsAndInlineTests {
    typealias Fakes = TelegramFakes

    @Test func aRestartBetweenStoringAnUpdateAndAnsweringItAnswersOnce() async throws {
        try await Fakes.with { fakes in
            let configuration = fakes.configuration()
            fakes.tribunal.hold(path: FakeRheaTribunal.quickPath)
            try await fakes.withRelay(configuration) { relay in
                #expect(try await relay.deliver(relay.message("/fix teh cat", update: 900, id: 40)).status == .ok)
                // The model is asked and holds its answer; stopping now parks the run in the inbox.
                _ = try #require(await relay.tribunal.next(path: FakeRheaTribunal.quickPath))
            }
            fakes.tribunal.release(path: FakeRheaTribunal.quickPath)
            try await fakes.withRelay(configuration) { relay in
                // Telegram delivers it again after the restart (its first answer was lost).
                #expect(try await relay.deliver(relay.message("/fix teh cat", update: 900, id: 40)).status == .ok)
                try await eventually("the reply") { !relay.telegram.messages(chat: Fakes.alice).isEmpty }
                try await relay.settled()
                let replies = relay.telegram.messages(chat: Fakes.alice)
                #expect(replies.count == 1, "\(replies.map(\.text))")
                #expect(replies.first?.replyToMessageID == 40)
                #expect(replies.first?.text.contains("teh cat") == true)
            }
        }
    }

    @Test func aPrivateResultGoesToTheAskerWhoCanPostItToTheGroupOnce() async throws {
        try await Fakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let bot = relay.telegram.botUsername
                let command = relay.message("/translate@\(bot) fr Good morning --private", update: 1000, id: 50, chat: Fakes.group)
                #expect(try await relay.deliver(command).status == .ok)
                try await relay.settled()
                #expect(relay.telegram.messages(chat: Fakes.group).isEmpty, "nothing of the answer in the group")
                let dm = try #require(relay.telegram.messages(chat: Fakes.alice).first)
                let post = try #require(dm.callbackData.first { $0.hasPrefix("post:") })

                // Someone else may not post it.
                let bob = relay.telegram.issueCallbackQuery(from: Fakes.bob, chat: Fakes.alice, messageID: dm.messageID, data: post)
                #expect(try await relay.deliver(bob).status == .ok)
                try await relay.settled()
                #expect(relay.telegram.messages(chat: Fakes.group).isEmpty)
                #expect(relay.telegram.callbackAnswers.last?.text?.contains("Only the person who asked") == true)

                // The asker may, once.
                for _ in 0..<2 {
                    let press = relay.telegram.issueCallbackQuery(from: Fakes.alice, chat: Fakes.alice, messageID: dm.messageID, data: post)
                    #expect(try await relay.deliver(press).status == .ok)
                    try await relay.settled()
                }
                let posted = relay.telegram.messages(chat: Fakes.group)
                #expect(posted.count == 1)
                #expect(posted.first?.text == dm.text || posted.first?.text.contains("Good morning") == true, "\(posted.map(\.text))")
                #expect(posted.first?.replyToMessageID == 50)
                #expect(relay.telegram.callbackAnswers.last?.text?.contains("already posted") == true)
                let updated = try #require(relay.telegram.message(chat: Fakes.alice, id: dm.messageID))
                #expect(!updated.callbackData.contains { $0.hasPrefix("post:") }, "the private copy loses its button")
                #expect(updated.text.contains("You posted this"))
                #expect(relay.telegram.callbackAnswers.allSatisfy { $0.accepted })
            }
        }
    }

    @Test func runAgainRunsTheCommandAgainForWhoeverPressed() async throws {
        try await Fakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                #expect(try await relay.deliver(relay.message("/fix teh cat", update: 1100, id: 60)).status == .ok)
                try await relay.settled()
                let first = try #require(relay.telegram.messages(chat: Fakes.alice).first)
                let again = try #require(first.callbackData.first { $0.hasPrefix("again:") })
                let press = relay.telegram.issueCallbackQuery(from: Fakes.alice, chat: Fakes.alice, messageID: first.messageID, data: again)
                #expect(try await relay.deliver(press).status == .ok)
                try await relay.settled()
                #expect(relay.telegram.messages(chat: Fakes.alice).count == 2)
                #expect(await relay.tribunal.requests(path: FakeRheaTribunal.quickPath).count == 2)
                #expect(relay.telegram.callbackAnswers.count == 1)
            }
        }
    }

    @Test func anInlineQueryIsAnsweredWithAResultCardWithinTheDeadline() async throws {
        try await Fakes.with { fakes in
            // What is checked here is the card, not the clock: the deadlines are far beyond what a
            // loaded machine takes (beside a CPU hog it took over Telegram's ten seconds). What a
            // late backend gets is `aSlowBackendGetsAPlaceholderThenTheResultOnTheNextQuery`'s.
            try await fakes.withRelay(fakes.configuration(inlineDeadline: .seconds(100))) { relay in
                relay.telegram.inlineQueryDeadline = .seconds(120)
                let query = relay.telegram.issueInlineQuery(from: Fakes.alice, query: "fr Good morning")
                #expect(try await relay.deliver(query).status == .ok)
                try await eventually("the inline answer") { !relay.telegram.inlineAnswers.isEmpty }
                let answer = try #require(relay.telegram.inlineAnswers.first)
                #expect(answer.error == nil, "\(answer.error ?? "")")
                #expect(answer.isPersonal == true)
                let card = try #require(answer.results.first)
                #expect(card["title"]?.stringValue?.contains("French") == true, "\(card)")
                #expect(card["input_message_content"]?["message_text"]?.stringValue?.contains("Good morning") == true)
                let quick = await relay.tribunal.requests(path: FakeRheaTribunal.quickPath)
                #expect(quick.count == 1)

                // Chains and tribunals never run inline: a query naming no action gets the how-to cards.
                let other = relay.telegram.issueInlineQuery(from: Fakes.alice, query: "tribunal the Moon is cheese")
                #expect(try await relay.deliver(other).status == .ok)
                try await eventually("the second answer") { relay.telegram.inlineAnswers.count == 2 }
                #expect(await relay.tribunal.requests(path: FakeRheaTribunal.tribunalPath).isEmpty)
                #expect(await relay.tribunal.requests(path: FakeRheaTribunal.quickPath).count == 1)
            }
        }
    }

    @Test func aSlowBackendGetsAPlaceholderThenTheResultOnTheNextQuery() async throws {
        try await Fakes.with { fakes in
            try await fakes.withRelay(fakes.configuration(inlineDeadline: .milliseconds(300))) { relay in
                fakes.tribunal.hold(path: FakeRheaTribunal.quickPath)
                let first = relay.telegram.issueInlineQuery(from: Fakes.alice, query: "formal hey send me the file")
                #expect(try await relay.deliver(first).status == .ok)
                try await eventually("the placeholder") { !relay.telegram.inlineAnswers.isEmpty }
                let placeholder = try #require(relay.telegram.inlineAnswers.first)
                #expect(placeholder.error == nil)
                #expect(placeholder.cacheTime == 0, "a placeholder is not cached by Telegram")
                #expect(placeholder.results.first?["title"]?.stringValue?.contains("working") == true)

                fakes.tribunal.release(path: FakeRheaTribunal.quickPath)
                // The same query with a space added, as Telegram sends it while the person types:
                // answered from the kept result, without a model call. Asked again until the
                // released run has kept it; a loaded machine may take longer than one deadline.
                var answered = 1
                for _ in 0..<100 {
                    let again = relay.telegram.issueInlineQuery(from: Fakes.alice, query: "formal hey send me the file ")
                    #expect(try await relay.deliver(again).status == .ok)
                    answered += 1
                    try await eventually("the answer to query \(answered)") { relay.telegram.inlineAnswers.count == answered }
                    let title = relay.telegram.inlineAnswers[answered - 1].results.first?["title"]?.stringValue
                    if title?.contains("working") != true { break }
                    try await Task.sleep(for: .milliseconds(300))
                }
                let result = try #require(relay.telegram.inlineAnswers.last)
                #expect(result.error == nil)
                #expect(result.results.first?["input_message_content"]?["message_text"]?.stringValue?.contains("hey send me the file") == true)
                #expect(await relay.tribunal.requests(path: FakeRheaTribunal.quickPath).count == 1)
            }
        }
    }

    @Test func anInlineAnswerCannotPingAnyoneInTheSendersName() async throws {
        try await Fakes.with { fakes in
            await fakes.tribunal.setQuickAnswer { _ in "ask @durov or tg://user?id=1 or TG://user?id=2" }
            // A deadline a busy test machine cannot miss: past it the card would be a placeholder.
            try await fakes.withRelay(fakes.configuration(inlineDeadline: .seconds(20))) { relay in
                let query = relay.telegram.issueInlineQuery(from: Fakes.alice, query: "fr Good morning")
                #expect(try await relay.deliver(query).status == .ok)
                try await eventually("the inline answer") { !relay.telegram.inlineAnswers.isEmpty }
                let card = try #require(relay.telegram.inlineAnswers.first?.results.first)
                let text = try #require(card["input_message_content"]?["message_text"]?.stringValue)
                #expect(!text.contains("@durov") && !text.lowercased().contains("tg://"), "\(text.debugDescription)")
                #expect(text.replacing("\u{2060}", with: "") == "ask @durov or tg://user?id=1 or TG://user?id=2")
            }
        }
    }

    @Test func hostileModelTextCannotMakeLinksTagsOrMentions() async throws {
        let hostile =
            #"<a href="https://evil.example">https://bank.example</a> <b>bold</b> &amp; &lt;tg-spoiler> @everyone "#
            + #"<tg-emoji emoji-id="1">x</tg-emoji> </b>"#
        try await Fakes.with { fakes in
            await fakes.tribunal.setQuickAnswer { _ in hostile }
            try await fakes.withRelay(fakes.configuration()) { relay in
                #expect(try await relay.deliver(relay.message("/fix anything", update: 1200)).status == .ok)
                try await relay.settled()
                #expect(relay.telegram.calls("sendMessage").allSatisfy { $0.errorDescription == nil })
                let reply = try #require(relay.telegram.messages(chat: Fakes.alice).first)
                #expect(reply.text.replacing("\u{2060}", with: "").contains(hostile), "the model's text is shown as text: \(reply.text)")
                #expect(!reply.text.contains("@everyone"), "an invisible word joiner breaks the mention: \(reply.text)")
                #expect(reply.entities.allSatisfy { ["bold", "italic"].contains($0.type) }, "\(reply.entities)")
                #expect(reply.entities("text_link").isEmpty)
            }
        }
    }
}
