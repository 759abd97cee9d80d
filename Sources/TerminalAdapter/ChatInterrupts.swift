import Synchronization

/// Ctrl-C in `chat`: it stops the command that is running, not the session. The command runs as
/// a task of its own here; `interrupt()` (from the SIGINT handler) cancels it, and says whether
/// there was one to stop.
public final class ChatInterrupts: Sendable {
    private struct State {
        var running: Task<Void, Never>?
        var interrupted = false
    }

    private let state = Mutex(State())

    public init() {}

    /// Runs `body` as the current command; true when it ran to its end, false when Ctrl-C stopped it.
    func run(_ body: @escaping @Sendable () async -> Void) async -> Bool {
        let task = Task { await body() }
        state.withLock { $0 = State(running: task) }
        await task.value
        return state.withLock { state in
            defer { state = State() }
            return !state.interrupted
        }
    }

    /// Stops the command running now; false when none is (the prompt is waiting).
    @discardableResult
    public func interrupt() -> Bool {
        state.withLock { state in
            guard let running = state.running, !state.interrupted else { return false }
            state.interrupted = true
            running.cancel()
            return true
        }
    }
}
