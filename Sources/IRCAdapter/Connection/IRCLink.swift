import RelayCore
import Synchronization

/// The relay's one IRC connection as delivery and the inbound side see it: where a reply's
/// lines go, and who the relay is and who is in each channel right now. The connection
/// (`IRCClient`) attaches each session once the server has welcomed it and detaches it when it
/// ends; meanwhile nothing can be sent and deliveries wait (the outbox tries again).
///
/// **Confirmed, not just written.** A line written to a socket that then breaks may never have
/// reached the server: `send` returns only when the server has answered a `PING` sent after the
/// lines (a server handles one client's lines in order, so its `PONG` says every line before it
/// was taken). A session that ends first fails the send, and the outbox sends it again on the
/// next connection: a reply is lost only if the server lost it after taking it.
final class IRCLink: Sendable {
    /// One message's lines, and the confirmation they wait for.
    struct Batch: Sendable {
        var lines: [IRCMessage]
        var sequence: Int
    }

    enum SendError: Error, Sendable, Hashable {
        /// No session: connecting, reconnecting, or this replica does not hold the connection.
        case notConnected
        /// The session ended before the server confirmed the lines.
        case connectionLost
        /// No confirmation in time: the server stalls.
        case unconfirmed
    }

    /// Who the relay is on the server, and the channels' members.
    struct Presence: Sendable, Hashable {
        var nick: String
        /// By folded channel name: members' nicks as written, the relay's aside.
        var members: [String: Set<String>]
    }

    private struct Session {
        let id: Int
        let queue: AsyncStream<Batch>.Continuation
    }

    private struct State {
        var session: Session?
        var nextSession = 1
        var nextSequence = 1
        var waiting: [Int: (session: Int, continuation: CheckedContinuation<Void, any Error>)] = [:]
        var presence: Presence
    }

    private let state: Mutex<State>
    let clock: any RelayClock
    /// How long a send waits for its confirmation: a queue of lines paced at one a second takes
    /// a while; a server silent for this long is gone.
    let confirmationTimeout: Duration

    init(nick: String, clock: any RelayClock, confirmationTimeout: Duration = .seconds(120)) {
        self.state = Mutex(State(presence: Presence(nick: nick, members: [:])))
        self.clock = clock
        self.confirmationTimeout = confirmationTimeout
    }

    var presence: Presence { state.withLock { $0.presence } }

    var isConnected: Bool { state.withLock { $0.session != nil } }

    // MARK: The session's side

    /// A welcomed session starts taking batches from `queue`; returns its id.
    func attach(_ queue: AsyncStream<Batch>.Continuation) -> Int {
        state.withLock { state in
            let id = state.nextSession
            state.nextSession += 1
            state.session = Session(id: id, queue: queue)
            return id
        }
    }

    /// The session `id` ended: its sends that wait fail, to be sent again.
    func detach(_ id: Int) {
        let failed = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            if state.session?.id == id {
                state.session?.queue.finish()
                state.session = nil
            }
            let mine = state.waiting.filter { $0.value.session == id }
            for key in mine.keys { state.waiting[key] = nil }
            return mine.values.map(\.continuation)
        }
        for continuation in failed { continuation.resume(throwing: SendError.connectionLost) }
    }

    /// The server answered the `PING` of `sequence`: every send up to it was taken.
    func confirmed(upTo sequence: Int) {
        let done = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            let due = state.waiting.filter { $0.key <= sequence }
            for key in due.keys { state.waiting[key] = nil }
            return due.values.map(\.continuation)
        }
        for continuation in done { continuation.resume() }
    }

    /// Says goodbye on the current session (a graceful shutdown): the server then closes it.
    func quit() {
        state.withLock { state in
            _ = state.session?.queue.yield(Batch(lines: [IRCMessage("QUIT", ["Rhea Relay is restarting"])], sequence: 0))
        }
    }

    func update(_ presence: Presence) {
        state.withLock { $0.presence = presence }
    }

    // MARK: Delivery's side

    /// Sends `lines` on the current session and returns once the server confirmed them.
    func send(_ lines: [IRCMessage]) async throws(SendError) {
        guard !lines.isEmpty else { return }
        let sequence = state.withLock { state -> Int? in
            guard state.session != nil else { return nil }
            let sequence = state.nextSequence
            state.nextSequence += 1
            return sequence
        }
        guard let sequence else { throw .notConnected }
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                        let queued = self.state.withLock { state -> Bool in
                            guard let session = state.session else { return false }
                            state.waiting[sequence] = (session.id, continuation)
                            if case .enqueued = session.queue.yield(Batch(lines: lines, sequence: sequence)) { return true }
                            state.waiting[sequence] = nil
                            return false
                        }
                        if !queued { continuation.resume(throwing: SendError.notConnected) }
                    }
                }
                group.addTask { [clock, confirmationTimeout] in
                    try await clock.sleep(for: confirmationTimeout)
                    throw SendError.unconfirmed
                }
                do {
                    try await group.next()
                    group.cancelAll()
                } catch {
                    // The waiting task ends only once its continuation is resumed: before the
                    // group can end.
                    self.abandon(sequence)
                    group.cancelAll()
                    throw error
                }
            }
        } catch let error as SendError {
            throw error
        } catch {
            throw .unconfirmed
        }
    }

    /// Gives up waiting for `sequence` (timed out or cancelled).
    private func abandon(_ sequence: Int) {
        let continuation = state.withLock { $0.waiting.removeValue(forKey: sequence)?.continuation }
        continuation?.resume(throwing: SendError.unconfirmed)
    }
}
