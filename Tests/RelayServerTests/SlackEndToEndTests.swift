import Foundation
import Hummingbird
import HummingbirdTesting
import RelayCore
import RelayPipeline
import RelayServer
import RelayTestSupport
import RelayTribunal
import SlackAdapter
import Testing

/// Slack through the real server: `RelayApplication.build` as `serve` runs it, driven over HTTP
/// with requests signed exactly as Slack signs them (or over Socket Mode), against the fake Web
/// API and the fake Rhea Tribunal on 127.0.0.1. Every check is about what a Slack user would see.
@Suite("Slack end to end, through the server")
struct SlackEndToEndTests {
    static let quick = FakeRheaTribunal.quickPath

    // MARK: 1. Signing

    @Test func aSlashCommandSignedAsSlackSignsIsAcknowledgedAtOnceWithWorkingOnIt() async throws {
        // The signer used below reproduces Slack's published example byte for byte.
        let published = SlackPayloads.signedSlashCommand()
        #expect(
            SlackSigner(signingSecret: published.signingSecret).signature(body: published.body, timestamp: published.timestamp)
                == published.signature)

        try await SlackFakes.with { fakes in
            let configuration = fakes.configuration(signingSecret: published.signingSecret)
            try await fakes.withRelay(configuration) { relay in
                // The published request, re-sent now (its 2018 timestamp is long stale), answering
                // to the fake instead of hooks.slack.com.
                let responseURL = relay.slack.makeResponseURL()
                let original = try #require(FakeSlackWebAPI.formFields(published.body)["response_url"])
                let body = published.body.replacingOccurrences(
                    of: SlackPayloads.formEncode([("response_url", original)]),
                    with: SlackPayloads.formEncode([("response_url", responseURL)]))
                #expect(body != published.body)

                let response = try await relay.post("/slack/commands", body: body, contentType: "application/x-www-form-urlencoded")
                #expect(response.status == .ok)
                #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
                let ack = try #require(JSONValue.parse(response.body.readableBytesView))
                #expect(ack == ["response_type": "ephemeral", "text": "⏳ Working on it…"])

                // `/webhook-collect` is no relay command: the user is told so, privately.
                let answer = try #require(await relay.slack.next(responseURL: responseURL))
                #expect(answer["response_type"]?.stringValue == "ephemeral")
                #expect(answer["text"]?.stringValue?.contains("webhook-collect") == true)
            }
        }
    }

    // MARK: 2. Refused requests

    @Test func forgedStaleAndFutureRequestsGet401AndNoReplyAMalformedSignedBodyGets400() async throws {
        try await SlackFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                var refusedURLs: [String] = []
                for signing: RelayUnderTest.Signing in [
                    .forged, .aged(seconds: 301), .aged(seconds: -600), .ofOtherBody("text=something+else"),
                ] {
                    let responseURL = relay.slack.makeResponseURL()
                    refusedURLs.append(responseURL)
                    let response = try await relay.slashCommand("/translate", text: "fr Good morning", responseURL: responseURL, signing: signing)
                    #expect(response.status == .unauthorized, "\(signing)")
                    #expect(String(buffer: response.body) == #"{"error":"invalid request"}"#, "\(signing)")
                }
                // The same for an event that would otherwise be answered with chat.postMessage.
                for (index, signing) in [RelayUnderTest.Signing.forged, .aged(seconds: 301), .aged(seconds: -600)].enumerated() {
                    let mention = SlackFakes.mention("translate fr Hello", eventID: "Ev0REFUSED\(index)", ts: "1700000000.000100")
                    let response = try await relay.event(mention, signing: signing)
                    #expect(response.status == .unauthorized, "\(signing)")
                }
                // 290 s old is still inside Slack's five minutes, so it is only malformed: 400. (Not
                // 299: the server reads its own clock later, and a loaded machine took more than 1 s.)
                let malformedForm = "team_id=T0E2E&user_id=U0HUMAN"
                let badForm = try await relay.post(
                    "/slack/commands", body: malformedForm, contentType: "application/x-www-form-urlencoded", signing: .aged(seconds: 290))
                #expect(badForm.status == .badRequest)
                #expect(String(buffer: badForm.body).contains("channel_id"))
                #expect(badForm.headers[values: SlackHeaders.noRetry] == ["1"])
                let badJSON = try await relay.post("/slack/events", body: #"{"type":"event_callback","event_id":"#, contentType: "application/json")
                #expect(badJSON.status == .badRequest)
                let badPayload = try await relay.post("/slack/interactive", body: "payload=%7Bnot+json", contentType: "application/x-www-form-urlencoded")
                #expect(badPayload.status == .badRequest)

                // Nothing of the above reaches Slack or a model: a refused request starts no run,
                // so once the relay is idle nothing can follow.
                try await relay.settled()
                #expect(relay.slack.requests().isEmpty, "\(relay.slack.requests().map(\.path))")
                #expect(await relay.modelRequests().isEmpty)

                // The pipeline was live all along: a correctly signed command is answered, once.
                let responseURL = relay.slack.makeResponseURL()
                let good = try await relay.slashCommand("/translate", text: "fr Good morning", responseURL: responseURL)
                #expect(good.status == .ok)
                _ = try #require(await relay.slack.next(responseURL: responseURL))
                try await relay.settled()
                #expect(relay.slack.requests().map(\.path) == [Self.path(of: responseURL)])
                for url in refusedURLs {
                    #expect(relay.slack.requests(responseURL: url).isEmpty)
                }
            }
        }
    }

    // MARK: 3. Slash command → response_url

    @Test func aSlashCommandIsAnsweredOnceAtItsResponseURLWithTextAndBlocks() async throws {
        try await SlackFakes.with { fakes in
            // The model may take its time: the relay waits for it far longer than it takes here.
            var configuration = fakes.configuration()
            configuration.tribunal.timeouts.quick = .seconds(60)
            try await fakes.withRelay(configuration) { relay in
                // A slow model must not delay the acknowledgement (Slack allows 3 s): the model's
                // answer is held until the acknowledgement has come, so the acknowledgement
                // cannot have waited for it.
                relay.tribunal.hold(path: Self.quick)
                let responseURL = relay.slack.makeResponseURL()
                let response = try await relay.slashCommand("/translate", text: "fr Good morning", responseURL: responseURL)
                #expect(response.status == .ok)
                #expect(JSONValue.parse(response.body.readableBytesView) == ["response_type": "ephemeral", "text": "⏳ Working on it…"])
                #expect(try await relay.runsInFlight() == 1, "the run had finished before the acknowledgement")
                #expect(relay.slack.requests(responseURL: responseURL).isEmpty, "answered before the acknowledgement")

                _ = try #require(await relay.tribunal.next(path: Self.quick))
                relay.tribunal.release(path: Self.quick)
                let post = try #require(await relay.slack.next(responseURL: responseURL))
                try await relay.settled()
                #expect(relay.slack.requests(responseURL: responseURL).count == 1)
                #expect(relay.slack.requests(path: "chat.postMessage").isEmpty)
                #expect(relay.slack.requests(path: "chat.postEphemeral").isEmpty)

                let body = try #require(post.body)
                #expect(post.header("content-type")?.hasPrefix("application/json") == true)
                #expect(body["response_type"]?.stringValue == "in_channel")
                let text = try #require(body["text"]?.stringValue)
                #expect(text.contains("[translate:fr] Good morning"), "\(text)")
                let blocks = try #require(body["blocks"]?.arrayValue)
                #expect(!blocks.isEmpty)
                #expect(
                    blocks.contains {
                        $0["type"]?.stringValue == "section" && $0["text"]?["text"]?.stringValue?.contains("[translate:fr] Good morning") == true
                    })

                // The model was asked once, for French.
                let asked = await relay.tribunal.requests(path: Self.quick)
                #expect(asked.count == 1)
                #expect(asked.first?["action"]?.stringValue == "translate")
                #expect(asked.first?["target_lang"]?.stringValue?.lowercased().hasPrefix("fr") == true)
                #expect(asked.first?["text"]?.stringValue == "Good morning")
            }
        }
    }

    // MARK: 4. Events API retries

    @Test func threeDeliveriesOfOneMentionGetOneReplyInItsThread() async throws {
        try await SlackFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let mention = SlackFakes.mention("translate fr Good morning", eventID: "Ev0RETRIED1", channel: "C0RETRY", ts: "1700000000.000400")
                for retry in [nil, 1, 2] as [Int?] {
                    let response = try await relay.event(mention, retry: retry)
                    #expect(response.status == .ok, "delivery \(retry ?? 0)")
                }
                // Each delivery was acknowledged with its run registered: once idle, the
                // redeliveries had their chance to answer and did not.
                // The run's placeholder, then the answer put in its place (issue 28: a resend after
                // a crash then edits again instead of posting the answer twice).
                let post = try #require(await relay.slack.next(path: "chat.postMessage"))
                let update = try #require(await relay.slack.next(path: "chat.update"))
                try await relay.settled()
                #expect(relay.slack.requests().map(\.path) == ["/api/chat.postMessage", "/api/chat.update"])
                #expect(await relay.tribunal.requestCount(path: Self.quick) == 1)

                #expect(post["channel"]?.stringValue == "C0RETRY")
                #expect(post["thread_ts"]?.stringValue == "1700000000.000400")
                #expect(post["text"]?.stringValue == "⏳ Working on /translate…")
                #expect(update["text"]?.stringValue?.contains("[translate:fr] Good morning") == true)
                let messages = relay.slack.messages(channel: "C0RETRY")
                #expect(messages.count == 1)
                #expect(messages.first?.threadTS == "1700000000.000400")
                #expect(messages.first?.text.contains("[translate:fr] Good morning") == true)
            }
        }
    }

    // MARK: 5. Rate limits

    @Test func a429IsRetriedNoSoonerThanRetryAfterThenDeliveredOnce() async throws {
        try await SlackFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                relay.slack.failNext(1, with: .rateLimited(retryAfter: 2), path: "chat.postMessage")
                let mention = SlackFakes.mention("translate fr Good morning", eventID: "Ev0LIMITED1", channel: "C0LIMIT", ts: "1700000000.000500")
                #expect(try await relay.event(mention).status == .ok)

                // The 429, then the retry; once idle, no further attempt can come.
                _ = try #require(await relay.slack.next(path: "chat.postMessage"))
                _ = try #require(await relay.slack.next(path: "chat.postMessage"))
                try await relay.settled()
                let arrivals = relay.slack.arrivalTimes(path: "chat.postMessage")
                #expect(arrivals.count == 2)
                if arrivals.count == 2 {
                    let gap = arrivals[0].duration(to: arrivals[1])
                    #expect(gap >= .seconds(2), "retried after \(gap)")
                }
                let messages = relay.slack.messages(channel: "C0LIMIT")
                #expect(messages.count == 1)
                #expect(messages.first?.threadTS == "1700000000.000500")
                #expect(messages.first?.text.contains("[translate:fr] Good morning") == true)
            }
        }
    }

    // MARK: 6. Restart between stored and sent

    @Test func aReplyStoredWhileSlackIsUnreachableIsDeliveredOnceAfterARestart() async throws {
        try await SlackFakes.with { fakes in
            let mention = SlackFakes.mention("translate fr Good morning", eventID: "Ev0RESTART1", channel: "C0RESTART", ts: "1700000000.000600")
            // First run: nothing listens where the relay thinks Slack is (port 1 refuses).
            var unreachable = fakes.configuration(apiURL: "http://127.0.0.1:1/api")
            unreachable.delivery.maxAttempts = 50  // failing for as long as it runs must not give up
            try await fakes.withRelay(unreachable) { relay in
                #expect(try await relay.event(mention).status == .ok)
                // The placeholder is stored before the model is asked, so wait for both.
                try await eventually("the placeholder and the reply to be stored") { try await relay.outboxDepth() ?? 0 >= 2 }
                #expect(await relay.tribunal.requestCount(path: Self.quick) == 1)
            }
            #expect(fakes.slack.requests().isEmpty)

            // Second run on the same SQLite file, Slack reachable: the stored reply goes out once,
            // and the model is not asked again.
            try await fakes.withRelay(fakes.configuration()) { relay in
                // The placeholder and the answer that edits it, both stored, go out in order.
                let post = try #require(await relay.slack.next(path: "chat.postMessage"))
                _ = try #require(await relay.slack.next(path: "chat.update"))
                try await relay.settled()
                #expect(relay.slack.requests().count == 2)
                #expect(post["thread_ts"]?.stringValue == "1700000000.000600")
                #expect(relay.slack.messages(channel: "C0RESTART").first?.text.contains("[translate:fr] Good morning") == true)
                #expect(await relay.tribunal.requestCount(path: Self.quick) == 1)
                // Slack redelivering the event after the restart changes nothing: its run is
                // registered before the acknowledgement, and once idle it has answered nothing.
                #expect(try await relay.event(mention, retry: 1).status == .ok)
                try await relay.settled()
                #expect(relay.slack.requests().count == 2)
                #expect(relay.slack.messages(channel: "C0RESTART").count == 1)
                #expect(await relay.tribunal.requestCount(path: Self.quick) == 1)
            }
        }
    }

    @Test func aReplyWhoseDeliveriesFailedWith500IsDeliveredOnceAfterARestart() async throws {
        try await SlackFakes.with { fakes in
            let mention = SlackFakes.mention("translate fr Good morning", eventID: "Ev0RESTART2", channel: "C0FAILING", ts: "1700000000.000700")
            fakes.slack.failNext(3, with: .status(500), path: "chat.postMessage")
            // Retries 3 s apart, so the first run is stopped between two of them even when a loaded
            // machine takes seconds to shut it down.
            var slow = fakes.configuration()
            slow.delivery = DeliveryPolicy(
                maxAttempts: 20, retry: RetryPolicy(attempts: 20, baseDelay: .seconds(3), maxDelay: .seconds(3)), lease: .seconds(30),
                pollInterval: .milliseconds(50), drainTimeout: .seconds(1))
            try await fakes.withRelay(slow) { relay in
                #expect(try await relay.event(mention).status == .ok)
                _ = try #require(await relay.slack.next(path: "chat.postMessage"))
            }
            // One failure usually; two or three when a loaded machine slows the shutdown — what
            // matters is that the delivery itself comes after the restart, once.
            let failedBeforeRestart = fakes.slack.requests(path: "chat.postMessage").count
            #expect((1...3).contains(failedBeforeRestart))
            #expect(fakes.slack.messages().isEmpty, "delivered before the restart")

            try await fakes.withRelay(fakes.configuration()) { relay in
                // The rest of the three 500s, then the delivery: the fake hands out requests in
                // order, so three more after the first are the 4th overall, whichever run sent them.
                for _ in 2...4 {
                    _ = try #require(await relay.slack.next(path: "chat.postMessage"))
                }
                try await relay.settled()
                #expect(relay.slack.requests(path: "chat.postMessage").count == 4)
                let messages = relay.slack.messages(channel: "C0FAILING")
                #expect(messages.count == 1)
                #expect(messages.first?.threadTS == "1700000000.000700")
                #expect(await relay.tribunal.requestCount(path: Self.quick) == 1)
            }
        }
    }

    @Test func aRunInFlightAtShutdownIsAnsweredOnceAfterTheRestart() async throws {
        try await SlackFakes.with { fakes in
            let mention = SlackFakes.mention("translate fr Good morning", eventID: "Ev0PARKED1", channel: "C0PARKED", ts: "1700000000.000800")
            // The model holds its answer past the shutdown grace (1 s), however slow the machine:
            // the run is parked.
            fakes.tribunal.hold(path: Self.quick)
            // Nor may the relay give up on the model before the shutdown has parked the run: a
            // loaded machine took more than the usual 5 s to shut down.
            var patient = fakes.configuration()
            patient.tribunal.timeouts.quick = .seconds(60)
            try await fakes.withRelay(patient) { relay in
                #expect(try await relay.event(mention).status == .ok)
                _ = try #require(await relay.tribunal.next(path: Self.quick))
                // Posted before the shutdown, which a loaded machine may not reach within the drain.
                _ = try #require(await relay.slack.next(path: "chat.postMessage"))
            }
            // Only the run's placeholder was posted.
            #expect(fakes.slack.requests().map(\.path) == ["/api/chat.postMessage"])
            fakes.tribunal.release(path: Self.quick)

            try await fakes.withRelay(fakes.configuration()) { relay in
                // The run runs again, finds its placeholder (keyed by its inbox id) and edits it.
                let update = try #require(await relay.slack.next(path: "chat.update"))
                try await relay.settled()
                #expect(relay.slack.requests().map(\.path) == ["/api/chat.postMessage", "/api/chat.update"])
                #expect(update["text"]?.stringValue?.contains("[translate:fr] Good morning") == true)
                let messages = relay.slack.messages(channel: "C0PARKED")
                #expect(messages.count == 1)
                #expect(messages.first?.threadTS == "1700000000.000800")
            }
        }
    }

    // MARK: 7. Escaping

    /// A Unicode "Prepend" character before `<`, or a combining mark after `>`, glues them into
    /// one grapheme cluster; an escaper that compares characters let such a `<!channel>`
    /// through. The model's answer reaches Slack with no raw `<` or `>` at all.
    @Test(arguments: ["\u{600}&lt;!channel&gt;\u{301} hi", "&lt;\u{301}!here&gt;", "\u{110BD}&lt;@U0BOSS&gt;\u{FE0F}"])
    func markupGluedIntoOneCharacterStillReachesSlackEscaped(typed: String) async throws {
        try await SlackFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let responseURL = relay.slack.makeResponseURL()
                #expect(try await relay.slashCommand("/ai", text: typed, responseURL: responseURL).status == .ok)
                let answer = try #require(await relay.slack.next(responseURL: responseURL))
                let asked = try #require(await relay.tribunal.next(path: Self.quick))
                #expect(asked["text"]?.stringValue?.unicodeScalars.contains("<") == true, "the model saw the markup as text")
                let shown = try #require(answer.body).shownTexts
                #expect(!shown.isEmpty)
                #expect(answer["unfurl_links"] == false && answer["unfurl_media"] == false, "no link previews")
                for text in shown {
                    #expect(!text.unicodeScalars.contains("<") && !text.unicodeScalars.contains(">"), "raw markup reached Slack: \(text.debugDescription)")
                }
            }
        }
    }

    @Test func modelTextWithMassMentionsReachesSlackEscaped() async throws {
        try await SlackFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                // Someone types a literal `<!channel>`; Slack sends it escaped, the relay hands the
                // plain text to the model, and the (echoing) model answers with `<!channel>` in it.
                let responseURL = relay.slack.makeResponseURL()
                let typed = "fr Hello &lt;!channel&gt; and &lt;!here&gt; &amp; &lt;@U0BOSS&gt;"
                #expect(try await relay.slashCommand("/translate", text: typed, responseURL: responseURL).status == .ok)
                let mention = SlackFakes.mention("ai say &lt;!channel&gt; now", eventID: "Ev0ESCAPE1", channel: "C0ESCAPE", ts: "1700000000.000900")
                #expect(try await relay.event(mention).status == .ok)

                let answered = [try #require(await relay.slack.next(responseURL: responseURL))]
                // The mention's answer edits its placeholder, which was posted without previews.
                let placeholder = try #require(await relay.slack.next(path: "chat.postMessage"))
                #expect(placeholder["unfurl_links"] == false && placeholder["unfurl_media"] == false)
                let posted = [try #require(await relay.slack.next(path: "chat.update"))]

                // The model did see the raw text.
                let prompts = await relay.tribunal.requests(path: Self.quick).compactMap { $0["text"]?.stringValue }
                #expect(prompts.contains("Hello <!channel> and <!here> & <@U0BOSS>"), "\(prompts)")
                #expect(prompts.contains("say <!channel> now"), "\(prompts)")

                for request in answered + posted {
                    let body = try #require(request.body)
                    if request.path.hasPrefix("/response/") {
                        #expect(body["unfurl_links"] == false && body["unfurl_media"] == false, "no link previews: \(request.rawBody)")
                    }
                    let shown = body.shownTexts
                    for control in ["<!channel>", "<!here>", "<@U0BOSS>"] {
                        #expect(!shown.contains { $0.contains(control) }, "\(control) reached Slack unescaped: \(request.rawBody)")
                    }
                    #expect(shown.contains { $0.contains("&lt;!channel&gt;") })
                    let text = try #require(body["text"]?.stringValue)
                    #expect(text.contains("&lt;!channel&gt;"), "\(text)")
                }
                let slashText = answered.first?["text"]?.stringValue ?? ""
                #expect(slashText.contains("&lt;!here&gt; &amp; &lt;@U0BOSS&gt;"), "\(slashText)")
                #expect(relay.slack.messages(channel: "C0ESCAPE").first?.text.contains("say &lt;!channel&gt; now") == true)
            }
        }
    }

    // MARK: 8. Tribunal reaction

    @Test func theTribunalReactionPostsAConsensusInTheMessagesThreadWithTheAgreementFooter() async throws {
        try await SlackFakes.with { fakes in
            let claim = FakeSlackMessage(channel: "C0CLAIMS", ts: "1700000000.001000", text: "The Eiffel Tower is in Berlin &amp; always was")
            fakes.slack.seed(claim)
            try await fakes.withRelay(fakes.configuration()) { relay in
                // Another reaction is not the tribunal's.
                let thumbs = SlackFakes.reaction("thumbsup", eventID: "Ev0THUMBS1", channel: "C0CLAIMS", ts: claim.ts)
                #expect(try await relay.event(thumbs).status == .ok)
                let mag = SlackFakes.reaction("mag", eventID: "Ev0MAG1", channel: "C0CLAIMS", ts: claim.ts)
                #expect(try await relay.event(mag).status == .ok)

                // The 🔍's answer; the 👍 was dropped before its acknowledgement, so once idle
                // nothing else can come.
                let post = try #require(await relay.slack.next(path: "chat.postMessage"))
                let answer = try #require(await relay.slack.next(path: "chat.update"))
                try await relay.settled()
                #expect(relay.slack.requests(path: "chat.postMessage").count == 1)
                #expect(post["text"]?.stringValue == "⏳ Working on /tribunal…")
                #expect(relay.slack.requests(path: "conversations.replies").count == 1)

                // The models judged the message's text, unescaped.
                let judged = await relay.tribunal.requests(path: FakeRheaTribunal.tribunalPath)
                #expect(judged.count == 1)
                #expect(judged.first?["prompt"]?.stringValue?.contains("The Eiffel Tower is in Berlin & always was") == true)

                #expect(post["channel"]?.stringValue == "C0CLAIMS")
                #expect(post["thread_ts"]?.stringValue == claim.ts)
                let text = try #require(answer["text"]?.stringValue)
                #expect(text.contains("Agreement 82%"), "\(text)")
                let blocks = try #require(answer["blocks"]?.arrayValue)
                let contextTexts = blocks.filter { $0["type"]?.stringValue == "context" }.flatMap(\.allStrings)
                #expect(contextTexts.contains { $0.contains("Agreement 82%") && $0.contains("3/3 models") }, "\(contextTexts)")
                let thread = relay.slack.messages(channel: "C0CLAIMS").filter { $0.threadTS == claim.ts }
                #expect(thread.count == 1)
            }
        }
    }

    /// Issue 14: the tribunal's reply names its fact-check; a 👍 on it marks the verdict right, a
    /// 👎 wrong, for whoever reacted and only them; a 👍 on someone else's message does nothing.
    @Test func aThumbOnATribunalReplyMarksItsFactCheck() async throws {
        try await SlackFakes.with { fakes in
            let claim = FakeSlackMessage(channel: "C0CLAIMS", ts: "1700000000.001000", text: "The Eiffel Tower is in Berlin")
            fakes.slack.seed(claim)
            try await fakes.withRelay(fakes.configuration()) { relay in
                #expect(try await relay.event(SlackFakes.reaction("mag", eventID: "Ev0MAG2", channel: "C0CLAIMS", ts: claim.ts)).status == .ok)
                let post = try #require(await relay.slack.next(path: "chat.update"))
                try await relay.settled()
                let text = try #require(post["text"]?.stringValue)
                #expect(text.contains("fact-check #1"), "\(text)")
                let reply = try #require(relay.slack.messages(channel: "C0CLAIMS").first { $0.text.contains("fact-check #1") })

                // Marks teach the council: a member who is no workspace admin is told who may.
                relay.slack.seed(.member("U0READER", teamID: SlackFakes.team))
                let refused = SlackFakes.reaction(
                    "+1", eventID: "Ev0UP0", channel: "C0CLAIMS", ts: reply.ts, user: "U0READER", itemUser: FakeSlackWebAPI.botUserID)
                #expect(try await relay.event(refused).status == .ok)
                let refusal = try #require(await relay.slack.next(path: "chat.postEphemeral"))
                #expect(refusal["user"]?.stringValue == "U0READER")
                #expect(refusal["text"]?.stringValue?.contains("Only this team's admins can mark fact-checks") == true, "\(refusal)")

                relay.slack.seed(.admin("U0EDITOR", teamID: SlackFakes.team))
                let up = SlackFakes.reaction(
                    "thumbsup::skin-tone-3", eventID: "Ev0UP1", channel: "C0CLAIMS", ts: reply.ts, user: "U0EDITOR", itemUser: FakeSlackWebAPI.botUserID)
                #expect(try await relay.event(up).status == .ok)
                let marked = try #require(await relay.slack.next(path: "chat.postEphemeral"))
                #expect(marked["user"]?.stringValue == "U0EDITOR")
                #expect(marked["text"]?.stringValue?.contains("Marked fact-check #1 as true") == true, "\(marked)")

                // 👎: the recorded verdict (true) was wrong, so the mark is false; the latest mark counts.
                let down = SlackFakes.reaction(
                    "-1", eventID: "Ev0DOWN1", channel: "C0CLAIMS", ts: reply.ts, user: "U0EDITOR", itemUser: FakeSlackWebAPI.botUserID)
                #expect(try await relay.event(down).status == .ok)
                let remarked = try #require(await relay.slack.next(path: "chat.postEphemeral"))
                #expect(remarked["text"]?.stringValue?.contains("Marked fact-check #1 as false") == true, "\(remarked)")

                // A 👍 on a person's message reads nothing and answers nothing.
                let readsBefore = relay.slack.requests(path: "conversations.replies").count
                let other = SlackFakes.reaction("+1", eventID: "Ev0UP2", channel: "C0CLAIMS", ts: claim.ts)
                #expect(try await relay.event(other).status == .ok)
                try await relay.settled()
                #expect(relay.slack.requests(path: "conversations.replies").count == readsBefore)
                #expect(relay.slack.requests(path: "chat.postEphemeral").count == 3, "the refusal and the two marks")
            }
        }
    }

    // MARK: 9. Socket Mode

    @Test func socketModeMentionsAreAckedAndAnsweredOnceAcrossARefresh() async throws {
        try await withFakeSocketModeServer { socketMode in
            try await SlackFakes.with { fakes in
                fakes.slack.attach(socketMode: socketMode)
                let configuration = fakes.configuration(signingSecret: nil, appToken: fakes.slack.appToken)
                try await fakes.withRelay(configuration) { relay in
                    // No signing secret: no HTTP routes.
                    #expect(try await relay.event(SlackFakes.mention("ai hi", eventID: "Ev0HTTP", ts: "1.1")).status == .notFound)

                    try await socketMode.waitForConnections(count: 1)
                    let thread = "1700000000.000050"  // every mention's ts
                    func mention(_ envelope: String, _ event: String, _ word: String, retry: Int = 0) -> JSONValue {
                        SlackPayloads.socketModeEnvelope(
                            type: "events_api", envelopeID: envelope,
                            payload: SlackFakes.mention("translate fr \(word)", eventID: event, channel: "C0SOCKET", ts: thread),
                            retryAttempt: retry)
                    }

                    try await socketMode.send(json: mention("env-1", "Ev0SOCK1", "one"), to: 1)
                    #expect(try await socketMode.waitForAck(envelopeID: "env-1").first?.connection == 1)
                    _ = try #require(await relay.slack.next(path: "chat.update"))

                    // Slack recycles the connection; an envelope still arrives on the old one
                    // while the new one opens, another on the new one once it is greeted.
                    try await socketMode.sendDisconnect(reason: "refresh_requested", to: 1)
                    try await socketMode.send(json: mention("env-2", "Ev0SOCK2", "two"), to: 1)
                    try await socketMode.waitForConnections(count: 2)
                    #expect(try await socketMode.waitForAck(envelopeID: "env-2").first?.connection == 1)
                    try await socketMode.send(json: mention("env-3", "Ev0SOCK3", "three"), to: 2)
                    #expect(try await socketMode.waitForAck(envelopeID: "env-3").first?.connection == 2)
                    // Slack redelivers env-2's event (as after a missed ack): acked, not answered again.
                    try await socketMode.send(json: mention("env-2b", "Ev0SOCK2", "two", retry: 1), to: 2)
                    try await socketMode.waitForAck(envelopeID: "env-2b")
                    try await socketMode.waitForClose(of: 1)

                    // The answers to "two" and "three". An envelope is handed on right after its
                    // ack, so by the time both are answered the repeat's run (if it had one)
                    // would be registered; once idle, nothing else can come.
                    // (Each answer edits its run's placeholder.)
                    _ = try #require(await relay.slack.next(path: "chat.update"))
                    _ = try #require(await relay.slack.next(path: "chat.update"))
                    try await relay.settled()
                    let posts = relay.slack.requests(path: "chat.postMessage")
                    #expect(posts.count == 3)
                    #expect(posts.allSatisfy { $0["text"]?.stringValue == "⏳ Working on /translate…" })
                    let texts = relay.slack.messages(channel: "C0SOCKET").map(\.text)
                    for word in ["one", "two", "three"] {
                        #expect(texts.filter { $0.contains("[translate:fr] \(word)") }.count == 1, "\(texts)")
                    }
                    #expect(posts.allSatisfy { $0["thread_ts"]?.stringValue == thread && $0["channel"]?.stringValue == "C0SOCKET" })
                    #expect(socketMode.acks.map(\.envelopeID).sorted() == ["env-1", "env-2", "env-2b", "env-3"])
                    #expect(await relay.tribunal.requestCount(path: Self.quick) == 3)
                }
            }
        }
    }

    // MARK: Buttons

    /// The button with `actionID` under a reply's blocks.
    static func button(_ actionID: String, in body: JSONValue) -> JSONValue? {
        for block in body["blocks"]?.arrayValue ?? [] where block["type"]?.stringValue == "actions" {
            if let button = block["elements"]?.arrayValue?.first(where: { $0["action_id"]?.stringValue == actionID }) { return button }
        }
        return nil
    }

    @Test func aPrivateResultCanBePostedToTheChannelAndRunAgainByItsButtons() async throws {
        try await SlackFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let first = relay.slack.makeResponseURL()
                _ = try await relay.slashCommand("/rhea", text: "fix teh cat --private", responseURL: first, user: "U0HUMAN")
                let privately = try #require(await relay.slack.next(responseURL: first)?.body)
                #expect(privately["response_type"]?.stringValue == "ephemeral")
                let post = try #require(Self.button("post_to_channel", in: privately)?["value"]?.stringValue)
                let again = try #require(Self.button("run_again", in: privately)?["value"]?.stringValue)
                #expect(again == "/fix teh cat --private")

                // Someone else cannot publish it.
                let stranger = relay.slack.makeResponseURL()
                _ = try await relay.click("post_to_channel", value: post, user: "U0OTHER", responseURL: stranger)
                let refused = try #require(await relay.slack.next(responseURL: stranger)?.body)
                #expect(refused["response_type"]?.stringValue == "ephemeral")
                #expect(refused["text"]?.stringValue?.contains("no longer available") == true)

                // The asker publishes it: in the channel, for everyone, without the button.
                let second = relay.slack.makeResponseURL()
                let clicked = try await relay.click("post_to_channel", value: post, user: "U0HUMAN", responseURL: second)
                #expect(clicked.status == .ok)
                let published = try #require(await relay.slack.next(responseURL: second)?.body)
                #expect(published["response_type"]?.stringValue == "in_channel")
                #expect(published["text"]?.stringValue == privately["text"]?.stringValue)
                #expect(Self.button("post_to_channel", in: published) == nil)

                // Run again asks the model again and answers at the click's response_url.
                let third = relay.slack.makeResponseURL()
                _ = try await relay.click("run_again", value: again, user: "U0HUMAN", responseURL: third)
                let rerun = try #require(await relay.slack.next(responseURL: third)?.body)
                #expect(rerun["text"]?.stringValue?.contains("teh cat") == true)
                #expect(await relay.tribunal.requestCount(path: Self.quick) == 2)
            }
        }
    }

    /// The path a response URL is POSTed to.
    static func path(of responseURL: String) -> String {
        String(responseURL[responseURL.range(of: "/response/")!.lowerBound...])
    }
}
