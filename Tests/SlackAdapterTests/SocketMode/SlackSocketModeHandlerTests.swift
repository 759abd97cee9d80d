import Logging
import RelayCore
import RelayPipeline
import RelayTestSupport
import SlackAdapter
import Synchronization
import Testing

/// What the Socket Mode handler tells the client to acknowledge: an envelope is acknowledged
/// once what it asks for is stored (or can never be), never when the store refused it.
@Suite("Socket Mode handler and the inbox")
struct SlackSocketModeHandlerTests {
    /// An inbox whose store is down: every submission fails; replies (the person being told) work.
    final class FailingInbox: RelayInbox {
        let posted = Mutex<[Reply]>([])

        struct StoreDown: Error {}

        func submit(_ event: Event, route: ReplyRoute) async throws -> Submission { throw StoreDown() }

        func post(_ reply: Reply, route: ReplyRoute, onceAs key: String?, replacing: String?) async throws -> Bool {
            posted.withLock { $0.append(reply) }
            return true
        }

        func outboxEntry(id: String) async throws -> OutboxEntry? { nil }
    }

    /// A handler as the relay makes one against the fake Web API (`web`), whose response URLs are
    /// on its own origin, the configured `SLACK_API_URL`'s.
    func handler(_ inbox: any RelayInbox, web: SlackWebHarness) -> SlackSocketModeHandler {
        let (api, logger) = (web.client, web.logs.logger)
        let configuration = SlackConfiguration(signingSecret: "secret", apiURL: web.fake.apiURL)
        let inbound = SlackInbound(inbox: inbox, api: api, box: SlackSecretBox(secret: "secret"), configuration: configuration, logger: logger)
        return SlackSocketModeHandler(inbound: inbound, logger: logger)
    }

    func envelope(_ type: String, _ id: String, _ payload: JSONValue) throws -> SocketModeEnvelope {
        guard case .envelope(let envelope)? = SocketModeMessage(json: SlackPayloads.socketModeEnvelope(type: type, envelopeID: id, payload: payload))
        else { throw EventuallyTimedOut(what: "an envelope") }
        return envelope
    }

    @Test func aStoredMentionIsAcknowledgedAndOneTheStoreRefusedIsNot() async throws {
        try await withSlackWeb { web in
            let mention = try envelope("events_api", "env-1", SlackPayloads.appMention(text: "<@U0FAKEBOT> /fix teh", eventID: "Ev1"))
            let recording = RecordingInbox()
            #expect(await handler(recording, web: web).handle(mention))
            #expect(recording.submissions.map(\.0.eventKey) == ["Ev1"])

            #expect(await !handler(FailingInbox(), web: web).handle(mention))
            #expect(web.logs.text.contains("not acknowledged, so Slack sends it again"))
        }
    }

    @Test func aSlashCommandTheStoreRefusedIsAcknowledgedAndThePersonIsTold() async throws {
        try await withSlackWeb { web in
            let failing = FailingInbox()
            let slash = try envelope(
                "slash_commands", "env-2", SlackPayloads.slashCommandJSON(text: "fix teh", responseURL: web.fake.makeResponseURL()))
            #expect(await handler(failing, web: web).handle(slash))
            #expect(failing.posted.withLock { $0 }.map(\.body).first?.contains("could not accept this command") == true)
        }
    }

    @Test func anUnreadablePayloadIsAcknowledgedSinceItWouldOnlyFailAgain() async throws {
        try await withSlackWeb { web in
            let broken = try envelope("events_api", "env-3", ["type": "event_callback", "event": "not an object"])
            #expect(await handler(FailingInbox(), web: web).handle(broken))
            #expect(web.logs.text.contains("platform payload dropped: it does not decode"))
            #expect(web.logs.text.contains("Events API body"), "the log names what could not be read")
        }
    }
}
