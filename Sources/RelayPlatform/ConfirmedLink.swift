public import RelayCore
import Synchronization

/// A platform's one socket as delivery sees it (IRC, XMPP): where a reply's items go, and when
/// the server has taken them. The connection attaches each session once it is ready to send and
/// detaches it when it ends; meanwhile nothing can be sent and deliveries wait (the outbox tries
/// again).
///
/// **Confirmed, not just written.** An item written to a socket that then breaks may never have
/// reached the server: `send` returns only when the server has answered a request the session
/// sends after the items (IRC's `PING`, XMPP's ping `iq`; a server handles one client's input in
/// order, so its answer says every item before it was taken). A session that ends first fails
/// the send, and the outbox sends it again on the next connection: a reply is lost only if the
/// server lost it after taking it.
public final class ConfirmedLink<Item: Sendable>: Sendable {
    /// One message's items, and the confirmation they wait for (`sequence` 0: none).
    public struct Batch: Sendable {
        public var items: [Item]
        public var sequence: Int

        public init(items: [Item], sequence: Int) {
            self.items = items
            self.sequence = sequence
        }
    }

    public enum SendError: Error, Sendable, Hashable {
        /// No session: connecting, reconnecting, or this replica does not hold the connection.
        case notConnected
        /// The session ended before the server confirmed the items.
        case connectionLost
        /// No confirmation in time: the server stalls.
        case unconfirmed
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
    }

    private let state = Mutex(State())
    let clock: any RelayClock
    /// How long a send waits for its confirmation: a queue of paced lines takes a while; a
    /// server silent for this long is gone.
    let confirmationTimeout: Duration

    public init(clock: any RelayClock, confirmationTimeout: Duration = .seconds(120)) {
        self.clock = clock
        self.confirmationTimeout = confirmationTimeout
    }

    public var isConnected: Bool { state.withLock { $0.session != nil } }

    // MARK: The session's side

    /// A ready session starts taking batches from `queue`; returns its id.
    public func attach(_ queue: AsyncStream<Batch>.Continuation) -> Int {
        state.withLock { state in
            let id = state.nextSession
            state.nextSession += 1
            state.session = Session(id: id, queue: queue)
            return id
        }
    }

    /// The session `id` ended: its sends that wait fail, to be sent again.
    public func detach(_ id: Int) {
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

    /// The server answered the request of `sequence`: every send up to it was taken.
    public func confirmed(upTo sequence: Int) {
        let done = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            let due = state.waiting.filter { $0.key <= sequence }
            for key in due.keys { state.waiting[key] = nil }
            return due.values.map(\.continuation)
        }
        for continuation in done { continuation.resume() }
    }

    /// Queues `items` on the current session without waiting for a confirmation (a goodbye, an
    /// answer to the server); false when there is no session.
    @discardableResult
    public func sendUnconfirmed(_ items: [Item]) -> Bool {
        state.withLock { state in
            guard let session = state.session else { return false }
            if case .enqueued = session.queue.yield(Batch(items: items, sequence: 0)) { return true }
            return false
        }
    }

    // MARK: Delivery's side

    /// Sends `items` on the current session and returns once the server confirmed them.
    public func send(_ items: [Item]) async throws(SendError) {
        guard !items.isEmpty else { return }
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
                            if case .enqueued = session.queue.yield(Batch(items: items, sequence: sequence)) { return true }
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
