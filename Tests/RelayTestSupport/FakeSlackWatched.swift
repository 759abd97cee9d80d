import Synchronization

/// A fake's recorded values behind a lock, which tests can wait on without polling: every
/// change resumes the waiters whose condition now holds.
final class FakeSlackWatched<Values: Sendable>: Sendable {
    private struct Waiter {
        let id: Int
        let condition: @Sendable (Values) -> Bool
        let continuation: CheckedContinuation<Values, any Error>
    }

    private struct Box {
        var values: Values
        var waiters: [Waiter] = []
        var nextWaiterID = 0
        /// Waiters cancelled before they were registered.
        var cancelled: Set<Int> = []
    }

    private let box: Mutex<Box>

    /// How a new waiter starts: satisfied already, cancelled already, or waiting.
    private enum WaitStart {
        case now(Values)
        case cancelled
        case later
    }

    init(_ values: Values) {
        box = Mutex(Box(values: values))
    }

    /// Reads the values.
    func read<T>(_ body: (Values) -> T) -> T {
        box.withLock { body($0.values) }
    }

    /// Changes the values, then resumes the waiters satisfied by the change.
    @discardableResult
    func update<T>(_ body: (inout Values) -> T) -> T {
        let (result, ready) = box.withLock { box in
            let result = body(&box.values)
            var ready: [(CheckedContinuation<Values, any Error>, Values)] = []
            let values = box.values
            box.waiters.removeAll { waiter in
                guard waiter.condition(values) else { return false }
                ready.append((waiter.continuation, values))
                return true
            }
            return (result, ready)
        }
        for (continuation, values) in ready { continuation.resume(returning: values) }
        return result
    }

    /// Waits until `condition` holds, for at most `timeout` seconds.
    ///
    /// - Throws: `FakeSlackTimeout` naming `what` and describing the values at the time;
    ///   `CancellationError` when the waiting task is cancelled.
    func wait(
        for what: String,
        timeout: Double,
        describe: @escaping @Sendable (Values) -> String,
        until condition: @escaping @Sendable (Values) -> Bool
    ) async throws -> Values {
        try await withThrowingTaskGroup(of: Values.self) { group in
            group.addTask { try await self.wait(until: condition) }
            group.addTask {
                try await Task.sleep(for: .seconds(timeout))
                throw FakeSlackTimeout(waitingFor: what, seconds: timeout, observed: self.read(describe))
            }
            defer { group.cancelAll() }
            guard let values = try await group.next() else { throw CancellationError() }
            return values
        }
    }

    private func wait(until condition: @escaping @Sendable (Values) -> Bool) async throws -> Values {
        let id = box.withLock { box in
            box.nextWaiterID += 1
            return box.nextWaiterID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let start = box.withLock { box -> WaitStart in
                    if box.cancelled.remove(id) != nil { return .cancelled }
                    if condition(box.values) { return .now(box.values) }
                    box.waiters.append(Waiter(id: id, condition: condition, continuation: continuation))
                    return .later
                }
                switch start {
                case .now(let values): continuation.resume(returning: values)
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .later: break
                }
            }
        } onCancel: {
            let waiter = box.withLock { box -> Waiter? in
                guard let index = box.waiters.firstIndex(where: { $0.id == id }) else {
                    box.cancelled.insert(id)
                    return nil
                }
                return box.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }
}

/// A fake did not see what a test waited for in time.
public struct FakeSlackTimeout: Error, CustomStringConvertible {
    /// What was awaited, e.g. "2 requests to /api/chat.postMessage".
    public var waitingFor: String
    public var seconds: Double
    /// What the fake had seen by then.
    public var observed: String

    public var description: String {
        "timed out after \(seconds) s waiting for \(waitingFor); observed: \(observed)"
    }
}
