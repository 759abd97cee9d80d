import Synchronization

/// The deadlines of the statements waiting for the server, checked by one loop every `tick`
/// rather than by a timer per statement: at three statements a command, a sleeping task each
/// cost the relay more than the deadlines are worth. The loop runs only while a statement waits,
/// so an idle store has no task; a deadline fires up to `tick` late.
final class QueryDeadlines: Sendable {
    private struct Waiting {
        let deadline: ContinuousClock.Instant
        let expire: @Sendable () -> Void
    }

    private struct State {
        var next = 0
        var waiting: [Int: Waiting] = [:]
        var looping = false
    }

    private let state = Mutex(State())
    let tick: Duration

    init(tick: Duration) {
        self.tick = tick
    }

    /// Calls `expire` once `timeout` has passed, unless `remove` came first. Returns the id to
    /// remove it by.
    func add(after timeout: Duration, expire: @escaping @Sendable () -> Void) -> Int {
        let deadline = ContinuousClock.now + timeout
        let (id, start) = state.withLock { state in
            let id = state.next
            state.next += 1
            state.waiting[id] = Waiting(deadline: deadline, expire: expire)
            let start = !state.looping
            state.looping = true
            return (id, start)
        }
        if start { Task { await self.loop() } }
        return id
    }

    func remove(_ id: Int) {
        state.withLock { _ = $0.waiting.removeValue(forKey: id) }
    }

    private func loop() async {
        var running = true
        while running {
            try? await Task.sleep(for: tick)
            let now = ContinuousClock.now
            let due = state.withLock { state -> [Waiting] in
                let due = state.waiting.filter { $0.value.deadline <= now }
                for id in due.keys { state.waiting[id] = nil }
                if state.waiting.isEmpty {
                    state.looping = false
                    running = false
                }
                return Array(due.values)
            }
            for waiting in due { waiting.expire() }
        }
    }
}
