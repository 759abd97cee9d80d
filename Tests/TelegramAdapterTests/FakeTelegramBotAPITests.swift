import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import RelayCore
import RelayTestSupport
import Testing

/// One answer of the fake, read whole.
struct BotAPIAnswer {
    var status: Int
    var json: JSONValue
    var text: String
    var contentType: String?

    var description: String? { json["description"]?.stringValue }
    var result: JSONValue? { json["result"] }
}

/// Calls `method` on `fake` as the relay does: POST, JSON body, token in the path.
func callBotAPI(
    _ fake: FakeTelegramBotAPI, _ method: String, _ body: JSONValue = [:], token: String? = nil, timeout: Int64 = 10
) async throws -> BotAPIAnswer {
    var request = HTTPClientRequest(url: "\(fake.url)/bot\(token ?? fake.token)/\(method)")
    request.method = .POST
    request.headers.add(name: "Content-Type", value: "application/json")
    request.body = .bytes(ByteBuffer(bytes: body.encoded()))
    return try await execute(request, timeout: timeout)
}

private func execute(_ request: HTTPClientRequest, timeout: Int64) async throws -> BotAPIAnswer {
    let response = try await HTTPClient.shared.execute(request, timeout: .seconds(timeout))
    let body = try await response.body.collect(upTo: 1 << 20)
    return BotAPIAnswer(
        status: Int(response.status.code), json: JSONValue.parse(body.readableBytesView) ?? .null, text: String(buffer: body),
        contentType: response.headers.first(name: "content-type"))
}

@Suite("Fake Telegram Bot API")
struct FakeTelegramBotAPITests {
    @Test("a wrong token is 401, an unknown method 404, getMe names the bot")
    func authentication() async throws {
        try await withFakeTelegramBotAPI { telegram in
            let wrong = try await callBotAPI(telegram, "getMe", token: "123456:WRONG")
            #expect(wrong.status == 401)
            #expect(wrong.json == ["ok": false, "error_code": 401, "description": "Unauthorized"])
            let unknown = try await callBotAPI(telegram, "sendTelepathy")
            #expect(unknown.status == 404)
            #expect(unknown.json == ["ok": false, "error_code": 404, "description": "Not Found"])
            let me = try await callBotAPI(telegram, "getMe")
            #expect(me.status == 200)
            #expect(me.contentType == "application/json")
            #expect(me.result?["id"]?.intValue == Int(FakeTelegramBotAPI.defaultBotID))
            #expect(me.result?["username"] == "RheaTestBot")
            #expect(me.result?["is_bot"] == true)
            #expect(me.result?["can_read_all_group_messages"] == false)
            // Method names are case-insensitive, as on Telegram; query items work too.
            let lower = try await execute(HTTPClientRequest(url: telegram.methodURL("getme") + "?x=1"), timeout: 5)
            #expect(lower.status == 200)
            #expect(telegram.calls("getMe").map(\.status) == [401, 200, 200])
        }
    }

    @Test("getUpdates waits for an update, and an offset confirms it")
    func longPolling() async throws {
        try await withFakeTelegramBotAPI { telegram in
            let clock = ContinuousClock()
            let started = clock.now
            async let polled = callBotAPI(telegram, "getUpdates", ["timeout": 30, "allowed_updates": ["message", "callback_query"]], timeout: 40)
            try await Task.sleep(for: .milliseconds(200))
            telegram.enqueue(TelegramUpdates.message(updateID: 41, messageID: 7, chat: 42, from: 42, text: "/help"))
            let answer = try await polled
            #expect(clock.now - started < .seconds(15), "the poll returned when the update came, not at its 30 s")
            #expect(answer.result?.arrayValue?.compactMap { $0["update_id"]?.intValue } == [41])
            #expect(telegram.confirmedUpdateIDs.isEmpty, "not confirmed until an offset passes it")
            #expect(telegram.allowedUpdates == ["message", "callback_query"])

            // The same update comes again without an offset; the offset past it confirms it.
            let again = try await callBotAPI(telegram, "getUpdates", ["timeout": 0])
            #expect(again.result?.arrayValue?.count == 1)
            let confirmed = try await callBotAPI(telegram, "getUpdates", ["offset": 42, "timeout": 0])
            #expect(confirmed.result == [])
            #expect(telegram.confirmedUpdateIDs == [41])
            #expect(telegram.lastOffset == 42)
            #expect(telegram.deliveredUpdateIDs == [41, 41])

            // No update: an empty list once the timeout has passed.
            let waitStart = clock.now
            let empty = try await callBotAPI(telegram, "getUpdates", ["offset": 42, "timeout": 1])
            #expect(empty.result == [])
            #expect(clock.now - waitStart >= .milliseconds(900))
        }
    }

