public import RelayCore

/// An envelope for `FakeSocketModeServer.send(envelope:to:)`, in Slack's shape.
public struct FakeSocketModeEnvelope: Sendable, Hashable {
    /// `events_api`, `slash_commands` or `interactive`.
    public var type: String
    public var envelopeID: String
    public var payload: JSONValue
    public var retryAttempt: Int
    public var retryReason: String?
    public var acceptsResponsePayload: Bool

    public init(
        type: String, envelopeID: String, payload: JSONValue, retryAttempt: Int = 0, retryReason: String? = nil,
        acceptsResponsePayload: Bool = false
    ) {
        self.type = type
        self.envelopeID = envelopeID
        self.payload = payload
        self.retryAttempt = retryAttempt
        self.retryReason = retryReason
        self.acceptsResponsePayload = acceptsResponsePayload
    }

    /// The frame as Slack sends it.
    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "type": .string(type), "envelope_id": .string(envelopeID), "payload": payload,
            "accepts_response_payload": .bool(acceptsResponsePayload), "retry_attempt": .int(retryAttempt),
        ]
        members["retry_reason"] = .string(retryReason ?? "")
        return .object(members)
    }

    /// An `app_mention` event in an `events_api` envelope.
    public static func appMention(
        envelopeID: String, eventID: String, text: String = "<@U0FAKEBOT> hello", channel: String = "C0FAKE",
        user: String = "U0HUMAN", retryAttempt: Int = 0
    ) -> FakeSocketModeEnvelope {
        let payload: JSONValue = [
            "token": "legacy-verification-token", "team_id": "T0FAKE", "api_app_id": "A0FAKE",
            "type": "event_callback", "event_id": .string(eventID), "event_time": 1_700_000_000,
            "event": [
                "type": "app_mention", "user": .string(user), "text": .string(text), "ts": "1700000000.000050",
                "channel": .string(channel), "event_ts": "1700000000.000050",
            ],
        ]
        return FakeSocketModeEnvelope(
            type: "events_api", envelopeID: envelopeID, payload: payload, retryAttempt: retryAttempt,
            retryReason: retryAttempt > 0 ? "timeout" : nil)
    }

    /// A slash command in a `slash_commands` envelope (its payload has the form fields).
    public static func slashCommand(
        envelopeID: String, command: String = "/ask", text: String = "hello", responseURL: String,
        channel: String = "C0FAKE", user: String = "U0HUMAN"
    ) -> FakeSocketModeEnvelope {
        let payload: JSONValue = [
            "token": "legacy-verification-token", "team_id": "T0FAKE", "team_domain": "fake",
            "channel_id": .string(channel), "channel_name": "general", "user_id": .string(user), "user_name": "human",
            "command": .string(command), "text": .string(text), "api_app_id": "A0FAKE",
            "response_url": .string(responseURL), "trigger_id": "1.2.3",
        ]
        return FakeSocketModeEnvelope(
            type: "slash_commands", envelopeID: envelopeID, payload: payload, acceptsResponsePayload: true)
    }
}
