import Hummingbird
import HummingbirdTesting
import NIOCore
import RelayCore
import RelayPipeline
import RelayPlatform
import RelayTestSupport
import SlackAdapter
import Synchronization
import Testing

/// The Slack routes on a live loopback server, fed the recorded payloads signed as Slack signs
/// them: what Slack gets back at once, and what reaches the relay.
// The time limit only keeps a test waiting for an event that never comes from hanging the run.
@Suite("Slack HTTP routes with recorded payloads")
struct SlackHTTPRoutesTests {
    static let signingSecret = "routes-signing-secret-0123456789"

    /// The routes, the fake Web API behind them, and the inbox they hand events to.
    struct Harness {
        let client: any TestClientProtocol
        let web: SlackWebHarness
        let inbox: RecordingInbox
        let box: SlackSecretBox

        /// POSTs `body` to `path`, signed now with the routes' secret (or another one).
        func post(_ path: String, body: String, contentType: String, secret: String = signingSecret) async throws -> TestResponse {
            let now = SlackSigner.now()
            let headers: HTTPFields = [
                .contentType: contentType, SlackHeaders.requestTimestamp: String(now),
                SlackHeaders.signature: SlackSigner(signingSecret: secret).signature(body: body, timestamp: now),
            ]
            return try await client.execute(uri: path, method: .post, headers: headers, body: ByteBuffer(string: body))
        }

        func event(_ body: JSONValue) async throws -> TestResponse {
            try await post("/slack/events", body: SlackPayloads.body(body), contentType: "application/json")
        }
    }

    func withRoutes(_ body: @escaping @Sendable (Harness) async throws -> Void) async throws {
        try await withSlackWeb { web in
            let inbox = RecordingInbox()
            let box = SlackSecretBox(secret: Self.signingSecret)
            let inbound = SlackInbound(
                inbox: inbox, api: web.client, box: box, configuration: SlackConfiguration(signingSecret: Self.signingSecret, apiURL: web.fake.apiURL),
                logger: web.logs.logger)
            let router = Router()
            SlackHTTPRoutes(verifier: SlackRequestVerifier(signingSecret: Self.signingSecret), inbound: inbound).add(to: router)
            try await Application(router: router).test(.live) { client in
                try await body(Harness(client: client, web: web, inbox: inbox, box: box))
            }
        }
    }

    @Test func aSlashCommandIsAcknowledgedAtOnceAndRunsWithItsResponseURLSealed() async throws {
        try await withRoutes { harness in
            let url = harness.web.fake.makeResponseURL()
            let body = SlackPayloads.slashCommand(
                command: "/translate", text: "fr Good morning", responseURL: url, team: "T0E2E", channel: "C0E2E", user: "U0HUMAN",
                triggerID: "trigger-1")
            let response = try await harness.post("/slack/commands", body: body, contentType: "application/x-www-form-urlencoded")
            #expect(response.status == .ok)
            #expect(JSONValue.parse(response.body.readableBytesView) == ["response_type": "ephemeral", "text": "⏳ Working on it…"])

            let (event, route) = try #require(harness.inbox.submissions.first)
            #expect(event.team == "T0E2E")
            #expect(event.channel == "C0E2E")
            #expect(event.user == "U0HUMAN")
            #expect(event.text == "/translate fr Good morning")
            #expect(event.eventKey == "trigger:trigger-1")
            #expect(!route.address.contains(url), "the response_url is stored sealed")
            #expect(SlackAddress.decode(route.address)?.sealedResponseURL.flatMap(harness.box.open) == url)
        }
    }

    @Test func theHandshakeIsAnsweredWithItsChallenge() async throws {
        try await withRoutes { harness in
            let response = try await harness.event(SlackPayloads.urlVerification(challenge: "c-123"))
            #expect(response.status == .ok)
            #expect(JSONValue.parse(response.body.readableBytesView) == ["challenge": "c-123"])
            #expect(harness.inbox.submissions.isEmpty)
        }
    }

