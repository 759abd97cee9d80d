public import RelayCore

/// One frame a Socket Mode server sends, read.
public enum SocketModeMessage: Sendable, Hashable {
    /// `{"type":"hello","num_connections":N,…}`: the connection is ready.
    case hello(numConnections: Int?)
    /// `{"type":"disconnect","reason":"refresh_requested"|"warning"|…}`: this connection will
    /// go away; open another.
    case disconnect(reason: String)
    /// Anything with an `envelope_id`: to acknowledge at once and hand on.
    case envelope(SocketModeEnvelope)
    /// Some other message, ignored.
    case other(type: String)

    /// Reads a text frame; nil when it is not a JSON object.
    public init?(text: String) {
        guard let json = JSONValue.parse(Array(text.utf8)) else { return nil }
        self.init(json: json)
    }

    /// Reads a decoded frame; nil when it is not a JSON object.
    public init?(json: JSONValue) {
        guard json.objectValue != nil else { return nil }
        let type = json["type"]?.stringValue ?? ""
        if let envelopeID = json["envelope_id"]?.stringValue, !envelopeID.isEmpty {
            self = .envelope(
                SocketModeEnvelope(
                    type: .init(type),
                    envelopeID: envelopeID,
                    // Only logged and compared with 0; Slack retries an envelope a few times.
                    retryAttempt: UntrustedNumber.clamped(json["retry_attempt"]?.doubleValue, to: 0...100, source: "slack", field: "retry_attempt").map {
                        Int($0)
                    } ?? 0,
                    retryReason: json["retry_reason"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 },
                    acceptsResponsePayload: json["accepts_response_payload"]?.boolValue ?? false,
                    payload: json["payload"] ?? .null))
            return
        }
        switch type {
        case "hello":
            // An app may hold up to 10 connections; the count is only logged.
            self = .hello(
                numConnections: UntrustedNumber.checked(json["num_connections"]?.doubleValue, in: 0...100, source: "slack", field: "num_connections").map {
                    Int($0)
                })
        case "disconnect": self = .disconnect(reason: json["reason"]?.stringValue ?? "unknown")
        default: self = .other(type: type)
        }
    }
}

/// One Socket Mode envelope: an event, a slash command or an interaction, as Slack wraps it.
///
/// The driver acknowledges it before handing it on, so a handler only decides what to do with
/// `payload`, which is kept raw: `SlackSocketModeHandler` decodes it as the HTTP routes decode
/// a request body.
public struct SocketModeEnvelope: Sendable, Hashable {
    /// What the payload holds.
    public enum Kind: Sendable, Hashable, CustomStringConvertible {
        /// `events_api`: the payload is an Events API `event_callback` body.
        case eventsAPI
        /// `slash_commands`: the payload holds a slash command's fields.
        case slashCommands
        /// `interactive`: the payload is an interaction (button, shortcut, modal).
        case interactive
        /// A type this code does not know yet.
        case other(String)

        /// The kind Slack calls `rawValue`.
        public init(_ rawValue: String) {
            switch rawValue {
            case "events_api": self = .eventsAPI
            case "slash_commands": self = .slashCommands
            case "interactive": self = .interactive
            default: self = .other(rawValue)
            }
        }

        /// Slack's name for the kind.
        public var rawValue: String {
            switch self {
            case .eventsAPI: "events_api"
            case .slashCommands: "slash_commands"
            case .interactive: "interactive"
            case .other(let value): value
            }
        }

        public var description: String { rawValue }
    }

    /// `type`.
    public var type: Kind
    /// `envelope_id`: what the acknowledgement names.
    public var envelopeID: String
    /// `retry_attempt`: 0 for a first delivery, 1… when Slack sends it again.
    public var retryAttempt: Int
    /// `retry_reason` on a retry (`timeout`…), else nil.
    public var retryReason: String?
    /// `accepts_response_payload`: whether the acknowledgement may carry a response (for a
    /// slash command, the immediate message).
    public var acceptsResponsePayload: Bool
    /// `payload`, untouched.
    public var payload: JSONValue

    /// Creates an envelope; the driver does this for each one that arrives.
    public init(
        type: Kind, envelopeID: String, retryAttempt: Int = 0, retryReason: String? = nil,
        acceptsResponsePayload: Bool = false, payload: JSONValue
    ) {
        self.type = type
        self.envelopeID = envelopeID
        self.retryAttempt = retryAttempt
        self.retryReason = retryReason
        self.acceptsResponsePayload = acceptsResponsePayload
        self.payload = payload
    }

    /// The Events API `event_id` inside an `events_api` payload: the same on every retry of
    /// one event, whatever its envelope.
    public var eventID: String? {
        guard type == .eventsAPI else { return nil }
        return payload["event_id"]?.stringValue
    }

    /// The frame that acknowledges this envelope: `{"envelope_id":"…"}`, plus `payload` when
    /// one is given and Slack accepts one.
    public func acknowledgement(payload response: JSONValue? = nil) -> String {
        var members: [String: JSONValue] = ["envelope_id": .string(envelopeID)]
        if acceptsResponsePayload, let response { members["payload"] = response }
        return String(decoding: JSONValue.object(members).encoded(), as: UTF8.self)
    }
}
