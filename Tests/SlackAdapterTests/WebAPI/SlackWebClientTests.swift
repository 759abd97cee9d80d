import AsyncHTTPClient
import RelayCore
import RelayHTTP
import RelayPipeline
import RelayPlatform
import RelayTestSupport
import SlackAdapter
import Testing

@Suite("Slack Web API client against the fake")
struct SlackWebClientTests {
    @Test func postMessageSendsTheBotTokenAndJSONAndReturnsTheTS() async throws {
        try await withSlackWeb { harness in
            let blocks: [JSONValue] = [["type": "section", "text": ["type": "mrkdwn", "text": "*hi*"]]]
            let ts = try await harness.client.postMessage(
                channel: "C123", text: "hi &lt;there&gt;", blocks: blocks, threadTS: "1699999999.000100")
            #expect(ts == "1700000000.000100")

            let request = try #require(harness.fake.requests(path: "chat.postMessage").first)
            #expect(request.method == "POST")
            #expect(request.header("Authorization") == "Bearer \(harness.fake.botToken)")
            #expect(request.header("Content-Type") == "application/json; charset=utf-8")
            #expect(request["channel"] == "C123")
            #expect(request["text"] == "hi &lt;there&gt;")
            #expect(request["thread_ts"] == "1699999999.000100")
            #expect(request["blocks"]?[0]?["text"]?["text"] == "*hi*")

            let second = try await harness.client.postMessage(channel: "C123", text: "again")
            #expect(second > ts, "ts values increase")
            #expect(harness.fake.requests(path: "chat.postMessage").last?["thread_ts"] == nil)
            #expect(harness.fake.messages(channel: "C123").map(\.text) == ["hi &lt;there&gt;", "again"])
        }
    }

    @Test func updateReplacesAPostedMessageAndEphemeralGoesToOneUser() async throws {
        try await withSlackWeb { harness in
            let ts = try await harness.client.postMessage(channel: "C1", text: "thinking…")
            let updated = try await harness.client.update(channel: "C1", ts: ts, text: "the answer")
            #expect(updated == ts)
            let message = try #require(harness.fake.messages(channel: "C1").first)
            #expect(message.text == "the answer")
            #expect(message.updates == 1)

            let ephemeral = try await harness.client.postEphemeral(channel: "C1", user: "U9", text: "only you")
            #expect(!ephemeral.isEmpty)
            #expect(harness.fake.messages(channel: "C1").last?.ephemeralUser == "U9")
            #expect(harness.fake.requests(path: "chat.postEphemeral").first?["user"] == "U9")
        }
    }

    @Test func okFalseIsARefusalWithSlacksCode() async throws {
        try await withSlackWeb { harness in
            harness.fake.failNext(with: .error("not_in_channel"), path: "chat.postMessage")
            let error = await slackError { try await harness.client.postMessage(channel: "C1", text: "x") }
            #expect(error == .refused(endpoint: "chat.postMessage", SlackRefusal(code: "not_in_channel", status: 200)))
            #expect(error?.reason == "chat.postMessage: not_in_channel (the bot is not a member of the channel; invite it)")
            guard case .rejected(let reason) = error?.deliveryOutcome else {
                Issue.record("expected rejected, got \(String(describing: error?.deliveryOutcome))")
                return
            }
            #expect(reason.contains("not_in_channel"))
            #expect(error?.isRetryable == false)
        }
    }

    @Test func theFakeValidatesBodiesLikeSlack() async throws {
        try await withSlackWeb { harness in
            let noChannel = await slackError { try await harness.client.postMessage(channel: "", text: "x") }
            #expect(noChannel?.label == "channel_not_found")
            let noText = await slackError { try await harness.client.postMessage(channel: "C1", text: "") }
            #expect(noText?.label == "no_text")
            let unknown = await slackError { try await harness.client.update(channel: "C1", ts: "1.2", text: "x") }
            #expect(unknown?.label == "message_not_found")
            #expect(unknown?.deliveryOutcome == .rejected(reason: unknown?.reason ?? ""))
            let badBlocks = await slackError {
                try await harness.client.send(.method("chat.postMessage", body: ["channel": "C1", "text": "x", "blocks": "no"]))
            }
            #expect(badBlocks?.label == "invalid_blocks")
        }
    }

