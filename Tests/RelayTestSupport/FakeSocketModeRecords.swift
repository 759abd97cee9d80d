public import RelayCore

/// An acknowledgement a `FakeSocketModeServer` received.
public struct FakeSocketModeAck: Sendable, Hashable {
    /// The connection it came on.
    public var connection: Int
    public var envelopeID: String
    /// The response payload, when the client sent one.
    public var payload: JSONValue?

    public init(connection: Int, envelopeID: String, payload: JSONValue? = nil) {
        self.connection = connection
        self.envelopeID = envelopeID
        self.payload = payload
    }
}

/// Something that happened on a `FakeSocketModeServer`, in order.
public enum FakeSocketModeEvent: Sendable, Hashable {
    /// A client connected (connections are numbered from 1).
    case opened(Int)
    /// The server sent a frame of this `type` (`hello`, `disconnect`, `events_api`…).
    case sent(Int, type: String)
    /// An acknowledgement arrived.
    case acknowledged(Int, envelopeID: String)
    /// The connection ended; `byServer` when the fake closed it (`closeAbruptly`).
    case closed(Int, byServer: Bool)
}
