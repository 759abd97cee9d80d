import RelayCore
import RelayPlatform
import Synchronization

/// What the relay writes on its stream: a stanza, or the stream's end (a graceful shutdown).
enum XMPPWrite: Sendable, Hashable {
    case stanza(XMLElement)
    case endStream
}

/// The relay's one XMPP session as delivery and the inbound side see it: where a reply's
/// stanzas go (`ConfirmedLink`: a send returns once the server answered a ping sent after
/// them), requests that wait for their answer (service discovery), and the relay's nick in each
/// room.
final class XMPPLink: Sendable {
    typealias Batch = ConfirmedLink<XMPPWrite>.Batch
    typealias SendError = ConfirmedLink<XMPPWrite>.SendError

    private struct State {
        var nicks: [String: String] = [:]
        var bound: JID?
        var nextQuery = 1
        var queries: [String: CheckedContinuation<XMLElement?, Never>] = [:]
    }

    let stanzas: ConfirmedLink<XMPPWrite>
    let clock: any RelayClock
    private let state = Mutex(State())

    init(clock: any RelayClock, confirmationTimeout: Duration = .seconds(120)) {
        self.stanzas = ConfirmedLink(clock: clock, confirmationTimeout: confirmationTimeout)
        self.clock = clock
    }

    var isConnected: Bool { stanzas.isConnected }

    /// The relay's nick in `room` (a bare room JID) while joined.
    func nick(in room: String) -> String? { state.withLock { $0.nicks[room] } }

    var bound: JID? { state.withLock { $0.bound } }

    // MARK: The session's side

    func attach(_ queue: AsyncStream<Batch>.Continuation, as jid: JID) -> Int {
        state.withLock { $0.bound = jid }
        return stanzas.attach(queue)
    }

    /// The session `id` ended: its sends and requests that wait fail.
    func detach(_ id: Int) {
        stanzas.detach(id)
        let waiting = state.withLock { state in
            state.nicks = [:]
            defer { state.queries = [:] }
            return Array(state.queries.values)
        }
        for continuation in waiting { continuation.resume(returning: nil) }
    }

    func joined(_ room: String, as nick: String?) { state.withLock { $0.nicks[room] = nick } }

    /// An answer to a request with `id`: a delivery's confirmation (`rhea-N`) or a query's.
    func answered(id: String, _ answer: XMLElement) {
        if let sequence = Self.sequence(ofID: id) {
            stanzas.confirmed(upTo: sequence)
            return
        }
        let waiting = state.withLock { $0.queries.removeValue(forKey: id) }
        waiting?.resume(returning: answer)
    }

    /// Ends the stream politely (a graceful shutdown): unavailable, then `</stream:stream>`.
    func endStream() {
        stanzas.sendUnconfirmed([.stanza(XMLElement(name: "presence", namespace: XMPPNamespace.client, attributes: ["type": "unavailable"])), .endStream])
    }

    static func confirmationID(_ sequence: Int) -> String { "rhea-\(sequence)" }

    static func sequence(ofID id: String) -> Int? {
        guard id.hasPrefix("rhea-") else { return nil }
        return Int(id.dropFirst(5))
    }

    // MARK: Delivery's and the inbound side's

    /// Sends `stanzas` and returns once the server confirmed them.
    func send(_ elements: [XMLElement]) async throws(SendError) { try await stanzas.send(elements.map { .stanza($0) }) }

    /// Sends the request `make(id)` and waits up to `timeout` for its answer; nil without one.
    func query(timeout: Duration = .seconds(5), _ make: (String) -> XMLElement) async -> XMLElement? {
        let id = state.withLock { state in
            defer { state.nextQuery += 1 }
            return "q-\(state.nextQuery)"
        }
        let request = make(id)
        return await withTaskGroup(of: XMLElement?.self) { group in
            group.addTask {
                await withCheckedContinuation { (continuation: CheckedContinuation<XMLElement?, Never>) in
                    self.state.withLock { $0.queries[id] = continuation }
                    if !self.stanzas.sendUnconfirmed([.stanza(request)]) {
                        let waiting = self.state.withLock { $0.queries.removeValue(forKey: id) }
                        waiting?.resume(returning: nil)
                    }
                }
            }
            group.addTask { [clock] in
                try? await clock.sleep(for: timeout)
                let waiting = self.state.withLock { $0.queries.removeValue(forKey: id) }
                waiting?.resume(returning: nil)
                return nil
            }
            // The request's task ends when its continuation is resumed: by the answer, the end
            // of the session or the timeout.
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