    @Test func http429WithRetryAfterIsRateLimitedForThatLong() async throws {
        try await withSlackWeb { harness in
            harness.fake.failNext(with: .rateLimited(retryAfter: 2))
            let error = await slackError { try await harness.client.postMessage(channel: "C1", text: "x") }
            #expect(error == .rateLimited(endpoint: "chat.postMessage", retryAfter: .seconds(2)))
            #expect(error?.deliveryOutcome == .rateLimited(retryAfter: .seconds(2), reason: "chat.postMessage: rate limited (retry after 2 s)"))

            // Without the header, one second, as slack_sdk does.
            harness.fake.failNext(with: .rateLimited(retryAfter: nil))
            let bare = await slackError { try await harness.client.postMessage(channel: "C1", text: "x") }
            #expect(bare == .rateLimited(endpoint: "chat.postMessage", retryAfter: .seconds(1)))

            // `ratelimited` in a 200 is the same signal.
            harness.fake.failNext(with: .error("ratelimited"))
            let inBody = await slackError { try await harness.client.postMessage(channel: "C1", text: "x") }
            #expect(inBody == .rateLimited(endpoint: "chat.postMessage", retryAfter: .seconds(1)))

            // The call after the scripted failures goes through.
            _ = try await harness.client.postMessage(channel: "C1", text: "x")
        }
    }

    @Test func anAbsurdRetryAfterIsClampedToFifteenMinutes() async throws {
        try await withSlackWeb { harness in
            // About three years: a conversation must never be parked that long.
            harness.fake.failNext(with: .rateLimited(retryAfter: 99_999_999))
            let error = await slackError { try await harness.client.postMessage(channel: "C1", text: "x") }
            #expect(error == .rateLimited(endpoint: "chat.postMessage", retryAfter: .seconds(15 * 60)))
            #expect(error?.deliveryOutcome == .rateLimited(retryAfter: .seconds(900), reason: "chat.postMessage: rate limited (retry after 900 s)"))
        }
    }

    @Test func serverErrorsAndSlacksTransientCodesAreRetryable() async throws {
        try await withSlackWeb { harness in
            harness.fake.failNext(with: .status(500))
            let error = await slackError { try await harness.client.postMessage(channel: "C1", text: "x") }
            #expect(error == .server(endpoint: "chat.postMessage", status: 500))
            #expect(error?.deliveryOutcome == .retryable(reason: "chat.postMessage: Slack answered HTTP 500"))

            harness.fake.failNext(with: .error("internal_error"))
            let transient = await slackError { try await harness.client.postMessage(channel: "C1", text: "x") }
            #expect(transient?.isRetryable == true)

            harness.fake.failNext(with: .malformed)
            let malformed = await slackError { try await harness.client.postMessage(channel: "C1", text: "x") }
            #expect(malformed?.label == "malformed_response")
            #expect(malformed?.isRetryable == true)
        }
    }

    @Test func aSlowAnswerTimesOutAndIsRetryable() async throws {
        try await withSlackWeb(timeout: .milliseconds(300)) { harness in
            // The fake answers `ok` after 30 s (stop cuts it off): a call that waited for it
            // would succeed, so a timeout error shows the client gave up at its own limit.
            harness.fake.failNext(with: .slow(seconds: 30))
            let error = await slackError { try await harness.client.postMessage(channel: "C1", text: "x") }
            #expect(error == .timedOut(endpoint: "chat.postMessage", after: .milliseconds(300)))
            #expect(error?.isRetryable == true)

            // A request's own timeout wins over the client's.
            harness.fake.failNext(with: .slow(seconds: 0.5))
            let answer = try await harness.client.send(
                .method("chat.postMessage", body: ["channel": "C1", "text": "x"], timeout: .seconds(5)))
            #expect(JSONValue.parse(answer.body)?["ok"] == true)
        }
    }

    @Test func tokensAreCheckedAndNeverShown() async throws {
        try await withSlackWeb(botToken: "xoxb-wrong-token") { harness in
            let error = await slackError { try await harness.client.postMessage(channel: "C1", text: "x") }
            #expect(error == .refused(endpoint: "chat.postMessage", SlackRefusal(code: "invalid_auth", status: 200)))
            #expect(error?.deliveryOutcome == .rejected(reason: "chat.postMessage: invalid_auth (the token was refused)"))
            #expect(error.map { "\($0)" }?.contains("xoxb-wrong-token") == false)
            #expect(!harness.logs.text.contains("xoxb-wrong-token"))
        }
        try await withSlackWeb(botToken: "") { harness in
            let error = await slackError { try await harness.client.postMessage(channel: "C1", text: "x") }
            #expect(error?.label == "invalid_request")
            #expect(error?.deliveryOutcome == .rejected(reason: "chat.postMessage: no bot token is configured (SLACK_BOT_TOKEN)"))
            #expect(harness.fake.requests().isEmpty, "nothing is sent without a token")
        }
        try await withSlackWeb { harness in
            // The app-level token is the wrong kind for chat.*.
            let error = await slackError {
                try await harness.client.send(
                    SlackWebRequest(.method("chat.postMessage", token: harness.fake.appToken), body: ["channel": "C1", "text": "x"]))
            }
            #expect(error?.label == "not_allowed_token_type")
            let request = SlackWebRequest(.method("chat.postMessage", token: harness.fake.appToken), body: [:])
            #expect(!"\(request)".contains(harness.fake.appToken))
            #expect(!String(reflecting: request).contains(harness.fake.appToken))
            var dumped = ""
            dump(request, to: &dumped)
            #expect(!dumped.contains(harness.fake.appToken))
        }
    }

