import Foundation
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

    /// Reads a text frame; nil when it is not a JSON object (`problem` then says what was wrong).
    public init?(text: String) {
        guard case .success(let message) = Self.read(text) else { return nil }
        self = message
    }

    /// Reads a text frame, or says why it cannot be read.
    public static func read(_ text: String) -> Result<SocketModeMessage, PayloadProblem> {
        do {
            return .success(try PayloadDecoding.json(SocketModeFrame.self, from: Array(text.utf8), as: "Slack Socket Mode frame").message)
        } catch {
            return .failure(error)
        }
    }

    /// Reads a decoded frame; nil when it is not a JSON object.
    public init?(json: JSONValue) {
        self.init(text: String(decoding: json.encoded(), as: UTF8.self))
    }
}

/// A Socket Mode frame as Slack sends it: `type`, and for an envelope its `envelope_id`,
/// `payload` (kept raw for the handler) and retry fields. Only a frame that is not a JSON object
/// fails to decode; a member of an unexpected type is read as absent, as a frame's kind is still
/// known from the rest.
struct SocketModeFrame: Decodable {
    var message: SocketModeMessage

    private enum CodingKeys: String, CodingKey {
        case type, reason, payload
        case envelopeID = "envelope_id"
        case retryAttempt = "retry_attempt"
        case retryReason = "retry_reason"
        case acceptsResponsePayload = "accepts_response_payload"
        case numConnections = "num_connections"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = container.lenient(String.self, .type) ?? ""
        if let envelopeID = container.lenient(String.self, .envelopeID), !envelopeID.isEmpty {
            let kind = SocketModeEnvelope.Kind(type)
            message = .envelope(
                SocketModeEnvelope(
                    type: kind,
                    envelopeID: envelopeID,
                    // Only logged and compared with 0; Slack retries an envelope a few times.
                    retryAttempt: UntrustedNumber.clamped(container.lenient(Double.self, .retryAttempt), to: 0...100, source: "slack", field: "retry_attempt")
                        .map {
                            Int($0)
                        } ?? 0,
                    retryReason: container.lenient(String.self, .retryReason).flatMap { $0.isEmpty ? nil : $0 },
                    acceptsResponsePayload: container.lenient(Bool.self, .acceptsResponsePayload) ?? false,
                    payload: container.lenient(JSONValue.self, .payload) ?? .null,
                    eventID: kind == .eventsAPI ? container.lenient(SocketModeEventsPayload.self, .payload)?.eventID : nil))
            return
        }
        switch type {
        case "hello":
            // An app may hold up to 10 connections; the count is only logged.
            message = .hello(
                numConnections: UntrustedNumber.checked(container.lenient(Double.self, .numConnections), in: 0...100, source: "slack", field: "num_connections")
                    .map {
                        Int($0)
                    })
        case "disconnect": message = .disconnect(reason: container.lenient(String.self, .reason) ?? "unknown")
        default: message = .other(type: type)
        }
    }
}

/// The one member of an `events_api` payload the driver reads itself (the rest is the handler's).
struct SocketModeEventsPayload: Decodable {
    var eventID: String?

    enum CodingKeys: String, CodingKey {
        case eventID = "event_id"
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
    /// `payload`, passed on unread (the handler decodes it as the HTTP routes decode a body).
    public var payload: JSONValue
    /// The Events API `event_id` inside an `events_api` payload: the same on every retry of
    /// one event, whatever its envelope.
    public let eventID: String?

    /// Creates an envelope; the driver does this for each one that arrives.
    public init(
        type: Kind, envelopeID: String, retryAttempt: Int = 0, retryReason: String? = nil,
        acceptsResponsePayload: Bool = false, payload: JSONValue
    ) {
        // What a test double builds: the payload read as a received frame's is.
        let eventID = type == .eventsAPI ? (try? JSONDecoder().decode(SocketModeEventsPayload.self, from: Data(payload.encoded())))?.eventID : nil
        self.init(
            type: type, envelopeID: envelopeID, retryAttempt: retryAttempt, retryReason: retryReason,
            acceptsResponsePayload: acceptsResponsePayload, payload: payload, eventID: eventID)
    }

    init(
        type: Kind, envelopeID: String, retryAttempt: Int, retryReason: String?, acceptsResponsePayload: Bool, payload: JSONValue,
        eventID: String?
    ) {
        self.type = type
        self.envelopeID = envelopeID
        self.retryAttempt = retryAttempt
        self.retryReason = retryReason
        self.acceptsResponsePayload = acceptsResponsePayload
        self.payload = payload
        self.eventID = eventID
    }

    /// The frame that acknowledges this envelope: `{"envelope_id":"…"}`, plus `payload` when
    /// one is given and Slack accepts one.
    public func acknowledgement(payload response: JSONValue? = nil) -> String {
        var members: [String: JSONValue] = ["envelope_id": .string(envelopeID)]
        if acceptsResponsePayload, let response { members["payload"] = response }
        return String(decoding: JSONValue.object(members).encoded(), as: UTF8.self)
    }
}
