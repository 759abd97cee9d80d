import Synchronization

/// Holds a fake's answers at chosen paths until the test releases them: "the model has been
/// asked and has not answered yet" as a state a test controls, not a delay it hopes is long
/// enough.
public final class FakeGate: Sendable {
    private struct State {
        var held: Set<String> = []
        var waiting: [(path: String, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    public init() {}

    public func hold(_ path: String) {
        state.withLock { _ = $0.held.insert(path) }
    }

    /// Lets every held answer at `path` go, and the later ones too.
    public func release(_ path: String) {
        let go = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.held.remove(path)
            let go = state.waiting.filter { $0.path == path }.map(\.continuation)
            state.waiting.removeAll { $0.path == path }
            return go
        }
        go.forEach { $0.resume() }
    }

    /// Lets everything go (the fake is stopping).
    public func releaseAll() {
        let go = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.held.removeAll()
            defer { state.waiting.removeAll() }
            return state.waiting.map(\.continuation)
        }
        go.forEach { $0.resume() }
    }

    /// Returns at once unless `path` is held; then when it is released.
    public func pass(_ path: String) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let open = state.withLock { state -> Bool in
                guard state.held.contains(path) else { return true }
                state.waiting.append((path, continuation))
                return false
            }
            if open { continuation.resume() }
        }
    }
}