    @Test func respondPostsToTheResponseURLWithoutAToken() async throws {
        try await withSlackWeb { harness in
            let url = harness.fake.makeResponseURL()
            try await harness.client.respond(to: url, body: ["text": "done", "response_type": "in_channel"])
            let request = try #require(harness.fake.requests(responseURL: url).first)
            #expect(request.header("Authorization") == nil)
            #expect(request.header("Content-Type") == "application/json; charset=utf-8")
            #expect(request["text"] == "done")
            #expect(request["response_type"] == "in_channel")

            // Slack allows five responses; the sixth is refused for good.
            for _ in 0..<4 { try await harness.client.respond(to: url, body: ["text": "more"]) }
            let sixth = await slackError { try await harness.client.respond(to: url, body: ["text": "too many"]) }
            #expect(sixth == .refused(endpoint: "response_url", SlackRefusal(code: "used_url", status: 404)))

            let expired = harness.fake.makeResponseURL()
            harness.fake.expire(responseURL: expired)
            let error = await slackError { try await harness.client.respond(to: expired, body: ["text": "late"]) }
            #expect(error == .refused(endpoint: "response_url", SlackRefusal(code: "expired_url", status: 404)))
            #expect(error?.isRetryable == false)
            #expect(error?.reason.contains("/response/") == false, "the URL is a credential")
        }
    }

    @Test func openSocketModeConnectionNeedsTheAppToken() async throws {
        try await withFakeSocketModeServer { socketMode in
            try await withSlackWeb(socketMode: socketMode) { harness in
                let url = try await harness.client.openSocketModeConnection(appToken: harness.fake.appToken)
                #expect(url.hasPrefix("ws://127.0.0.1:\(socketMode.port)/link/?ticket="))
                let request = try #require(harness.fake.requests(path: "apps.connections.open").first)
                #expect(request.header("Authorization") == "Bearer \(harness.fake.appToken)")

                let wrongKind = await slackError { try await harness.client.openSocketModeConnection(appToken: harness.fake.botToken) }
                #expect(wrongKind?.label == "not_allowed_token_type")
                #expect(wrongKind?.isRetryable == false)
            }
        }
        try await withSlackWeb { harness in
            let off = await slackError { try await harness.client.openSocketModeConnection(appToken: harness.fake.appToken) }
            #expect(off?.label == "socket_mode_not_enabled")
        }
    }

    @Test func aRefusedConnectionIsRetryable() async throws {
        let http = makeTestHTTPClient()
        let logs = LogCapture()
        // Port 1 (tcpmux): nothing listens, and unlike a stopped fake's port no other test's
        // server can be given it meanwhile.
        let client = SlackWebClient(
            transport: HTTPTransport(client: http), apiURL: "http://127.0.0.1:1/api", botToken: "xoxb-t", timeout: .seconds(5), logger: logs.logger)
        let error = await slackError { try await client.postMessage(channel: "C1", text: "x") }
        try await http.shutdown()
        guard case .unreachable(let method, _) = error else {
            Issue.record("expected unreachable, got \(String(describing: error))")
            return
        }
        #expect(method == "chat.postMessage")
        #expect(error?.isRetryable == true)
    }

    @Test func cancellingTheCallerCancelsTheCall() async throws {
        try await withSlackWeb { harness in
            // The answer would come after 120 s (stop cuts it off): on a loaded machine a 5 s
            // answer could arrive before the cancel did, and the call would simply succeed.
            harness.fake.failNext(with: .slow(seconds: 120))
            let client = harness.client
            let call = Task { await slackError { try await client.postMessage(channel: "C1", text: "x") } }
            try await harness.fake.waitForRequests(count: 1, path: "chat.postMessage")
            call.cancel()
            let error = await call.value
            #expect(error == .cancelled(endpoint: "chat.postMessage"))
            #expect(error?.isRetryable == true)
        }
    }
}
