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
                    retryAttempt: json["retry_attempt"]?.intValue ?? 0,
                    retryReason: json["retry_reason"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 },
                    acceptsResponsePayload: json["accepts_response_payload"]?.boolValue ?? false,
                    payload: json["payload"] ?? .null))
            return
        }
        switch type {
        case "hello": self = .hello(numConnections: json["num_connections"]?.intValue)
        case "disconnect": self = .disconnect(reason: json["reason"]?.stringValue ?? "unknown")
        default: self = .other(type: type)
        }
    }
}
