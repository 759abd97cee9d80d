import Foundation
import Hummingbird
import HummingbirdTesting
import RelayConsole
import RelayCore
import RelayPipeline
import RelayServer
import RelayTestSupport
import TelegramAdapter
import Testing

/// What a group admin would check: `/summarize` as a reply, `/start`, pacing within Telegram's
/// limits, a private result for someone who never opened the bot, and a restart while polling.
@Suite("Telegram in chats")
struct TelegramChatTests {
    typealias Fakes = TelegramFakes

    @Test func summarizeAsAReplyReadsFromThatMessageOn() async throws {
        try await Fakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let lines = ["We ship on Friday.", "QA found two blockers.", "Bob fixes them by Thursday."]
                for (index, line) in lines.enumerated() {
                    let from = index % 2 == 0 ? Fakes.bob : Fakes.alice
                    #expect(try await relay.deliver(relay.message(line, update: 1300 + index, id: 70 + index, chat: Fakes.group, from: from)).status == .ok)
                }
                let bot = relay.telegram.botUsername
                let replied = (messageID: 71, text: lines[1], fromID: Fakes.alice, isBot: false)
                let summarize = relay.message("/summarize@\(bot)", update: 1310, id: 80, chat: Fakes.group, replyTo: replied)
                #expect(try await relay.deliver(summarize).status == .ok)
                try await relay.settled()
                let asked = await relay.tribunal.requests().filter { $0.path != FakeRheaTribunal.healthPath }
                let prompt = asked.map(\.rawBody).joined()
                #expect(prompt.contains("QA found two blockers") && prompt.contains("Bob fixes them by Thursday"), "\(prompt)")
                #expect(!prompt.contains("We ship on Friday"), "only from the replied-to message on")
                #expect(relay.telegram.messages(chat: Fakes.group).last?.replyToMessageID == 80)
            }
        }
    }

    @Test func aCommandAddressedByNameWaitsUntilTheBotKnowsItsName() async throws {
        try await Fakes.with { fakes in
            // Telegram cannot say who the bot is for the first two updates.
            fakes.telegram.failNext("getMe", times: 2, with: .server(status: 502))
            try await fakes.withRelay(fakes.configuration()) { relay in
                let other = relay.message("/translate@OtherBot fr hi", update: 3000, id: 3000, chat: Fakes.group)
                let ours = relay.message("/translate@\(FakeTelegramBotAPI.defaultBotUsername) fr hi", update: 3001, id: 3001, chat: Fakes.group)
                // Neither runs while the name is unknown: both wait with Telegram.
                #expect(try await relay.deliver(other).status == .serviceUnavailable)
                #expect(try await relay.deliver(ours).status == .serviceUnavailable)
                #expect(await relay.tribunal.requestCount(path: FakeRheaTribunal.quickPath) == 0)
                // Delivered again once `getMe` answers: another bot's is left alone, ours runs once.
                #expect(try await relay.deliver(other).status == .ok)
                #expect(try await relay.deliver(ours).status == .ok)
                try await relay.settled()
                #expect(await relay.tribunal.requestCount(path: FakeRheaTribunal.quickPath) == 1)
                let answers = relay.telegram.messages(chat: Fakes.group).filter { $0.replyToMessageID == 3001 }
                #expect(answers.count == 1 && answers.first?.text.contains("[translate:fr] hi") == true, "\(answers.map(\.text))")
                #expect(relay.telegram.messages(chat: Fakes.group).allSatisfy { $0.replyToMessageID != 3000 })
            }
        }
    }

    @Test func startInAPrivateChatShowsHelp() async throws {
        try await Fakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                #expect(try await relay.deliver(relay.message("/start", update: 1400)).status == .ok)
                try await relay.settled()
                let reply = try #require(relay.telegram.messages(chat: Fakes.alice).first)
                #expect(reply.text.contains("/translate"), "\(reply.text)")
                #expect(await relay.tribunal.requests(path: FakeRheaTribunal.quickPath).isEmpty)
            }
        }
    }

    @Test func repliesToOneChatArePacedWithinTelegramsLimits() async throws {
        try await Fakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                // The fake answers 429 to a second message within a second in one chat.
                for index in 0..<4 {
                    let command = relay.message("/fix teh cat \(index)", update: 1500 + index, id: 90 + index, chat: Fakes.group)
                    #expect(try await relay.deliver(command).status == .ok)
                }
                try await relay.settled()
                #expect(relay.telegram.messages(chat: Fakes.group).count == 4)
                #expect(relay.telegram.calls().filter { $0.status == 429 }.isEmpty, "Telegram never had to refuse one")
                #expect(relay.telegram.maximumRate(perChat: Fakes.group) <= 1)
                #expect(relay.telegram.maximumOverallRate() <= 30)
            }
        }
    }

    @Test func aBurstAcrossManyChatsStaysWithinThirtyMessagesASecond() async throws {
        try await Fakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                // Arrivals up to 300 ms off their pacing are forgiven (the default is 50 ms): a
                // loaded machine can hold some sends back and let them arrive together, while a
                // relay that did not pace at all still breaks the window by far.
                relay.telegram.rateLimits.tolerance = .milliseconds(300)
                // 45 people within a moment, each in their own chat: Telegram allows 30 messages a
                // second in all. (Delivered one after another, each acknowledged in milliseconds:
                // their answers are what comes at once.)
                for index in 0..<45 {
                    let person = Fakes.alice + 100 + Int64(index)
                    let command = relay.message("/fix teh cat \(index)", update: 1550 + index, id: 5, chat: person, from: person)
                    #expect(try await relay.deliver(command).status == .ok)
                }
                try await relay.settled()
                #expect(relay.telegram.messages().count == 45)
                #expect(relay.telegram.calls().filter { $0.status == 429 }.isEmpty, "Telegram never had to refuse one")
                #expect(relay.telegram.maximumOverallRate() <= 30)
            }
        }
    }

    @Test func aPrivateResultForSomeoneWhoNeverOpenedTheBotIsExplainedInTheGroup() async throws {
        try await Fakes.with { fakes in
            fakes.telegram.failNext("sendMessage", times: 1, with: .forbidden("bot can't initiate conversation with a user"))
            try await fakes.withRelay(fakes.configuration()) { relay in
                let bot = relay.telegram.botUsername
                let command = relay.message("/translate@\(bot) fr secret plans --private", update: 1600, id: 95, chat: Fakes.group)
                #expect(try await relay.deliver(command).status == .ok)
                try await relay.settled()
                let group = relay.telegram.messages(chat: Fakes.group)
                #expect(group.count == 1)
                #expect(group.first?.text.contains("Start") == true, "\(group.map(\.text))")
                #expect(group.first?.text.contains("secret plans") == false, "the private result stays private")
            }
        }
    }

    /// A console sign-in link (a secret) for an admin who never opened the bot: they are told in
    /// the group why nothing came, and the link is never posted there.
    @Test func aConsoleLinkForSomeoneWhoNeverOpenedTheBotIsNeverShownInTheGroup() async throws {
        try await Fakes.with { fakes in
            // Every message to the person's own chat is refused, as Telegram refuses them all.
            fakes.telegram.failNext("sendMessage", times: 2, with: .forbidden("bot can't initiate conversation with a user"))
            var configuration = fakes.configuration()
            configuration.console = ConsoleSettings(enabled: true, publicURL: "https://relay.example.com")
            configuration.relay.operatorAdmins = try OperatorAdmins(parsing: "telegram:*:\(Fakes.alice)", platforms: ["telegram"])
            try await fakes.withRelay(configuration) { relay in
                let bot = relay.telegram.botUsername
                let command = relay.message("/admin@\(bot) console", update: 1610, id: 96, chat: Fakes.group)
                #expect(try await relay.deliver(command).status == .ok)
                try await relay.settled()
                // Sent to the asker's chat (which refused it), never to the group.
                let toGroup = (relay.telegram.calls("sendMessage") + relay.telegram.calls("editMessageText")).filter {
                    $0.body["chat_id"]?.intValue.map(Int64.init) == Fakes.group || $0.body["chat_id"]?.stringValue == String(Fakes.group)
                }
                #expect(!toGroup.isEmpty)
                #expect(!toGroup.contains { ($0.body["text"]?.stringValue ?? "").contains("/console/signin") }, "\(toGroup.map(\.body))")
                let group = relay.telegram.messages(chat: Fakes.group)
                #expect(group.count == 1 && group.first?.text.contains("Ask again in a direct message with the bot") == true, "\(group.map(\.text))")
            }
        }
    }

    @Test func pollingBacksOffOnErrorsAndGoesOn() async throws {
        try await Fakes.with { fakes in
            fakes.telegram.failNext("getUpdates", times: 2, with: .server(status: 502))
            fakes.telegram.failNext("deleteWebhook", times: 1, with: .drop)
            try await fakes.withRelay(fakes.configuration(mode: .polling)) { relay in
                relay.telegram.enqueue(relay.message("/fix teh cat", update: 1650, id: 97))
                try await eventually("the reply after the errors") { relay.telegram.messages(chat: Fakes.alice).count == 1 }
                let polls = relay.telegram.calls("getUpdates")
                #expect(polls.prefix(2).allSatisfy { $0.status == 502 })
                if polls.count >= 3 { #expect(polls[2].arrived - polls[1].arrived >= .milliseconds(200), "it waited before asking again") }
                #expect(relay.telegram.calls("deleteWebhook").count == 2, "the dropped deleteWebhook is tried again before polling")
            }
        }
    }

    @Test func whilePollingARestartBetweenStoringAndAnsweringAnswersOnce() async throws {
        try await Fakes.with { fakes in
            let configuration = fakes.configuration(mode: .polling)
            fakes.tribunal.hold(path: FakeRheaTribunal.quickPath)
            try await fakes.withRelay(configuration) { relay in
                relay.telegram.enqueue(relay.message("/fix teh cat", update: 1700, id: 96))
                _ = try #require(await relay.tribunal.next(path: FakeRheaTribunal.quickPath))
            }
            fakes.tribunal.release(path: FakeRheaTribunal.quickPath)
            try await fakes.withRelay(configuration) { relay in
                try await eventually("the reply") { !relay.telegram.messages(chat: Fakes.alice).isEmpty }
                try await relay.settled()
                // Another poll round, so an update given out again would have been seen by now.
                try await eventually("a later poll") { relay.telegram.calls("getUpdates").count >= 2 }
                try await relay.settled()
                #expect(relay.telegram.messages(chat: Fakes.alice).count == 1)
                #expect(relay.telegram.messages(chat: Fakes.alice).first?.replyToMessageID == 96)
            }
        }
    }
}

