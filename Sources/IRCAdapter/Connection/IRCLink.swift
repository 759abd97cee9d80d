import RelayCore
import RelayPlatform
import Synchronization

/// The relay's one IRC connection as delivery and the inbound side see it: where a reply's
/// lines go (`ConfirmedLink`: a send returns once the server answered a `PING` sent after its
/// lines), and who the relay is and who is in each channel right now.
final class IRCLink: Sendable {
    typealias Batch = ConfirmedLink<IRCMessage>.Batch
    typealias SendError = ConfirmedLink<IRCMessage>.SendError

    /// Who the relay is on the server, and the channels' members.
    struct Presence: Sendable, Hashable {
        var nick: String
        /// By folded channel name: members' nicks as written, the relay's aside.
        var members: [String: Set<String>]
    }

    let lines: ConfirmedLink<IRCMessage>
    private let current: Mutex<Presence>

    init(nick: String, clock: any RelayClock, confirmationTimeout: Duration = .seconds(120)) {
        self.lines = ConfirmedLink(clock: clock, confirmationTimeout: confirmationTimeout)
        self.current = Mutex(Presence(nick: nick, members: [:]))
    }

    var presence: Presence { current.withLock { $0 } }

    var isConnected: Bool { lines.isConnected }

    func attach(_ queue: AsyncStream<Batch>.Continuation) -> Int { lines.attach(queue) }

    func detach(_ id: Int) { lines.detach(id) }

    func confirmed(upTo sequence: Int) { lines.confirmed(upTo: sequence) }

    /// Says goodbye on the current session (a graceful shutdown): the server then closes it.
    func quit() { lines.sendUnconfirmed([IRCMessage("QUIT", ["Rhea Relay is restarting"])]) }

    func update(_ presence: Presence) { current.withLock { $0 = presence } }

    /// Sends `lines` on the current session and returns once the server confirmed them.
    func send(_ messages: [IRCMessage]) async throws(SendError) { try await lines.send(messages) }
}