    @Test("a newer getUpdates ends the older one with 409; kinds not allowed are never sent")
    func concurrentPollsAndAllowedUpdates() async throws {
        try await withFakeTelegramBotAPI { telegram in
            // Long enough that the newer call comes first on a loaded machine; it ends at the 409.
            async let older = callBotAPI(telegram, "getUpdates", ["timeout": 30], timeout: 40)
            try await eventually("the first poll is waiting", safety: .seconds(30)) { telegram.offsets.count == 1 }
            let newer = try await callBotAPI(telegram, "getUpdates", ["timeout": 0])
            let first = try await older
            #expect(newer.status == 200)
            #expect(first.status == 409)
            #expect(first.description == "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running")

            // Reactions are left out unless asked for, as Telegram does.
            let reaction = TelegramUpdates.messageReaction(updateID: 5, chat: -1_001_234, messageID: 3, user: 42, new: ["🔍"])
            #expect(!telegram.wouldDeliver(reaction))
            telegram.enqueue(reaction)
            let withoutReactions = try await callBotAPI(telegram, "getUpdates", ["timeout": 0])
            #expect(withoutReactions.result == [])
            #expect(telegram.filteredUpdateIDs == [5])
            telegram.enqueue(TelegramUpdates.messageReaction(updateID: 6, chat: -1_001_234, messageID: 3, user: 42, new: ["👍"], old: ["🔍"]))
            let withReactions = try await callBotAPI(telegram, "getUpdates", ["timeout": 0, "allowed_updates": ["message", "message_reaction"]])
            let update = withReactions.result?[0]
            #expect(update?["message_reaction"]?["new_reaction"] == [["type": "emoji", "emoji": "👍"]])
            #expect(update?["message_reaction"]?["old_reaction"] == [["type": "emoji", "emoji": "🔍"]])
        }
    }

