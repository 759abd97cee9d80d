import Foundation
import RelayTestSupport
import RelayTestTags
import Testing
import XMPPAdapter

/// XMPP against a real server (issue 43, points 5–7 and 9): Prosody, the relay as `serve`
/// builds it, and a person on slixmpp.
@Suite("XMPP: a real Prosody, a person on slixmpp", .tags(.peers))
struct XMPPEndToEndTests {
    let room = XMPPFakes.room
    let bot = XMPPFakes.nick

    @Test func commandsInARoomByNickAndOneToOneAreAnswered() async throws {
        try await XMPPFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { _ in
                let ada = try await fakes.human(plan: [
                    .waitJoin(bot, room: room), .sayInRoom("!translate fr Good morning", room: room), .waitText("Good morning", from: bot),
                    .sayInRoom("\(bot): fix teh cat", room: room), .waitText("teh cat", from: bot), .sayInRoom("!weather in Paris", room: room),
                    .say("translate fr Good night", to: XMPPFakes.botJID), .waitText("Good night", from: XMPPFakes.botJID), .sleep(2),
                ])
                let seen = try await ada.finish()
                let inRoom = seen.messages(from: bot)
                #expect(inRoom.allSatisfy { $0.type == "groupchat" }, "\(seen.summary)")
                #expect(XMPPHuman.shown(inRoom) == ["ada: [translate:fr] Good morning", "ada: [grammar] teh cat"], "\(seen.summary)")
                // The answer corrects its placeholder (XEP-0308) and replies to the command (XEP-0461).
                let corrections = inRoom.filter { $0.text == "ada: [translate:fr] Good morning" }.map { ($0.replace ?? "", $0.replyFor ?? "") }
                let placeholder = inRoom.first?.id ?? "none"
                #expect(corrections.map(\.0) == [placeholder], "\(seen.summary)")
                #expect(corrections.map(\.1) == ["\(room)/ada"], "\(seen.summary)")
                let private_ = seen.messages(from: XMPPFakes.botJID)
                #expect(private_.allSatisfy { $0.type == "chat" }, "\(seen.summary)")
                #expect(XMPPHuman.shown(private_) == ["[translate:fr] Good night"], "\(seen.summary)")
                // Another bot's `!word` is left alone.
                #expect(await fakes.tribunal.requestCount(path: FakeRheaTribunal.quickPath) == 3)
            }
        }
    }

    @Test func aClientWithoutCorrectionsGetsOneFinalMessage() async throws {
        try await XMPPFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration(roomCorrections: false)) { _ in
                let ada = try await fakes.human(
                    corrections: false,
                    plan: [
                        .waitJoin(bot, room: room), .say("translate fr Good night", to: XMPPFakes.botJID), .waitFrom(XMPPFakes.botJID, count: 1),
                        .sayInRoom("!translate fr Hello", room: room), .waitFrom(bot, count: 1), .sleep(2),
                    ])
                let seen = try await ada.finish()
                let private_ = seen.messages(from: XMPPFakes.botJID)
                #expect(private_.map(\.text) == ["[translate:fr] Good night"], "\(seen.summary)")
                #expect(private_.allSatisfy { $0.replace == nil })
                #expect(seen.messages(from: bot).map(\.text) == ["ada: [translate:fr] Hello"], "\(seen.summary)")
            }
        }
    }

    @Test func modelTextIsCharacterDataNeverMarkup() async throws {
        try await XMPPFakes.with { fakes in
            let hostile = "a</body></message><message to='ada@localhost' type='chat'><body>pwned</body></message><message><body>b & <c> ]]> \u{01}'\""
            await fakes.tribunal.setQuickAnswer { _ in hostile }
            try await fakes.withRelay(fakes.configuration()) { _ in
                let ada = try await fakes.human(plan: [
                    .waitJoin(bot, room: room), .sayInRoom("!ai say it", room: room), .waitText("pwned", from: bot), .sleep(2),
                ])
                let seen = try await ada.finish()
                let shown = XMPPHuman.shown(seen.messages(from: bot))
                // The control character is dropped (XML cannot carry it); the rest shows as written.
                #expect(shown == ["ada: " + hostile.replacingOccurrences(of: "\u{01}", with: "")], "\(seen.summary)")
                #expect(seen.messages(from: XMPPFakes.botJID).isEmpty, "no second stanza: \(seen.summary)")
            }
        }
    }

    @Test func aLongAnswerIsSplitIntoWholeMessages() async throws {
        try await XMPPFakes.with { fakes in
            let words = (1...4_000).map { "mot\($0)é😀" }
            let answer = words.joined(separator: " ")
            await fakes.tribunal.setQuickAnswer { _ in answer }
            try await fakes.withRelay(fakes.configuration()) { _ in
                let ada = try await fakes.human(plan: [
                    .waitJoin(bot, room: room), .sayInRoom("!ai tell me", room: room), .waitText("mot4000é😀", from: bot, timeout: 90), .sleep(2),
                ])
                let seen = try await ada.finish()
                let shown = XMPPHuman.shown(seen.messages(from: bot))
                #expect(shown.count >= 3, "\(shown.map(\.count))")
                #expect(shown.first?.hasPrefix("ada: ") == true)
                let text = shown.joined(separator: " ").dropFirst("ada: ".count)
                let seenWords = text.split(whereSeparator: \.isWhitespace).map(String.init)
                #expect(Array(seenWords.prefix(words.count)) == words)
            }
        }
    }

    @Test func aBurstOfThirtyCommandsIsAnsweredOnceEach() async throws {
        try await XMPPFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { _ in
                let burst = (1...30).map { XMPPHuman.Step.sayInRoom("!translate fr n\($0)", room: room) }
                let ada = try await fakes.human(
                    plan: [.waitJoin(bot, room: room)] + burst + [.waitText("n30", from: bot, timeout: 120), .sleep(3)], limit: .seconds(200))
                let seen = try await ada.finish(within: .seconds(220))
                let shown = XMPPHuman.shown(seen.messages(from: bot))
                #expect(shown.count == 30, "\(shown)")
                for number in 1...30 { #expect(shown.filter { $0 == "ada: [translate:fr] n\(number)" }.count == 1, "n\(number): \(shown)") }
                #expect(fakes.signIns == 1, "signed in once: never disconnected\n\(fakes.server.logTail())")
            }
        }
    }

    @Test func aServerRestartMidCommandIsAnsweredAfterTheRelayReconnects() async throws {
        try await XMPPFakes.with { fakes in
            fakes.tribunal.hold(path: FakeRheaTribunal.quickPath)
            try await fakes.withRelay(fakes.configuration()) { _ in
                let ada = try await fakes.human(
                    corrections: false,
                    plan: [
                        .waitJoin(bot, room: room), .say("translate fr Still here", to: XMPPFakes.botJID),
                        .waitFrom(XMPPFakes.botJID, count: 1, timeout: 90), .sleep(1),
                    ])
                try await eventually("the command to reach the model") { await fakes.tribunal.requestCount(path: FakeRheaTribunal.quickPath) == 1 }
                try await fakes.server.restart()
                fakes.tribunal.release(path: FakeRheaTribunal.quickPath)
                let seen = try await ada.finish()
                #expect(seen.messages(from: XMPPFakes.botJID).map(\.text) == ["[translate:fr] Still here"], "\(seen.summary)")
                #expect(fakes.signIns == 1, "signed in again: the restarted server's log (the first is set aside)")
            }
        }
    }

    @Test func aTakenRoomNickFallsBackAndTheFallbackIsAddressed() async throws {
        try await XMPPFakes.with { fakes in
            try await fakes.server.register("squatter", password: "squatter-password-0123")
            // Someone sits in the room as the bot's nick before it joins.
            // It holds the nick until the test is done, however long a loaded run takes.
            let squatter = try await fakes.human("squatter", nick: bot, plan: [.waitSignal("done", timeout: 200)], limit: .seconds(230))
            try await eventually("the squatter to join") { squatter.records.contains { $0.event == "joined" && $0.sender == nil } }
            try await fakes.withRelay(fakes.configuration()) { _ in
                let fallback = bot + "_"
                let ada = try await fakes.human(plan: [
                    .waitJoin(fallback, room: room), .sayInRoom("!translate fr Who are you", room: room), .waitText("Who are you", from: fallback),
                    .sayInRoom("\(fallback): fix teh cat", room: room), .waitText("teh cat", from: fallback), .sleep(2),
                ])
                let seen = try await ada.finish()
                try squatter.signal("done")
                #expect(
                    XMPPHuman.shown(seen.messages(from: fallback)) == ["ada: [translate:fr] Who are you", "ada: [grammar] teh cat"], "\(seen.summary)")
            }
        }
    }

    @Test func overDirectTLS() async throws {
        try await XMPPFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration(directTLS: true)) { _ in
                let ada = try await fakes.human(plan: [
                    .waitJoin(bot, room: room), .sayInRoom("!translate fr Secure", room: room), .waitText("Secure", from: bot), .sleep(1),
                ])
                let seen = try await ada.finish()
                #expect(XMPPHuman.shown(seen.messages(from: bot)) == ["ada: [translate:fr] Secure"], "\(seen.summary)")
            }
        }
    }

    /// No `XMPP_SERVER`: the domain's SRV records say where (a nameserver of the test's own,
    /// asked through the system's resolver); the first record's server is down, the next is
    /// Prosody's port.
    @Test func theServerIsFoundBySRVRecords() async throws {
        try await XMPPFakes.with { fakes in
            let dead = try reservedLoopbackPort()
            let dns = try await FakeDNSServer.start(records: [
                "_xmpp-client._tcp.localhost": [
                    FakeDNSServer.SRV(priority: 0, port: UInt16(dead), target: "localhost"),
                    FakeDNSServer.SRV(priority: 10, port: UInt16(fakes.server.port), target: "localhost"),
                ]
            ])
            try await fakes.withRelay(fakes.configuration(dns: dns)) { _ in
                let ada = try await fakes.human(plan: [
                    .waitJoin(bot, room: room), .sayInRoom("!translate fr Found", room: room), .waitText("Found", from: bot), .sleep(1),
                ])
                let seen = try await ada.finish()
                #expect(XMPPHuman.shown(seen.messages(from: bot)) == ["ada: [translate:fr] Found"], "\(seen.summary)")
            }
            #expect(dns.asked.contains("_xmpp-client._tcp.localhost"), "\(dns.asked)")
            await dns.stop()
        }
    }
}
