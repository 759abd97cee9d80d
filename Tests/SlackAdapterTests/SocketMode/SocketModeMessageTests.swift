import RelayCore
import RelayTestSupport
import SlackAdapter
import Testing

@Suite("Socket Mode frames")
struct SocketModeMessageTests {
    static func frame(_ json: JSONValue) -> String {
        SlackPayloads.body(json)
    }

    @Test func readsHelloAndDisconnect() {
        #expect(SocketModeMessage(text: Self.frame(SlackPayloads.socketModeHello())) == .hello(numConnections: 2))
        #expect(SocketModeMessage(text: Self.frame(SlackPayloads.socketModeDisconnect())) == .disconnect(reason: "refresh_requested"))
        #expect(SocketModeMessage(text: Self.frame(SlackPayloads.socketModeDisconnect(reason: "warning"))) == .disconnect(reason: "warning"))
        #expect(SocketModeMessage(json: SlackPayloads.socketModeDisconnect().replacing(["reason": nil])) == .disconnect(reason: "unknown"))
        #expect(SocketModeMessage(json: SlackPayloads.socketModeHello().replacing(["type": "novel"])) == .other(type: "novel"))
        #expect(SocketModeMessage(text: "not json") == nil)
        #expect(SocketModeMessage(text: "[1,2]") == nil)
    }

    @Test func readsAnEnvelopeKeepingThePayloadRaw() throws {
        let frame = SlackPayloads.socketModeEnvelope(
            type: "events_api", envelopeID: "57d6a792-4d35-4d0b-b6aa-3361493e1caf",
            payload: SlackPayloads.appMention(eventID: "Ev08MFMKH6"), retryAttempt: 1)
        guard case .envelope(let envelope) = SocketModeMessage(text: Self.frame(frame)) else {
            Issue.record("not an envelope")
            return
        }
        #expect(envelope.type == .eventsAPI)
        #expect(envelope.envelopeID == "57d6a792-4d35-4d0b-b6aa-3361493e1caf")
        #expect(envelope.retryAttempt == 1)
        #expect(envelope.retryReason == "timeout")
        #expect(!envelope.acceptsResponsePayload)
        #expect(envelope.eventID == "Ev08MFMKH6")
        #expect(envelope.payload == SlackPayloads.appMention(eventID: "Ev08MFMKH6"))

        // The payload is the Events API body itself, read as the HTTP route reads one.
        guard case .eventCallback(let callback) = try SlackEventsRequest.decode(envelope.payload.encoded()) else {
            Issue.record("not an event_callback")
            return
        }
        #expect(callback.eventID == "Ev08MFMKH6")
        #expect(callback.teamID == "T061EG9R6")
    }

    @Test func slashCommandsAndInteractionsAreEnvelopesToo() throws {
        let slash = SlackPayloads.socketModeEnvelope(
            type: "slash_commands", envelopeID: "e2", payload: SlackPayloads.slashCommandJSON(command: "/ask", text: "why"))
        guard case .envelope(let envelope) = SocketModeMessage(text: Self.frame(slash)) else {
            Issue.record("not an envelope")
            return
        }
        #expect(envelope.type == .slashCommands)
        #expect(envelope.acceptsResponsePayload)
        #expect(envelope.retryReason == nil, "an empty reason is no reason")
        #expect(envelope.eventID == nil)
        #expect(try SlackSlashCommand.decode(json: envelope.payload.encoded()).commandLine() == "/ask why")

        // Without retry fields at all, a first delivery.
        let bare = SlackPayloads.socketModeEnvelope(type: "interactive", envelopeID: "e3", payload: SlackPayloads.blockActions())
            .replacing(["retry_attempt": nil, "retry_reason": nil])
        guard case .envelope(let interactive) = SocketModeMessage(json: bare) else {
            Issue.record("not an envelope")
            return
        }
        #expect(interactive.type == .interactive)
        #expect(interactive.retryAttempt == 0)
        #expect(SocketModeEnvelope.Kind("something_else") == .other("something_else"))
        #expect(SocketModeEnvelope.Kind("something_else").rawValue == "something_else")
    }

    @Test func theAcknowledgementNamesTheEnvelopeAndCarriesAPayloadOnlyWhenAllowed() {
        let plain = SocketModeEnvelope(type: .eventsAPI, envelopeID: "e\"1", payload: [:])
        #expect(plain.acknowledgement() == #"{"envelope_id":"e\"1"}"#)
        #expect(plain.acknowledgement(payload: ["text": "hi"]) == #"{"envelope_id":"e\"1"}"#)
        let slash = SocketModeEnvelope(type: .slashCommands, envelopeID: "e2", acceptsResponsePayload: true, payload: [:])
        #expect(slash.acknowledgement(payload: ["text": "working…"]) == #"{"envelope_id":"e2","payload":{"text":"working…"}}"#)
    }

    @Test func theDeduplicatorForgetsTheOldestFirst() {
        var seen = SocketModeDeduplicator(capacity: 2)
        let a = SocketModeEnvelope(type: .interactive, envelopeID: "a", payload: [:])
        let b = SocketModeEnvelope(type: .interactive, envelopeID: "b", payload: [:])
        let c = SocketModeEnvelope(type: .interactive, envelopeID: "c", payload: [:])
        #expect(seen.isFirstDelivery(of: a) == true)
        #expect(seen.isFirstDelivery(of: a) == false)
        #expect(seen.isFirstDelivery(of: b) == true)
        #expect(seen.isFirstDelivery(of: c) == true)  // forgets a
        #expect(seen.isFirstDelivery(of: a) == true)
        #expect(seen.isFirstDelivery(of: c) == false)
    }
}