/// A 👍 or 👎 on the relay's own fact-check marks it; a group that became a supergroup is followed.
@Suite("Telegram: marks and migrations")
struct TelegramMarksTests {
    typealias Fakes = TelegramFakes

    @Test func aThumbsUpOnTheRelaysFactCheckMarksItRightAndNowhereElse() async throws {
        try await Fakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                #expect(try await relay.deliver(relay.message("/tribunal the Moon is made of cheese", update: 1800, id: 100)).status == .ok)
                try await relay.settled()
                let verdict = try #require(relay.telegram.messages(chat: Fakes.alice).first)
                #expect(verdict.text.contains("fact-check #1"), "\(verdict.text)")

                // On someone's own message a 👍 does nothing.
                let own = TelegramUpdates.messageReaction(updateID: 1801, chat: Fakes.alice, messageID: 100, user: Fakes.alice, new: ["👍"])
                #expect(try await relay.deliver(own).status == .ok)
                let mark = TelegramUpdates.messageReaction(updateID: 1802, chat: Fakes.alice, messageID: verdict.messageID, user: Fakes.alice, new: ["👍🏽"])
                #expect(try await relay.deliver(mark).status == .ok)
                try await relay.settled()
                let replies = relay.telegram.messages(chat: Fakes.alice)
                #expect(replies.count == 2, "\(replies.map(\.text))")
                #expect(replies.last?.text.contains("Marked fact-check #1 as true") == true, "\(replies.last?.text ?? "")")
            }
        }
    }

    @Test func aGroupThatBecameASupergroupGetsTheReplyAtItsNewID() async throws {
        try await Fakes.with { fakes in
            let old: Int64 = -4_000_000_123
            let new: Int64 = -1_009_000_000_123
            fakes.telegram.migrateChat(old, to: new)
            try await fakes.withRelay(fakes.configuration()) { relay in
                let update = TelegramUpdates.message(
                    updateID: 1900, messageID: 110, chat: old, chatType: "group", chatTitle: "Old group", from: Fakes.alice, text: "/fix teh cat")
                #expect(try await relay.deliver(update).status == .ok)
                try await relay.settled()
                #expect(relay.telegram.messages(chat: new).count == 1)
                #expect(relay.telegram.messages(chat: new).first?.text.contains("teh cat") == true)
            }
        }
    }
}

/// Updates whose numbers are hostile are read without trusting them.
@Suite("Telegram: hostile updates")
struct TelegramHostileUpdateTests {
    @Test func entitiesWithHugeOffsetsAreIgnoredAndTheCommandStillRuns() async throws {
        try await TelegramFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                var update = relay.message("/fix teh cat", update: 2000, id: 120)
                if case .object(var root) = update, case .object(var message)? = root["message"] {
                    message["entities"] = [
                        ["type": "mention", "offset": .int(Int.max), "length": .int(Int.max)],
                        ["type": "bot_command", "offset": 0, "length": 4],
                    ]
                    root["message"] = .object(message)
                    update = .object(root)
                }
                #expect(try await relay.deliver(update).status == .ok)
                try await relay.settled()
                #expect(relay.telegram.messages(chat: TelegramFakes.alice).first?.text.contains("teh cat") == true)
            }
        }
    }
}
