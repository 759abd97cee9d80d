import RelayCore
import SlackAdapter
import Testing

@Suite("Socket Mode frames")
struct SocketModeMessageTests {
    @Test func readsHelloAndDisconnect() {
        let hello = #"{"type":"hello","num_connections":2,"debug_info":{"host":"applink-1","approximate_connection_time":18060},"connection_info":{"app_id":"A1"}}"#
        #expect(SocketModeMessage(text: hello) == .hello(numConnections: 2))
        #expect(SocketModeMessage(text: #"{"type":"disconnect","reason":"refresh_requested","debug_info":{"host":"x"}}"#)
            == .disconnect(reason: "refresh_requested"))
        #expect(SocketModeMessage(text: #"{"type":"disconnect"}"#) == .disconnect(reason: "unknown"))
        #expect(SocketModeMessage(text: #"{"type":"novel"}"#) == .other(type: "novel"))
        #expect(SocketModeMessage(text: "not json") == nil)
        #expect(SocketModeMessage(text: "[1,2]") == nil)
    }

    @Test func readsAnEnvelopeKeepingThePayloadRaw() throws {
        let text = #"""
            {"envelope_id":"57d6a792-4d35-4d0b-b6aa-3361493e1caf","payload":{"token":"t","team_id":"T1","event":{"type":"app_mention","text":"<@U1> hi","ts":"1.2"},"type":"event_callback","event_id":"Ev08MFMKH6"},"type":"events_api","accepts_response_payload":false,"retry_attempt":1,"retry_reason":"timeout"}
            """#
        guard case .envelope(let envelope) = SocketModeMessage(text: text) else {
            Issue.record("not an envelope")
            return
        }
        #expect(envelope.type == .eventsAPI)
        #expect(envelope.envelopeID == "57d6a792-4d35-4d0b-b6aa-3361493e1caf")
        #expect(envelope.retryAttempt == 1)
        #expect(envelope.retryReason == "timeout")
        #expect(!envelope.acceptsResponsePayload)
        #expect(envelope.eventID == "Ev08MFMKH6")
        #expect(envelope.payload["event"]?["text"] == "<@U1> hi")
        #expect(envelope.payload["team_id"] == "T1")
    }

    @Test func slashCommandsAndInteractionsAreEnvelopesToo() {
        let slash = #"{"envelope_id":"e2","type":"slash_commands","accepts_response_payload":true,"payload":{"command":"/ask","text":"why"},"retry_attempt":0,"retry_reason":""}"#
        guard case .envelope(let envelope) = SocketModeMessage(text: slash) else {
            Issue.record("not an envelope")
            return
        }
        #expect(envelope.type == .slashCommands)
        #expect(envelope.acceptsResponsePayload)
        #expect(envelope.retryReason == nil, "an empty reason is no reason")
        #expect(envelope.eventID == nil)
        guard case .envelope(let interactive) = SocketModeMessage(text: #"{"envelope_id":"e3","type":"interactive","payload":{"type":"block_actions"}}"#) else {
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
