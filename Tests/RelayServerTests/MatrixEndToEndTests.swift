import Foundation
import MatrixAdapter
import RelayCore
import RelayServer
import RelayTestSupport
import RelayTestTags
import Testing

/// Matrix through the real server against a real Synapse: a person types in rooms over the plain
/// client-server API, and what the room then shows is checked as a Matrix client would show it.
@Suite("Matrix end to end, against Synapse", .tags(.peers))
struct MatrixEndToEndTests {
    @Test func aCommandIsAnsweredInTheRoomAsANoticeReplyingToItAndMentioningNoOne() async throws {
        try await MatrixFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let room = try await relay.room()
                let command = try await relay.alice.send("!translate fr Good morning", in: room)
                let answers = try await relay.answers(to: command, in: room)
                #expect(answers.count == 1, "\(answers.map(\.text))")
                let answer = try #require(answers.first)
                #expect(answer.text.contains("[translate:fr] Good morning"), "\(answer.text)")
                #expect(answer.msgtype == "m.notice")
                #expect(answer.mentions == .object([:]), "m.mentions must be present and empty")
                #expect(answer.html?.contains("[translate:fr] Good morning") == true)
                #expect(await relay.tribunal.requestCount(path: FakeRheaTribunal.quickPath) == 1)
            }
        }
    }

    /// Issue 47, point 9: a command redacted while it runs is not answered (and its words are not
    /// quoted back); the next command is answered as usual.
    @Test func aCommandRedactedBeforeItsAnswerIsNotAnswered() async throws {
        try await MatrixFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let room = try await relay.room()
                relay.tribunal.hold(path: FakeRheaTribunal.quickPath)
                let command = try await relay.alice.send("!translate fr Secret plans", in: room)
                try await eventually("the run to ask the backend") { await relay.tribunal.requestCount(path: FakeRheaTribunal.quickPath) == 1 }
                try await relay.alice.redact(command, in: room)
                // The sync reads a room's events in order: once the next command has reached the
                // backend, the redaction before it has been read.
                let next = try await relay.alice.send("!translate fr Good night", in: room)
                try await eventually("the next command to reach the backend") { await relay.tribunal.requestCount(path: FakeRheaTribunal.quickPath) == 2 }
                relay.tribunal.release(path: FakeRheaTribunal.quickPath)
                let answers = try await relay.answers(to: next, in: room)
                #expect(answers.map(\.text).contains { $0.contains("Good night") })
                let shown = try await relay.botMessages(in: room)
                #expect(!shown.contains { $0.replyTo == command }, "the redacted command is not answered: \(shown.map(\.text))")
                #expect(!shown.contains { $0.history.contains { $0.contains("Secret plans") } })
            }
        }
    }

    /// A revoked access token: Synapse answers `M_UNKNOWN_TOKEN`, and `/readyz` says so (the
    /// other platforms: RefusedCredentialsTests).
    @Test func aRevokedAccessTokenIsInReadyz() async throws {
        try await MatrixFakes.with { fakes in
            var configuration = fakes.configuration()
            configuration.platforms = [
                MatrixPlatform(
                    configuration: MatrixConfiguration(
                        homeserverURL: fakes.synapse.url, accessToken: MatrixToken("syt_cmV2b2tlZA_revoked_0000"), syncTimeout: .seconds(5)))
            ]
            configuration.http.adminToken = RefusedCredentialsTests.adminToken
            try await fakes.withRelay(configuration) { relay in
                let state = try await RefusedCredentialsTests.expectRefused(
                    relay.client, platform: "matrix", naming: ["MATRIX_ACCESS_TOKEN", "M_UNKNOWN_TOKEN"])
                #expect(!state.contains("revoked_0000"), "\(state)")
            }
        }
    }

    @Test func theBotJoinsOnInviteAndDeclinesServersNotAllowed() async throws {
        try await MatrixFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration(allowedServers: ["example.org"])) { relay in
                let room = try await relay.alice.createRoom(invite: [relay.bot.user])
                // Declining is leaving the invited room: its membership becomes `leave`.
                try await eventually("the invitation to be declined") {
                    let events = try await relay.alice.call(
                        .GET, "/rooms/\(MatrixTestUser.encode(room))/state/m.room.member/\(MatrixTestUser.encode(relay.bot.user))")
                    return events["membership"]?.stringValue == "leave"
                }
                #expect(try await !relay.alice.members(of: room).contains(relay.bot.user))
            }
            // Without a list, the same invitation is accepted.
            try await fakes.withRelay(fakes.configuration()) { relay in
                let room = try await relay.room()
                #expect(try await relay.alice.members(of: room).contains(relay.bot.user))
            }
        }
    }

    @Test func aMentionOfTheBotFactChecksTheWordsAfterIt() async throws {
        try await MatrixFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let room = try await relay.room()
                // As Element sends a pill: the display name in the body, a link in the HTML, and
                // the bot in `m.mentions`.
                let name = MatrixTestUser.localpart(relay.bot.user)
                let command = try await relay.alice.send(
                    "\(name): the Moon is made of cheese", in: room,
                    formatted: #"<a href="https://matrix.to/#/\#(relay.bot.user)">\#(name)</a>: the Moon is made of cheese"#, mentions: [relay.bot.user])
                let answers = try await relay.answers(to: command, in: room)
                #expect(answers.count == 1)
                let asked = try #require(await relay.tribunal.lastRequest(path: FakeRheaTribunal.tribunalPath))
                #expect(asked.rawBody.contains("the Moon is made of cheese"), "\(asked.rawBody)")
                #expect(!asked.rawBody.contains(name), "the mention is not part of the claim: \(asked.rawBody)")
            }
        }
    }

    @Test func aCommandSentAsAReplyReadsTheRepliedMessage() async throws {
        try await MatrixFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let room = try await relay.room()
                let claim = try await relay.alice.send("The Moon is made of cheese", in: room)
                // As Element sends a reply: the relation, and the quoted fallback in the body.
                let command = try await relay.alice.send(
                    "> <\(relay.alice.user)> The Moon is made of cheese\n\n!tribunal", in: room, relatesTo: ["m.in_reply_to": ["event_id": .string(claim)]])
                let answers = try await relay.answers(to: command, in: room)
                #expect(answers.count == 1)
                #expect(answers.first?.text.contains("Agreement") == true, "\(answers.map(\.text))")
                let asked = try #require(await relay.tribunal.lastRequest(path: FakeRheaTribunal.tribunalPath))
                #expect(asked.rawBody.contains("The Moon is made of cheese"), "\(asked.rawBody)")
                #expect(!asked.rawBody.contains("!tribunal"))
            }
        }
    }

    /// Issue 47, point 7: in a room whose history the bot may not read from before it joined
    /// (`history_visibility: joined`), a command replying to an older message is told exactly
    /// that, in Matrix's words, not "reply to a message" (which is what it did).
    @Test func aReplyToAMessageTheBotMayNotReadSaysSo() async throws {
        try await MatrixFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let room = try await relay.alice.createRoom(invite: [])
                _ = try await relay.alice.call(
                    .PUT, "/rooms/\(MatrixTestUser.encode(room))/state/m.room.history_visibility", body: ["history_visibility": "joined"])
                let claim = try await relay.alice.send("The Moon is made of cheese", in: room)
                _ = try await relay.alice.call(.POST, "/rooms/\(MatrixTestUser.encode(room))/invite", body: ["user_id": .string(relay.bot.user)])
                try await eventually("the bot to join") { try await relay.alice.members(of: room).contains(relay.bot.user) }
                var direct: String?
                for command in ["!tribunal", "!translate fr"] {
                    var before = 0
                    if let direct { before = try await relay.botMessages(in: direct).count }
                    try await relay.alice.send(
                        "> <\(relay.alice.user)> The Moon is made of cheese\n\n\(command)", in: room,
                        relatesTo: ["m.in_reply_to": ["event_id": .string(claim)]])
                    // An error: to the asker alone, in the direct room the bot opens with her.
                    if direct == nil { direct = try await relay.joinDirectRoom() }
                    let privately = try #require(direct)
                    try await eventually("the answer to \(command)") { try await relay.botMessages(in: privately).count > before }
                    try await relay.settled()
                    let answers = try await relay.botMessages(in: privately).dropFirst(before)
                    #expect(answers.count == 1, "\(answers.map(\.text))")
                    let text = answers.first?.text ?? ""
                    #expect(text.contains("I can't read that message in this room (history visibility)."), "\(text)")
                    #expect(!text.contains("reply to a message"), "\(text)")
                    let word = command.split(separator: " ")[0]
                    #expect(text.contains(word) && !text.contains("/" + word.dropFirst()), "names the command as the room types it: \(text)")
                }
                #expect(await relay.tribunal.requestCount(path: FakeRheaTribunal.tribunalPath) == 0)
                #expect(await relay.tribunal.requestCount(path: FakeRheaTribunal.quickPath) == 0)
            }
        }
    }

    @Test func summarizeInAThreadReadsTheThreadAndAnswersInIt() async throws {
        try await MatrixFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let room = try await relay.room()
                let root = try await relay.alice.send("Plan: we ship the release on Friday", in: room)
                let inThread: JSONValue = [
                    "rel_type": "m.thread", "event_id": .string(root), "is_falling_back": true, "m.in_reply_to": ["event_id": .string(root)],
                ]
                try await relay.alice.send("Only if the migration tests pass", in: room, relatesTo: inThread)
                let command = try await relay.alice.send("!summarize", in: room, relatesTo: inThread)
                let answers = try await relay.answers(to: command, in: room)
                #expect(answers.count == 1, "\(answers.map(\.text))")
                #expect(answers.first?.thread == root, "the answer stays in the thread")
                let asked = try #require(await relay.tribunal.lastRequest(path: FakeRheaTribunal.quickPath))
                #expect(asked.rawBody.contains("ship the release on Friday"), "\(asked.rawBody)")
                #expect(asked.rawBody.contains("migration tests pass"), "\(asked.rawBody)")
            }
        }
    }

    @Test func hostileModelTextMakesNoPillNoRoomMentionAndNoLink() async throws {
        try await MatrixFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                await relay.tribunal.setQuickAnswer { _ in
                    #"@room wake up <a href="https://matrix.to/#/@admin:localhost">admin</a> https://matrix.to/#/@admin:localhost @admin:localhost <font color="red">x</font> [click](https://evil.example)"#
                }
                let room = try await relay.room()
                let command = try await relay.alice.send("!fix hello", in: room)
                let answer = try #require(try await relay.answers(to: command, in: room).first)
                let html = try #require(answer.html)
                #expect(!html.contains("<a"), "\(html)")
                #expect(!html.contains("<font"), "\(html)")
                #expect(!html.contains("matrix.to"), "broken by a word joiner: \(html)")
                let events = try await relay.alice.events(in: room)
                let raw = try #require(events.first { $0["event_id"]?.stringValue == answer.id })
                let body = try #require(raw["content"]?["body"]?.stringValue)
                #expect(!body.contains("@room"), "\(body)")
                #expect(!body.contains("@admin:localhost"), "\(body)")
                #expect(raw["content"]?["m.mentions"] == .object([:]))
                // What a reader sees is still the model's text.
                #expect(answer.text.contains("@room wake up"), "\(answer.text)")
            }
        }
    }

    @Test func anEncryptedRoomIsToldOnceThatTheBotCannotReadIt() async throws {
        try await MatrixFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let room = try await relay.room(encrypted: true)
                try await eventually("the bot to say it cannot read the room") {
                    try await relay.botMessages(in: room).contains { $0.text.contains("end-to-end encrypted") }
                }
                // What an encrypting client sends, and a command a client sent unencrypted anyway:
                // neither is answered (an answer would go out unencrypted).
                _ = try await relay.alice.sendEvent(
                    "m.room.encrypted", content: ["algorithm": "m.megolm.v1.aes-sha2", "ciphertext": "AwgAEnACgAkLmt", "session_id": "s1", "device_id": "D1"],
                    in: room)
                try await relay.alice.send("!translate fr hello", in: room)
                try await Task.sleep(for: .seconds(1))
                try await relay.settled()
                let notes = try await relay.botMessages(in: room)
                #expect(notes.count == 1, "\(notes.map(\.text))")
            }
        }
    }

    @Test func aPrivateCommandIsAnsweredInADirectRoomWithTheAsker() async throws {
        try await MatrixFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let room = try await relay.room()
                let command = try await relay.alice.send("!fix teh cat --private", in: room)
                let direct = try await relay.joinDirectRoom()
                let inDirect = try await relay.botMessages(in: direct)
                #expect(inDirect.count == 1)
                #expect(inDirect.first?.text.contains("[grammar] teh cat") == true, "\(inDirect.map(\.text))")
                #expect(try await relay.botMessages(in: room).filter { $0.replyTo == command }.allSatisfy { !$0.text.contains("teh cat") })
            }
        }
    }

    @Test func theMagnifierReactionRunsATribunalAndThumbsMarkTheFactCheck() async throws {
        try await MatrixFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                await relay.tribunal.setDefaultAgreement(0.9)
                let room = try await relay.room()
                let claim = try await relay.alice.send("Water boils at 100 °C at sea level", in: room)
                try await relay.alice.react("🔍", to: claim, in: room)
                let verdict = try #require(try await relay.answers(to: claim, in: room).first)
                #expect(verdict.text.contains("fact-check #1"), "\(verdict.text)")
                let asked = try #require(await relay.tribunal.lastRequest(path: FakeRheaTribunal.tribunalPath))
                #expect(asked.rawBody.contains("Water boils at 100"))

                // The confirmation is for the marker only: it comes in a direct room.
                try await relay.alice.react("👍", to: verdict.id, in: room)
                let direct = try await relay.joinDirectRoom()
                let confirmations = try await relay.botMessages(in: direct)
                #expect(confirmations.map(\.text).contains { $0.contains("Marked fact-check #1 as true") }, "\(confirmations.map(\.text))")
            }
        }
    }

    @Test func aRateLimitedBotWaitsAndAnswersEveryCommand() async throws {
        try await MatrixFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let room = try await relay.room()
                let admin = try await fakes.synapse.register("admin", admin: true)
                try await admin.limitMessages(of: relay.bot.user, perSecond: 1, burst: 1)
                var commands: [String] = []
                for word in ["one", "two", "three"] { commands.append(try await relay.alice.send("!translate fr \(word)", in: room)) }
                for (command, word) in zip(commands, ["one", "two", "three"]) {
                    let answers = try await relay.answers(to: command, in: room)
                    #expect(answers.count == 1)
                    #expect(answers.first?.text.contains("[translate:fr] \(word)") == true)
                }
            }
        }
    }

    @Test func aRestartNeitherMissesNorRepeatsEvents() async throws {
        try await MatrixFakes.with { fakes in
            let room = try await fakes.withRelay(fakes.configuration()) { relay in
                let room = try await relay.room()
                let first = try await relay.alice.send("!translate fr one", in: room)
                #expect(try await relay.answers(to: first, in: room).count == 1)
                return room
            }
            // Sent while no relay runs: the next one must answer it, and only it.
            let missed = try await fakes.alice.send("!translate fr two", in: room)
            try await fakes.withRelay(fakes.configuration()) { relay in
                let answers = try await relay.answers(to: missed, in: room)
                #expect(answers.count == 1)
                #expect(answers.first?.text.contains("two") == true)
                let all = try await relay.botMessages(in: room)
                #expect(all.count == 2, "\(all.map(\.text))")
                #expect(await relay.tribunal.requestCount(path: FakeRheaTribunal.quickPath) == 2)
            }
        }
    }
}
