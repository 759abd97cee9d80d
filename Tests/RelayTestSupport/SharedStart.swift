import Synchronization

/// Something the tests of one process share and start once (a PostgreSQL cluster, a homeserver,
/// the Python peers' venv): made on the first call; concurrent first calls wait for the same
/// start, and a failed start fails every caller the same way rather than trying again per test.
final class SharedStart<Value: Sendable>: Sendable {
    private let slot = Mutex<Task<Value, any Error>?>(nil)

    func value(_ start: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let task = slot.withLock { slot in
            if let slot { return slot }
            // Unstructured, so a cancelled first caller does not cancel the start others wait for.
            let task = Task { try await start() }
            slot = task
            return task
        }
        return try await task.value
    }
}
