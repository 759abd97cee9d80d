import Synchronization

/// What a fake received, in order, with a way to await "the next request at this path" instead
/// of polling: each `next(path:)` hands out the path's requests one by one, in arrival order,
/// whether they arrived before or after the call.
public final class RequestLog<Record: Sendable>: Sendable {
    private struct Waiter {
        var key: String
        var continuation: CheckedContinuation<Record?, Never>
    }

    private struct State {
        var records: [(key: String, record: Record)] = []
        /// Per key, how many records `next` has handed out.
        var taken: [String: Int] = [:]
        var waiters: [Int: Waiter] = [:]
        var nextWaiterID = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// Every record, in arrival order.
    public var all: [Record] { state.withLock { $0.records.map(\.record) } }

    /// The records filed under `key`, in arrival order.
    public func records(_ key: String) -> [Record] {
        state.withLock { $0.records.filter { $0.key == key }.map(\.record) }
    }

    /// Files a record under `key` and wakes whoever waits for one there.
    public func append(_ record: Record, key: String) {
        state.withLock { $0.records.append((key, record)) }
        deliverPending()
    }

    /// The next record under `key` not yet handed out by `next`; waits for one to arrive. Gives
    /// up after `safety` (so a broken test fails instead of hanging) and returns nil then.
    public func next(_ key: String, safety: Duration = .seconds(30)) async -> Record? {
        let id = state.withLock { state -> Int in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        return await withTaskGroup(of: Record?.self) { group in
            group.addTask {
                await withCheckedContinuation { (continuation: CheckedContinuation<Record?, Never>) in
                    let ready = self.state.withLock { state -> Record?? in
                        if let record = Self.take(key, &state) { return .some(record) }
                        state.waiters[id] = Waiter(key: key, continuation: continuation)
                        return .none
                    }
                    if case .some(let record) = ready { continuation.resume(returning: record) }
                }
            }
            group.addTask {
                try? await Task.sleep(for: safety)
                return nil
            }
            let first = await group.next() ?? nil
            // Whoever is still waiting (the timer, or an unanswered waiter) is released.
            let waiter = self.state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(returning: nil)
            group.cancelAll()
            return first
        }
    }

    /// Hands records to waiters, oldest waiter first, while both exist.
    private func deliverPending() {
        let handed = state.withLock { state -> [(CheckedContinuation<Record?, Never>, Record)] in
            var handed: [(CheckedContinuation<Record?, Never>, Record)] = []
            for (id, waiter) in state.waiters.sorted(by: { $0.key < $1.key }) {
                guard let record = Self.take(waiter.key, &state) else { continue }
                state.waiters[id] = nil
                handed.append((waiter.continuation, record))
            }
            return handed
        }
        for (continuation, record) in handed { continuation.resume(returning: record) }
    }

    private static func take(_ key: String, _ state: inout State) -> Record? {
        let taken = state.taken[key, default: 0]
        let matching = state.records.lazy.filter { $0.key == key }
        guard matching.count > taken else { return nil }
        state.taken[key] = taken + 1
        return Array(matching)[taken].record
    }
}