    @Test func aMentionRunsInItsThreadWithoutTheBotsMention() async throws {
        try await withRoutes { harness in
            let mention = SlackPayloads.appMention(
                text: "<@\(FakeSlackWebAPI.botUserID)> translate fr Hello", user: "U0HUMAN", channel: "C0E2E", ts: "1700000000.000100",
                eventID: "Ev0MENTION", team: "T0E2E", botUserID: FakeSlackWebAPI.botUserID)
            #expect(try await harness.event(mention).status == .ok)
            let (event, _) = try #require(harness.inbox.submissions.first)
            #expect(event.text == "translate fr Hello")
            #expect(event.thread == "1700000000.000100")
            #expect(event.eventKey == "Ev0MENTION")

            // Slack's notice that it drops events is acknowledged and runs nothing.
            #expect(try await harness.event(SlackPayloads.appRateLimited()).status == .ok)
            #expect(harness.inbox.submissions.count == 1)
        }
    }

    @Test func theTribunalReactionReadsTheMessageItWasPutOn() async throws {
        try await withRoutes { harness in
            harness.web.fake.seed(
                FakeSlackMessage(channel: "C0CLAIMS", ts: "1700000000.001000", text: "The Eiffel Tower is in &lt;Berlin&gt;", user: "U0AUTHOR"))
            let reaction = SlackPayloads.reactionAdded(
                reaction: "mag", user: "U0HUMAN", channel: "C0CLAIMS", ts: "1700000000.001000", itemUser: "U0AUTHOR",
                eventID: "Ev0MAG", team: "T0E2E")
            #expect(try await harness.event(reaction).status == .ok)
            // The message is read off the request path: wait for the event it becomes.
            let (event, _) = try #require(await harness.inbox.wait(count: 1).first)
            #expect(event.text == "/tribunal")
            #expect(event.repliedTo == "The Eiffel Tower is in <Berlin>")
            #expect(event.thread == "1700000000.001000")
            #expect(harness.web.fake.requests(path: "conversations.replies").count == 1)
        }
    }

    @Test func runAgainFromAButtonRunsTheCommandLineAgain() async throws {
        try await withRoutes { harness in
            let click = SlackPayloads.blockActions(
                actionID: "run_again", value: "/fix teh cat", user: "U0HUMAN", team: "T0E2E", channel: "C0E2E",
                responseURL: harness.web.fake.makeResponseURL(), triggerID: "trigger-2")
            let response = try await harness.post(
                "/slack/interactive", body: SlackPayloads.interactionForm(click), contentType: "application/x-www-form-urlencoded")
            #expect(response.status == .ok)
            let (event, _) = try #require(harness.inbox.submissions.first)
            #expect(event.text == "/fix teh cat")
            #expect(event.thread == "1548261000.000100", "in the thread of the message holding the button")
            #expect(event.eventKey == "trigger:trigger-2")
        }
    }

    @Test func aPayloadSignedWithAnotherSecretRunsNothing() async throws {
        try await withRoutes { harness in
            let body = SlackPayloads.slashCommand(responseURL: harness.web.fake.makeResponseURL())
            let response = try await harness.post(
                "/slack/commands", body: body, contentType: "application/x-www-form-urlencoded", secret: "not-the-secret")
            #expect(response.status == .unauthorized)
            #expect(harness.inbox.submissions.isEmpty)
        }
    }
}

/// The relay's inbox as the routes see it: records what they submit, and lets a test wait for
/// submissions made off the request path.
final class RecordingInbox: RelayInbox {
    private struct State {
        var submissions: [(Event, ReplyRoute)] = []
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    var submissions: [(Event, ReplyRoute)] { state.withLock { $0.submissions } }

    func submit(_ event: Event, route: ReplyRoute) async -> Submission {
        let ready = state.withLock { state in
            state.submissions.append((event, route))
            let count = state.submissions.count
            let ready = state.waiters.filter { $0.count <= count }.map(\.continuation)
            state.waiters.removeAll { $0.count <= count }
            return ready
        }
        ready.forEach { $0.resume() }
        return .accepted(ahead: 0)
    }

    func post(_ reply: Reply, route: ReplyRoute, onceAs key: String?, replacing: String?) async throws -> Bool { true }

    func outboxEntry(id: String) async throws -> OutboxEntry? { nil }

    /// Returns once `count` events have been submitted.
    func wait(count: Int) async -> [(Event, ReplyRoute)] {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.submissions.count >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if now { continuation.resume() }
        }
        return state.withLock { $0.submissions }
    }
}