    @Test("getUpdates is a 409 while a webhook is set; setWebhook checks its secret and URL")
    func webhookConflict() async throws {
        try await withFakeTelegramBotAPI { telegram in
            let badSecret = try await callBotAPI(telegram, "setWebhook", ["url": "https://relay.example/telegram/webhook", "secret_token": "no spaces!"])
            #expect(badSecret.status == 400)
            #expect(badSecret.description == "Bad Request: secret token contains unallowed characters")
            let plainHTTP = try await callBotAPI(telegram, "setWebhook", ["url": "http://relay.example/telegram/webhook"])
            #expect(plainHTTP.description == "Bad Request: bad webhook: An HTTPS URL must be provided for webhook")

            let set = try await callBotAPI(
                telegram, "setWebhook",
                ["url": "https://relay.example/telegram/webhook", "secret_token": "s3cret_-Token", "allowed_updates": ["message", "inline_query"]])
            #expect(set.result == true)
            #expect(telegram.webhook?.secretToken == "s3cret_-Token")
            #expect(telegram.webhook?.allowedUpdates == ["message", "inline_query"])
            let info = try await callBotAPI(telegram, "getWebhookInfo")
            #expect(info.result?["url"] == "https://relay.example/telegram/webhook")
            #expect(info.result?["max_connections"] == 40)

            let conflict = try await callBotAPI(telegram, "getUpdates", ["timeout": 0])
            #expect(conflict.status == 409)
            #expect(
                conflict.description == "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first")

            telegram.enqueue(TelegramUpdates.message(updateID: 1, messageID: 1, chat: 5, from: 5, text: "hi"))
            let deleted = try await callBotAPI(telegram, "deleteWebhook", ["drop_pending_updates": true])
            #expect(deleted.result == true)
            #expect(telegram.webhook == nil)
            #expect(telegram.confirmedUpdateIDs == [1], "dropped with the webhook")
            let polled = try await callBotAPI(telegram, "getUpdates", ["timeout": 0])
            #expect(polled.status == 200)
            #expect(polled.result == [])
        }
    }

    @Test("HTML is parsed as Telegram does: entities in UTF-16, and its errors")
    func htmlParsing() async throws {
        try await withFakeTelegramBotAPI { telegram in
            telegram.enforceRateLimits = false
            let html = "<b>Title</b> &lt;x&gt; &amp; 😀 <a href=\"https://example.com\">link</a>\n<i>footer</i>"
            let sent = try await callBotAPI(telegram, "sendMessage", ["chat_id": 42, "text": .string(html), "parse_mode": "HTML"])
            #expect(sent.status == 200)
            #expect(sent.result?["text"] == "Title <x> & 😀 link\nfooter")
            #expect(sent.result?["message_id"] == 1)
            #expect(sent.result?["from"]?["is_bot"] == true)
            #expect(sent.result?["chat"]?["id"] == 42)
            let message = try #require(telegram.message(chat: 42, id: 1))
            #expect(message.rawText == html)
            #expect(
                message.entities == [
                    FakeTelegramEntity(type: "bold", offset: 0, length: 5),
                    FakeTelegramEntity(type: "text_link", offset: 15, length: 4, url: "https://example.com/"),
                    FakeTelegramEntity(type: "italic", offset: 20, length: 6),
                ])
            #expect(message.entities("text_link").first?.covered(in: message.text) == "link")

            let refusals: [(String, String)] = [
                ("<p>hello</p>", "Unsupported start tag \"p\" at byte offset 0"),
                ("<b>bold", "Can't find end tag corresponding to start tag \"b\""),
                ("<b><i>x</b></i>", "Unmatched end tag at byte offset 7, expected \"</i>\", found \"</b>\""),
                ("a </b>", "Unexpected end tag at byte offset 2"),
                ("x < y", "Unsupported start tag \"\" at byte offset 2"),
                ("fish &chips; here", "Unsupported HTML entity \"&chips;\" at byte offset 5"),
                ("<span>s</span>", "Tag \"span\" must have class \"tg-spoiler\" at byte offset 0"),
            ]
            for (text, reason) in refusals {
                let answer = try await callBotAPI(telegram, "sendMessage", ["chat_id": 42, "text": .string(text), "parse_mode": "HTML"])
                #expect(answer.status == 400, "\(text)")
                #expect(answer.description == "Bad Request: can't parse entities: \(reason)", "\(text)")
            }
            let empty = try await callBotAPI(telegram, "sendMessage", ["chat_id": 42, "text": "<b> </b>\n", "parse_mode": "HTML"])
            #expect(empty.description == "Bad Request: message text is empty")
            let noChat = try await callBotAPI(telegram, "sendMessage", ["text": "hi"])
            #expect(noChat.description == "Bad Request: chat_id is empty")
            // Outside HTML mode nothing is parsed; a bare `&` is literal text in HTML mode too.
            let plain = try await callBotAPI(telegram, "sendMessage", ["chat_id": 42, "text": "<b>not bold</b>"])
            #expect(plain.result?["text"] == "<b>not bold</b>")
            let ampersand = try await callBotAPI(telegram, "sendMessage", ["chat_id": 42, "text": "AT&T & co", "parse_mode": "HTML"])
            #expect(ampersand.result?["text"] == "AT&T & co")
            // A link that is not http(s) keeps its text and loses the link.
            let script = try await callBotAPI(
                telegram, "sendMessage", ["chat_id": 42, "text": "<a href=\"javascript:alert(1)\">x</a>", "parse_mode": "HTML"])
            #expect(script.result?["entities"] == nil)
        }
    }

    @Test("4096 UTF-16 units of parsed text fit, one more does not")
    func lengthLimit() async throws {
        try await withFakeTelegramBotAPI { telegram in
            telegram.enforceRateLimits = false
            let cases: [(String, Int)] = [
                (String(repeating: "a", count: 4096), 200),
                (String(repeating: "a", count: 4097), 400),
                // Escapes count once parsed: 16 384 characters of HTML, 4096 of text.
                (String(repeating: "&lt;", count: 4096), 200),
                (String(repeating: "😀", count: 2048), 200),
                (String(repeating: "😀", count: 2048) + "a", 400),
                ("<b>" + String(repeating: "b", count: 4096) + "</b>", 200),
            ]
            for (text, status) in cases {
                let answer = try await callBotAPI(telegram, "sendMessage", ["chat_id": 7, "text": .string(text), "parse_mode": "HTML"])
                #expect(answer.status == status, "\(text.prefix(8))… (\(text.utf16.count) units)")
                if status == 400 { #expect(answer.description == "Bad Request: message is too long") }
            }
        }
    }

    @Test("an edit to the same content is 'not modified'; edits are kept")
    func edits() async throws {
        try await withFakeTelegramBotAPI { telegram in
            telegram.enforceRateLimits = false
            let markup: JSONValue = ["inline_keyboard": [[["text": "Run again", "callback_data": "again:1"]]]]
            _ = try await callBotAPI(telegram, "sendMessage", ["chat_id": -5, "text": "<i>working…</i>", "parse_mode": "HTML", "reply_markup": markup])
            let same = try await callBotAPI(
                telegram, "editMessageText", ["chat_id": -5, "message_id": 1, "text": "<i>working…</i>", "parse_mode": "HTML", "reply_markup": markup])
            #expect(same.status == 400)
            #expect(
                same.description
                    == "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message"
            )
            let edited = try await callBotAPI(telegram, "editMessageText", ["chat_id": -5, "message_id": 1, "text": "<b>done</b>", "parse_mode": "HTML"])
            #expect(edited.status == 200)
            #expect(edited.result?["text"] == "done")
            #expect(edited.result?["edit_date"] != nil)
            let message = try #require(telegram.message(chat: -5, id: 1))
            #expect(message.text == "done")
            #expect(message.replyMarkup == nil, "an edit without reply_markup removes the keyboard")
            #expect(message.history.map(\.text) == ["working…"])
            #expect(message.history.first?.replyMarkup == markup)
            let missing = try await callBotAPI(telegram, "editMessageText", ["chat_id": -5, "message_id": 99, "text": "x"])
            #expect(missing.description == "Bad Request: message to edit not found")
            let longData: JSONValue = .string(String(repeating: "d", count: 65))
            let badButton = try await callBotAPI(
                telegram, "sendMessage", ["chat_id": -5, "text": "x", "reply_markup": ["inline_keyboard": [[["text": "b", "callback_data": longData]]]]])
            #expect(badButton.description == "Bad Request: BUTTON_DATA_INVALID")
        }
    }

    @Test("sends faster than Telegram allows are 429 with retry_after")
    func pacing() async throws {
        try await withFakeTelegramBotAPI { telegram in
            // Windows long enough that a loaded machine cannot spread the calls out of them, and
            // shortened only where the test means a window to have passed.
            var slow = FakeTelegramRateLimits()
            slow.perChatWindow = .seconds(30)
            telegram.rateLimits = slow
            let first = try await callBotAPI(telegram, "sendMessage", ["chat_id": 42, "text": "one"])
            #expect(first.status == 200)
            let second = try await callBotAPI(telegram, "sendMessage", ["chat_id": 42, "text": "two"])
            #expect(second.status == 429)
            // What is left of the 30 s window, rounded up: 30 unless the machine was slow.
            let retryAfter = second.json["parameters"]?["retry_after"]?.intValue ?? 0
            #expect((1...30).contains(retryAfter))
            #expect(second.json["ok"] == false && second.json["error_code"] == 429)
            #expect(second.json["description"]?.stringValue == "Too Many Requests: retry after \(retryAfter)")
            // Another chat is not held up; an edit to the first one is.
            #expect(try await callBotAPI(telegram, "sendMessage", ["chat_id": 43, "text": "other"]).status == 200)
            #expect(try await callBotAPI(telegram, "editMessageText", ["chat_id": 42, "message_id": 1, "text": "uno"]).status == 429)
            #expect(telegram.maximumRate(perChat: 42, window: .seconds(30)) == 1)
            var passed = slow
            passed.perChatWindow = .milliseconds(20)
            telegram.rateLimits = passed
            try await Task.sleep(for: .milliseconds(100))
            #expect(try await callBotAPI(telegram, "sendMessage", ["chat_id": 42, "text": "two"]).status == 200)
            #expect(telegram.messages(chat: 42).map(\.text) == ["one", "two"])

            // 20 a minute per group and 30 a second overall, here scaled down (8 in 120 s overall,
            // so that a slow machine cannot spread the sends out of the window).
            var limits = FakeTelegramRateLimits()
            limits.perChat = 100
            limits.perGroup = 3
            limits.overall = 8
            limits.overallWindow = .seconds(120)
            telegram.rateLimits = limits
            for index in 1...3 {
                #expect(try await callBotAPI(telegram, "sendMessage", ["chat_id": -100_777, "text": .string("g\(index)")]).status == 200)
            }
            let group = try await callBotAPI(telegram, "sendMessage", ["chat_id": -100_777, "text": "g4"])
            #expect(group.status == 429)
            // The window's remaining seconds: the sends before took a moment (seconds, on a loaded machine).
            #expect((50...60).contains(group.json["parameters"]?["retry_after"]?.intValue ?? 0))
            #expect(telegram.maximumRate(perGroup: -100_777) == 3)
            #expect(try await callBotAPI(telegram, "sendMessage", ["chat_id": 44, "text": "a"]).status == 200)
            #expect(try await callBotAPI(telegram, "sendMessage", ["chat_id": 45, "text": "b"]).status == 200)
            #expect(try await callBotAPI(telegram, "sendMessage", ["chat_id": 46, "text": "c"]).status == 429, "the 9th send within the window")
            #expect(telegram.maximumOverallRate(window: .seconds(120)) == 8)
            #expect(telegram.calls("sendMessage").filter { $0.status == 429 }.count == 3)
        }
    }

    @Test("inline answers only for issued queries, once, within the deadline")
    func inlineDeadline() async throws {
        try await withFakeTelegramBotAPI { telegram in
            // Generous for the answers meant to be on time (a loaded machine can take seconds over
            // the three calls before the answer), short for the one meant to be late.
            telegram.inlineQueryDeadline = .seconds(60)
            let result: JSONValue = [
                "type": "article", "id": "fr-1", "title": "French",
                "input_message_content": ["message_text": "Bonjour", "parse_mode": "HTML"],
            ]
            let update = telegram.issueInlineQuery(from: 42, query: "fr Good morning")
            let id = try #require(update["inline_query"]?["id"]?.stringValue)
            #expect(update["inline_query"]?["query"] == "fr Good morning")

            let duplicate = try await callBotAPI(telegram, "answerInlineQuery", ["inline_query_id": .string(id), "results": [result, result]])
            #expect(duplicate.description == "Bad Request: RESULT_ID_DUPLICATE")
            let untitled = try await callBotAPI(
                telegram, "answerInlineQuery",
                ["inline_query_id": .string(id), "results": [["type": "article", "id": "x", "input_message_content": ["message_text": "t"]]]])
            #expect(untitled.description == "Bad Request: can't parse inline query result: Can't find field \"title\"")

            let answered = try await callBotAPI(
                telegram, "answerInlineQuery", ["inline_query_id": .string(id), "results": [result], "cache_time": 30, "is_personal": true])
            #expect(answered.result == true)
            let again = try await callBotAPI(telegram, "answerInlineQuery", ["inline_query_id": .string(id), "results": [result]])
            #expect(again.description == "Bad Request: query is too old and response timeout expired or query ID is invalid")
            let unknown = try await callBotAPI(telegram, "answerInlineQuery", ["inline_query_id": "12345", "results": [result]])
            #expect(unknown.status == 400)

            telegram.inlineQueryDeadline = .milliseconds(100)
            let late = telegram.issueInlineQuery(from: 42, query: "fix teh cat")
            try await Task.sleep(for: .milliseconds(400))
            let tooLate = try await callBotAPI(
                telegram, "answerInlineQuery", ["inline_query_id": .string(late["inline_query"]?["id"]?.stringValue ?? ""), "results": [result]])
            #expect(tooLate.description == "Bad Request: query is too old and response timeout expired or query ID is invalid")

            let accepted = telegram.inlineAnswers.filter(\.accepted)
            #expect(accepted.count == 1)
            #expect(accepted.first?.messageTexts == ["Bonjour"])
            #expect(accepted.first?.isPersonal == true)
            #expect((accepted.first?.latency ?? .seconds(99)) < .seconds(60))
        }
    }

    @Test("scripted failures come first, then normal answers")
    func scriptedFailures() async throws {
        try await withFakeTelegramBotAPI { telegram in
            telegram.enforceRateLimits = false
            telegram.failNext("sendMessage", with: .tooManyRequests(retryAfter: 3))
            telegram.failNext("sendMessage", with: .migrate(to: -1_009_999))
            telegram.failNext("sendMessage", with: .server(status: 502))
            telegram.failNext("sendMessage", with: .drop)
            let limited = try await callBotAPI(telegram, "sendMessage", ["chat_id": -9, "text": "x"])
            #expect(limited.status == 429)
            #expect(limited.json["parameters"]?["retry_after"] == 3)
            let migrated = try await callBotAPI(telegram, "sendMessage", ["chat_id": -9, "text": "x"])
            #expect(migrated.json["parameters"]?["migrate_to_chat_id"]?.intValue == -1_009_999)
            #expect(migrated.description == "Bad Request: group chat was upgraded to a supergroup chat")
            let gateway = try await callBotAPI(telegram, "sendMessage", ["chat_id": -9, "text": "x"])
            #expect(gateway.status == 502)
            #expect(gateway.contentType == "text/html")
            await #expect(throws: (any Error).self) {
                _ = try await callBotAPI(telegram, "sendMessage", ["chat_id": -9, "text": "x"], timeout: 5)
            }
            let normal = try await callBotAPI(telegram, "sendMessage", ["chat_id": -9, "text": "x"])
            #expect(normal.status == 200)
            #expect(telegram.calls("sendMessage").map(\.status) == [429, 400, 502, nil, 200])
            #expect(telegram.messages(chat: -9).count == 1)
        }
    }

    @Test("callback answers: once per query, and a long poll ends when the fake stops")
    func callbacksAndStop() async throws {
        let telegram = try await FakeTelegramBotAPI.start()
        telegram.enforceRateLimits = false
        let markup: JSONValue = ["inline_keyboard": [[["text": "Post to chat", "callback_data": "post:17"]]]]
        _ = try await callBotAPI(telegram, "sendMessage", ["chat_id": 42, "text": "result", "reply_markup": markup])
        let update = telegram.issueCallbackQuery(from: 42, chat: 42, messageID: 1, data: "post:17")
        #expect(update["callback_query"]?["message"]?["reply_markup"] == markup, "the pressed message as the bot sent it")
        #expect(update["callback_query"]?["data"] == "post:17")
        let id = try #require(update["callback_query"]?["id"]?.stringValue)
        let first = try await callBotAPI(telegram, "answerCallbackQuery", ["callback_query_id": .string(id), "text": "Posted"])
        #expect(first.result == true)
        let second = try await callBotAPI(telegram, "answerCallbackQuery", ["callback_query_id": .string(id)])
        #expect(second.description == "Bad Request: query is too old and response timeout expired or query ID is invalid")
        #expect(telegram.callbackAnswers.map(\.accepted) == [true, false])
        #expect(telegram.messages(chat: 42).first?.callbackData == ["post:17"])

        let clock = ContinuousClock()
        async let poll = callBotAPI(telegram, "getUpdates", ["timeout": 30], timeout: 40)
        try await eventually("the poll is waiting", safety: .seconds(30)) { telegram.offsets.count == 1 }
        let stopping = clock.now
        await telegram.stop()
        // Well before the 30 s the poll would last: a busy CI machine can take seconds to stop.
        #expect(clock.now - stopping < .seconds(15))
        _ = try? await poll
    }

    @Test("commands are checked and kept per scope and language")
    func commands() async throws {
        try await withFakeTelegramBotAPI { telegram in
            let commands: JSONValue = [["command": "translate", "description": "Translate text"], ["command": "fix", "description": "Fix spelling"]]
            #expect(try await callBotAPI(telegram, "setMyCommands", ["commands": commands]).result == true)
            #expect(try await callBotAPI(telegram, "setMyCommands", ["commands": commands, "language_code": "fr"]).result == true)
            #expect(try await callBotAPI(telegram, "getMyCommands").result == commands)
            #expect(telegram.commands(languageCode: "fr") == commands.arrayValue)
            #expect(telegram.commands(scope: ["type": "all_group_chats"]) == nil)
            let upper = try await callBotAPI(telegram, "setMyCommands", ["commands": [["command": "Translate", "description": "x"]]])
            #expect(upper.description == "Bad Request: BOT_COMMAND_INVALID")
            let many: JSONValue = .array((0...100).map { ["command": .string("c\($0)"), "description": "d"] })
            #expect(try await callBotAPI(telegram, "setMyCommands", ["commands": many]).description == "Bad Request: BOT_COMMANDS_TOO_MUCH")
            #expect(try await callBotAPI(telegram, "deleteMyCommands").result == true)
            #expect(telegram.commands() == nil)
        }
    }

    @Test("deliver posts an update as Telegram's webhook does")
    func delivery() async throws {
        try await withFakeTelegramBotAPI { telegram in
            // The fake itself stands in for a webhook receiver: its getMe route records the request.
            let update = TelegramUpdates.message(
                updateID: 9, messageID: 3, chat: -100_123, chatType: "supergroup", chatTitle: "Team", from: 42,
                text: "/translate@RheaTestBot fr hi @bob_smith", replyTo: (messageID: 2, text: "earlier", fromID: 77, isBot: false))
            let answer = try await FakeTelegramBotAPI.deliver(update, to: telegram.methodURL("getMe"), secretToken: "s3cret")
            #expect(answer.status == 200)
            #expect(answer.body.contains("RheaTestBot"))
            let call = try #require(await telegram.next("getMe", timeout: .seconds(30)))
            #expect(call.body == update)
            #expect(call.contentType == "application/json")
            #expect(call.headers["x-telegram-bot-api-secret-token"] == "s3cret")

            let message = update["message"]
            #expect(message?["chat"]?["type"] == "supergroup")
            #expect(message?["reply_to_message"]?["message_id"] == 2)
            #expect(
                message?["entities"] == [
                    ["type": "bot_command", "offset": 0, "length": 22],
                    ["type": "mention", "offset": 29, "length": 10],
                ])
            // Through the webhook set, with its secret; kinds not allowed are not sent.
            telegram.allowsAnyWebhookURL = true
            let set = try await callBotAPI(
                telegram, "setWebhook", ["url": .string(telegram.methodURL("getMe")), "secret_token": "hook-secret", "allowed_updates": ["message"]])
            #expect(set.result == true)
            let viaWebhook = try await telegram.deliver(TelegramUpdates.message(updateID: 10, messageID: 4, chat: 42, from: 42, text: "hi"))
            #expect(viaWebhook?.status == 200)
            #expect(telegram.calls("getMe").last?.headers["x-telegram-bot-api-secret-token"] == "hook-secret")
            let reaction = TelegramUpdates.messageReaction(updateID: 11, chat: 42, messageID: 4, user: 42, new: ["🔍"])
            #expect(try await telegram.deliver(reaction) == nil)
            #expect(telegram.filteredUpdateIDs == [11])

            let unreachable = await #expect(throws: (any Error).self) {
                _ = try await FakeTelegramBotAPI.deliver(update, to: "https://relay.example/hook", secretToken: nil)
            }
            #expect(unreachable is FakeTelegramDeliveryError)
        }
    }
}
