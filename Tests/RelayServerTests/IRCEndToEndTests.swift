import Foundation
import IRCAdapter
import RelayTestSupport
import RelayTestTags
import Testing

/// IRC against a real server (issue 43, points 1–3 and 9): ngIRCd, the relay as `serve` builds
/// it, and a person on the `irc` library.
@Suite("IRC: a real ngIRCd, a person on the irc library", .tags(.peers))
struct IRCEndToEndTests {
    let channel = IRCFakes.channel
    let bot = IRCFakes.nick

    @Test func commandsInTheChannelByNickAndInPrivateAreAnswered() async throws {
        try await IRCFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { _ in
                let ada = try await IRCHuman(
                    on: fakes.server, nick: "ada", channels: [channel],
                    plan: [
                        .waitJoin(bot, channel: channel), .say("!translate fr Good morning", to: channel), .waitFrom(bot, count: 1),
                        .say("translate fr Good night", to: bot), .waitFrom(bot, count: 2), .say("\(bot): fix teh cat", to: channel),
                        .waitFrom(bot, count: 3), .say("!weather in Paris", to: channel), .ctcp("VERSION", to: bot), .sleep(3),
                    ])
                let seen = try await ada.finish()
                let replies = seen.filter { $0.event == "message" && $0.from == bot }
                #expect(replies.count == 3, "\(replies)")
                #expect(replies.first?.target == channel && replies.first?.text == "ada: [translate:fr] Good morning", "\(replies)")
                #expect(replies.dropFirst().first?.target == "ada" && replies.dropFirst().first?.text == "[translate:fr] Good night", "\(replies)")
                #expect(replies.last?.target == channel && replies.last?.text == "ada: [grammar] teh cat", "\(replies)")
                // Another bot's `!word` is left alone; CTCP VERSION is answered by NOTICE.
                let version = seen.first { $0.event == "ctcpreply" }
                #expect(version?.text?.contains("Rhea Relay") == true, "\(seen)")
                #expect(await fakes.tribunal.requestCount(path: FakeRheaTribunal.quickPath) == 3)
            }
        }
    }

    @Test func aLongAnswerIsSplitWithinFiveHundredTwelveBytesAndTheRestGoesPrivately() async throws {
        try await IRCFakes.with { fakes in
            // Words of two-byte and four-byte characters, then a member's nick and a word.
            let words = (1...300).map { "mot\($0)é😀" }
            let answer = words.joined(separator: " ") + " bob carol"
            await fakes.tribunal.setQuickAnswer { _ in answer }
            try await fakes.withRelay(fakes.configuration()) { _ in
                // Bob stays until the test is done: a fixed stay could end before a loaded run's answer.
                let bob = try await IRCHuman(
                    on: fakes.server, nick: "bob", channels: [channel], plan: [.waitSignal("done", timeout: 200)], limit: .seconds(230))
                let ada = try await IRCHuman(
                    on: fakes.server, nick: "ada", channels: [channel],
                    plan: [
                        .waitJoin(bot, channel: channel), .waitJoin("bob", channel: channel), .say("!ai tell me", to: channel),
                        .waitText("arol", from: bot, timeout: 90), .sleep(1),
                    ])
                let seen = try await ada.finish()
                try bob.signal("done")
                let replies = seen.filter { $0.event == "message" && $0.from == bot }
                let inChannel = replies.filter { $0.target == channel }
                let privately = replies.filter { $0.target == "ada" }
                #expect(inChannel.count == IRCConfiguration.defaultChannelLines, "\(inChannel.map(\.text))")
                #expect(inChannel.first?.text?.hasPrefix("ada: ") == true)
                #expect(inChannel.last?.text?.contains("in a private message to ada") == true, "\(inChannel.last?.text ?? "")")
                #expect(!privately.isEmpty)
                for reply in replies { #expect(reply.relayedBytes <= 512, "\(reply.relayedBytes) bytes: \(reply.text ?? "")") }
                // Every word, once, in order: the channel's lines, then the private ones.
                let shown = (inChannel.dropLast().map { $0.text ?? "" } + privately.map { $0.text ?? "" }).joined(separator: " ")
                let shownWords = shown.dropFirst("ada: ".count).split(separator: " ").map(String.init)
                #expect(Array(shownWords.prefix(words.count)) == words)
                // A member's nick is not highlighted (bob is in the channel); another word is left.
                #expect(shown.hasSuffix("b\u{200B}ob carol"), "\(shown.suffix(40))")
            }
        }
    }

    @Test func aBurstOfThirtyCommandsIsAnsweredWithoutAFloodDisconnect() async throws {
        try await IRCFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { _ in
                let burst = (1...30).map { IRCHuman.Step.say("!translate fr n\($0)", to: channel) }
                let ada = try await IRCHuman(
                    on: fakes.server, nick: "ada", channels: [channel],
                    plan: [.waitJoin(bot, channel: channel)] + burst + [.waitFrom(bot, count: 30, timeout: 150), .sleep(1)],
                    limit: .seconds(200))
                let seen = try await ada.finish(within: .seconds(220))
                let texts = seen.filter { $0.event == "message" && $0.from == bot }.compactMap(\.text)
                #expect(texts.count == 30, "\(texts)")
                for number in 1...30 { #expect(texts.filter { $0 == "ada: [translate:fr] n\(number)" }.count == 1, "n\(number): \(texts)") }
                #expect(fakes.registrations == 1, "the relay registered once: never disconnected\n\(fakes.server.logTail())")
            }
        }
    }

    @Test func aServerRestartMidCommandIsAnsweredAfterTheRelayReconnects() async throws {
        try await IRCFakes.with { fakes in
            fakes.tribunal.hold(path: FakeRheaTribunal.quickPath)
            try await fakes.withRelay(fakes.configuration()) { _ in
                let ada = try await IRCHuman(
                    on: fakes.server, nick: "ada", channels: [channel],
                    plan: [.waitJoin(bot, channel: channel), .say("!translate fr Still here", to: channel), .waitFrom(bot, count: 1, timeout: 90), .sleep(1)])
                try await eventually("the command to reach the model") { await fakes.tribunal.requestCount(path: FakeRheaTribunal.quickPath) == 1 }
                try await fakes.server.restart()
                fakes.tribunal.release(path: FakeRheaTribunal.quickPath)
                let seen = try await ada.finish()
                let texts = seen.filter { $0.event == "message" && $0.from == bot }.compactMap(\.text)
                #expect(texts == ["ada: [translate:fr] Still here"], "\(seen.map { "\($0.event) \($0.text ?? "")" })")
                #expect(fakes.registrations == 2, "registered again after the restart")
            }
        }
    }

    @Test func aTakenNickFallsBackAndTheFallbackIsAddressed() async throws {
        try await IRCFakes.with { fakes in
            // Someone holds the bot's nick before it connects.
            // It holds the nick until the test is done, however long a loaded run takes.
            let squatter = try await IRCHuman(
                on: fakes.server, nick: bot, channels: [], plan: [.waitSignal("done", timeout: 200)], limit: .seconds(230))
            try await eventually("the squatter to register") { squatter.records.contains { $0.event == "welcome" } }
            try await fakes.withRelay(fakes.configuration()) { _ in
                let fallback = bot + "_"
                let ada = try await IRCHuman(
                    on: fakes.server, nick: "ada", channels: [channel],
                    plan: [
                        .waitJoin(fallback, channel: channel), .say("!translate fr Who are you", to: channel), .waitFrom(fallback, count: 1),
                        .say("\(fallback): fix teh cat", to: channel), .waitFrom(fallback, count: 2), .sleep(1),
                    ])
                let seen = try await ada.finish()
                try squatter.signal("done")
                let texts = seen.filter { $0.event == "message" && $0.from == fallback }.compactMap(\.text)
                #expect(
                    texts == ["ada: [translate:fr] Who are you", "ada: [grammar] teh cat"], "\(seen.map { "\($0.event) \($0.from ?? "") \($0.text ?? "")" })")
            }
        }
    }

    @Test func overTLSWithTheServersCertificateAndAServerPassword() async throws {
        try await IRCFakes.with(password: "s3cret-pass") { fakes in
            try await fakes.withRelay(fakes.configuration(tls: true, password: "s3cret-pass")) { _ in
                let ada = try await IRCHuman(
                    on: fakes.server, nick: "ada", channels: [channel],
                    plan: [.waitJoin(bot, channel: channel, timeout: 30), .say("!translate fr Secure", to: channel), .waitFrom(bot, count: 1)], tls: true,
                    password: "s3cret-pass")
                let seen = try await ada.finish()
                let texts = seen.filter { $0.event == "message" && $0.from == bot }.compactMap(\.text)
                #expect(texts == ["ada: [translate:fr] Secure"], "\(seen.map { "\($0.event) \($0.text ?? "")" })")
            }
        }
    }
}
