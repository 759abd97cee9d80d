import Synchronization

/// Bytes held at once across tasks, taken in turn: what bounds the memory of voice notes in
/// flight (`transcription.memoryBudget`, issue 47, point 4).
///
/// Each note was capped on its own (25 MB) but their number was not: 20 at once took the relay
/// to 678 MB. A note now takes room for its bytes before it is fetched and gives it back once it
/// is transcribed; a note that does not fit waits behind those before it (first come, first
/// served, so a large note is not passed over for ever by small ones), and gives up after a
/// while, for the chat to say so.
public final class ByteBudget: Sendable {
    /// Bytes that may be held at once.
    public let capacity: Int

    private struct Waiter {
        let id: UInt64
        let bytes: Int
        let continuation: CheckedContinuation<Bool, Never>
        var timer: Task<Void, Never>?
    }

    private struct State {
        var used = 0
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    public init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Bytes taken now.
    public var used: Int { state.withLock(\.used) }
    /// Takers waiting for room now.
    public var waiting: Int { state.withLock(\.waiters.count) }

    /// Takes room for `bytes` (never more than the whole budget, so one large item can always go
    /// alone), waiting in turn at most `patience`. Returns the bytes taken, to give back with
    /// `give`; nil when there was no room in time, or the task was cancelled.
    public func take(_ bytes: Int, waitingAtMost patience: Duration) async -> Int? {
        let bytes = min(max(0, bytes), capacity)
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        let granted = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.waiters.isEmpty && state.used + bytes <= capacity {
                        state.used += bytes
                        return true
                    }
                    state.waiters.append(Waiter(id: id, bytes: bytes, continuation: continuation))
                    return false
                }
                if now { return continuation.resume(returning: true) }
                if Task.isCancelled { return giveUp(id) }
                let timer = Task { [weak self] in
                    try? await Task.sleep(for: patience)
                    self?.giveUp(id)
                }
                state.withLock { state in
                    if let index = state.waiters.firstIndex(where: { $0.id == id }) {
                        state.waiters[index].timer = timer
                    } else {
                        timer.cancel()
                    }
                }
            }
        } onCancel: {
            giveUp(id)
        }
        return granted ? bytes : nil
    }

    /// Gives back what `take` returned; the waiters that now fit go, in turn.
    public func give(_ bytes: Int) {
        let go = state.withLock { state -> [Waiter] in
            state.used = max(0, state.used - bytes)
            return Self.admit(&state, capacity: capacity)
        }
        for waiter in go {
            waiter.timer?.cancel()
            waiter.continuation.resume(returning: true)
        }
    }

    /// A waiter whose patience ran out (or whose task was cancelled) leaves the line; those
    /// behind it may now fit.
    private func giveUp(_ id: UInt64) {
        let (left, go) = state.withLock { state -> (Waiter?, [Waiter]) in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return (nil, []) }
            let left = state.waiters.remove(at: index)
            return (left, Self.admit(&state, capacity: capacity))
        }
        left?.timer?.cancel()
        left?.continuation.resume(returning: false)
        for waiter in go {
            waiter.timer?.cancel()
            waiter.continuation.resume(returning: true)
        }
    }

    /// The waiters at the head of the line that fit now, taken.
    private static func admit(_ state: inout State, capacity: Int) -> [Waiter] {
        var go: [Waiter] = []
        while let first = state.waiters.first, state.used + first.bytes <= capacity {
            state.used += first.bytes
            go.append(state.waiters.removeFirst())
        }
        return go
    }
}
