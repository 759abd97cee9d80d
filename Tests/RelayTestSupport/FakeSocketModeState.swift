import HummingbirdWebSocket
import NIOCore
import RelayCore

/// What a `FakeSocketModeServer` remembers and is told.
struct FakeSocketModeState: Sendable {
    struct Connection: Sendable {
        let id: Int
        let outbound: WebSocketOutboundWriter
        let channel: any Channel
        /// Whether a hello is due (hello was on when it opened).
        let expectsHello: Bool
        var greeted = false
        var isOpen = true
        var closingByServer = false
    }

    /// `ws://127.0.0.1:<port>`.
    let baseURL: String
    var connections: [Connection] = []
    /// Tickets handed out, with whether each was used: like Slack's, a URL is good once.
    var tickets: [String: Bool] = [:]
    var refuseNext = 0
    var refused = 0
    var sendsHello = true
    var acks: [FakeSocketModeAck] = []
    /// Text frames received, with their connection, oldest first.
    var received: [(connection: Int, text: String)] = []
    var timeline: [FakeSocketModeEvent] = []

    init(baseURL: String) {
        self.baseURL = baseURL
    }

    mutating func makeConnectionURL() -> String {
        let ticket = "fake-ticket-\(tickets.count + 1)"
        tickets[ticket] = false
        return "\(baseURL)/link/?ticket=\(ticket)&app_id=A0FAKE"
    }

    /// Whether a connection with `ticket` may upgrade; uses the ticket up.
    mutating func admit(ticket: String?) -> Bool {
        if refuseNext > 0 {
            refuseNext -= 1
            refused += 1
            return false
        }
        guard let ticket, tickets[ticket] == false else {
            refused += 1
            return false
        }
        tickets[ticket] = true
        return true
    }

    /// Records a new connection; returns its id and whether to greet it.
    mutating func open(outbound: WebSocketOutboundWriter, channel: any Channel) -> (id: Int, hello: Bool) {
        let id = connections.count + 1
        connections.append(Connection(id: id, outbound: outbound, channel: channel, expectsHello: sendsHello))
        timeline.append(.opened(id))
        return (id, sendsHello)
    }

    mutating func sent(_ type: String, on id: Int) {
        timeline.append(.sent(id, type: type))
        if type == "hello", let index = index(of: id) { connections[index].greeted = true }
    }

    mutating func receive(_ text: String, on id: Int) {
        received.append((id, text))
        guard let json = JSONValue.parse(Array(text.utf8)), let envelopeID = json["envelope_id"]?.stringValue else { return }
        acks.append(FakeSocketModeAck(connection: id, envelopeID: envelopeID, payload: json["payload"]))
        timeline.append(.acknowledged(id, envelopeID: envelopeID))
    }

    mutating func closed(_ id: Int) {
        guard let index = index(of: id), connections[index].isOpen else { return }
        connections[index].isOpen = false
        timeline.append(.closed(id, byServer: connections[index].closingByServer))
    }

    func index(of id: Int) -> Int? {
        connections.firstIndex { $0.id == id }
    }

    /// The open connection `id`, or the newest open one when `id` is nil.
    func target(_ id: Int?) -> Connection? {
        if let id { return connections.first { $0.id == id && $0.isOpen } }
        return connections.last { $0.isOpen }
    }

    var openIDs: [Int] { connections.filter(\.isOpen).map(\.id) }

    /// One line for timeout messages.
    var summary: String {
        "connections open \(openIDs) of \(connections.count), refused \(refused), acks \(acks.map(\.envelopeID)), timeline \(timeline)"
    }
}
