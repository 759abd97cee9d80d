import Foundation
import Hummingbird
import HummingbirdTesting
import RelayCore
import RelayServer
import RelayTestSupport
import TelegramAdapter
import Testing

/// Telegram through the real server: `RelayApplication.build` as `serve` runs it, driven by
/// updates delivered to the webhook (with the secret token) or polled from the fake Bot API on
/// 127.0.0.1. Every check is about what Telegram received.
@Suite("Telegram end to end, through the server")
struct TelegramEndToEndTests {
    typealias Fakes = TelegramFakes

    @Test func aWrongOrMissingSecretTokenGets401AndNoReply() async throws {
        try await Fakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                for (index, secret) in ["wrong-secret", "", nil, Fakes.webhookSecret + "x"].enumerated() {
                    let response = try await relay.deliver(relay.message("/translate fr Good morning", update: 100 + index), secret: secret)
                    #expect(response.status == .unauthorized, "\(String(describing: secret))")
                }
                try await relay.settled()
                #expect(relay.telegram.calls("sendMessage").isEmpty)
                #expect(await relay.tribunal.requests(path: FakeRheaTribunal.quickPath).isEmpty)
            }
        }
    }

    @Test func notAnUpdateIsRefusedWithAClearError() async throws {
        try await Fakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let response = try await relay.deliver(["hello": "world"])
                #expect(response.status == .badRequest)
                #expect(response.json?["error"]?.stringValue?.contains("update_id") == true)
            }
        }
    }

    @Test func aCommandIsAnsweredOnceAsAReplyToIt() async throws {
        try await Fakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let response = try await relay.deliver(relay.message("/translate fr Good morning", update: 200, id: 77))
                #expect(response.status == .ok)
                try await relay.settled()
                let replies = relay.telegram.messages(chat: Fakes.alice)
                #expect(replies.count == 1)
                let reply = try #require(replies.first)
                #expect(reply.replyToMessageID == 77)
                #expect(reply.parseMode == "HTML")
                #expect(reply.text.contains("Good morning"), "\(reply.text)")
                #expect(reply.callbackData.contains { $0.hasPrefix("again:") }, "Run again: \(reply.callbackData)")
            }
        }
    }

    @Test func theSameUpdateTwiceIsAnsweredOnce() async throws {
        try await Fakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let update = relay.message("/fix teh cat sat", update: 300)
                #expect(try await relay.deliver(update).status == .ok)
                #expect(try await relay.deliver(update).status == .ok)
                try await relay.settled()
                #expect(relay.telegram.messages(chat: Fakes.alice).count == 1)
                #expect(await relay.tribunal.requests(path: FakeRheaTribunal.quickPath).count == 1)
            }
        }
    }

    @Test func pollingAnswersAndConfirmsTheOffsetOnlyPastStoredUpdates() async throws {
        try await Fakes.with { fakes in
            try await fakes.withRelay(fakes.configuration(mode: .polling)) { relay in
                relay.telegram.enqueue(relay.message("/translate de Good morning", update: 400, id: 5))
                relay.telegram.enqueue(relay.message("/fix teh cat", update: 401, id: 6))
                try await eventually("both answered") { relay.telegram.messages(chat: Fakes.alice).count == 2 }
                try await relay.settled()
                try await eventually("the offset confirms both") { relay.telegram.confirmedUpdateIDs.contains(401) }
                #expect(relay.telegram.calls("deleteWebhook").count == 1, "the webhook is removed before polling")
                // Typed, not inferred: inferring this one expression took 1.4 s of each build.
                let repliedTo: [Int?] = relay.telegram.messages(chat: Fakes.alice).map(\.replyToMessageID)
                #expect(repliedTo.sorted { ($0 ?? 0) < ($1 ?? 0) } == [5, 6])
                #expect(relay.telegram.allowedUpdates == TelegramConfiguration.allowedUpdates)
            }
        }
    }

    @Test func inAGroupTheRepliedToMessageIsTheInputAndOtherBotsCommandsAreLeftAlone() async throws {
        try await Fakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let bot = relay.telegram.botUsername
                let other = relay.message("/fix@SomeOtherBot teh dog", update: 500, id: 10, chat: Fakes.group)
                #expect(try await relay.deliver(other).status == .ok)
                let replied = (messageID: 11, text: "teh cat sat on teh mat", fromID: Fakes.bob, isBot: false)
                let mine = relay.message("/fix@\(bot)", update: 501, id: 12, chat: Fakes.group, replyTo: replied)
                #expect(try await relay.deliver(mine).status == .ok)
                try await relay.settled()
                let replies = relay.telegram.messages(chat: Fakes.group)
                #expect(replies.count == 1)
                #expect(replies.first?.replyToMessageID == 12)
                let quick = await relay.tribunal.requests(path: FakeRheaTribunal.quickPath)
                #expect(quick.count == 1)
                #expect(quick.first?.rawBody.contains("teh cat sat on teh mat") == true)
            }
        }
    }

    @Test func aMentionFactChecksAndTheReactionRunsATribunalOnTheMessage() async throws {
        try await Fakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let bot = relay.telegram.botUsername
                let mention = relay.message("@\(bot) the Moon is made of cheese", update: 600, id: 20, chat: Fakes.group)
                #expect(try await relay.deliver(mention).status == .ok)
                try await relay.settled()
                #expect(await relay.tribunal.requests(path: FakeRheaTribunal.tribunalPath).count == 1)

                // The bot saw message 21 (privacy mode off); a 🔍 on it fact-checks it.
                let seen = relay.message("Water boils at 50 °C at sea level", update: 601, id: 21, chat: Fakes.group, from: Fakes.bob)
                #expect(try await relay.deliver(seen).status == .ok)
                let reaction = TelegramUpdates.messageReaction(updateID: 602, chat: Fakes.group, messageID: 21, user: Fakes.alice, new: ["🔍"])
                #expect(try await relay.deliver(reaction).status == .ok)
                try await relay.settled()
                let tribunals = await relay.tribunal.requests(path: FakeRheaTribunal.tribunalPath)
                #expect(tribunals.count == 2)
                #expect(tribunals.last?.rawBody.contains("Water boils at 50") == true)
                let replies = relay.telegram.messages(chat: Fakes.group)
                #expect(replies.count == 2)
                #expect(replies.last?.replyToMessageID == 21)
                #expect(replies.allSatisfy { $0.text.contains("%") }, "\(replies.map(\.text))")
            }
        }
    }

    @Test func aChainShowsProgressInOneMessageThatTheResultReplaces() async throws {
        try await Fakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let chain = relay.message("/chain save polish = grammar > rewrite:formal", update: 700, id: 30)
                #expect(try await relay.deliver(chain).status == .ok)
                try await relay.settled()
                // Blocks slow enough that the second finishes more than the progress interval (1 s)
                // after the placeholder: its step is shown.
                await relay.tribunal.setDelay(path: FakeRheaTribunal.quickPath, seconds: 0.6)
                let run = relay.message("/run polish teh report is done", update: 701, id: 31)
                #expect(try await relay.deliver(run).status == .ok)
                try await relay.settled()
                let answers = relay.telegram.messages(chat: Fakes.alice).filter { $0.replyToMessageID == 31 }
                #expect(answers.count == 1, "one message for the run: \(answers.map(\.text))")
                let answer = try #require(answers.first)
                #expect(answer.history.first?.text == "⏳ Working on /run polish…", "the placeholder first: \(answer.history.map(\.text))")
                #expect(answer.history.contains { $0.text.contains("Running") }, "progress shown first: \(answer.history.map(\.text))")
                #expect(!answer.text.contains("Running"), "the result replaced the progress: \(answer.text)")
            }
        }
    }

    @Test func a429WithRetryAfterIsWaitedOutAndTheReplyDeliveredOnce() async throws {
        try await Fakes.with { fakes in
            fakes.telegram.failNext("sendMessage", with: .tooManyRequests(retryAfter: 2))
            try await fakes.withRelay(fakes.configuration()) { relay in
                let started = ContinuousClock.now
                #expect(try await relay.deliver(relay.message("/translate fr Good night", update: 800)).status == .ok)
                try await relay.settled()
                let sends = relay.telegram.calls("sendMessage")
                #expect(sends.count == 2, "one refused, one accepted")
                #expect(relay.telegram.messages(chat: Fakes.alice).count == 1)
                if sends.count == 2 { #expect(sends[1].arrived - sends[0].arrived >= .seconds(2)) }
                #expect(ContinuousClock.now - started >= .seconds(2))
            }
        }
    }
}
