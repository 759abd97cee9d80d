import Synchronization

/// Group commit for delivery marks: while one mark statement is out, the marks that arrive
/// wait, and go together as the next statement (`PostgresHotStatements.MarkSent`, arrays of ids).
/// Under load a mark then costs a fraction of a round trip; alone it costs one, as before.
final class MarkSentBatcher: Sendable {
    struct Mark: Sendable {
        let id: String
        let sentAt: Double
        let platformRef: String?
    }

    /// Sends a batch; returns the ids it found (the others have no entry).
    typealias Send = @Sendable ([Mark]) async throws -> Set<String>

    private struct Waiting {
        let mark: Mark
        let continuation: CheckedContinuation<Bool, any Error>
    }

    private struct State {
        var queue: [Waiting] = []
        var sending = false
    }

    private let state = Mutex(State())
    /// The most marks one statement carries.
    static let batchLimit = 256

    /// Whether the entry existed (and is marked now), once its batch is written.
    func mark(_ mark: Mark, send: @escaping Send) async throws -> Bool {
        try await withCheckedThrowingContinuation { continuation in
            let start = state.withLock { state -> Bool in
                state.queue.append(Waiting(mark: mark, continuation: continuation))
                guard !state.sending else { return false }
                state.sending = true
                return true
            }
            if start { Task { await self.drain(send) } }
        }
    }

    /// Sends what is queued, batch after batch, until the queue is empty.
    private func drain(_ send: Send) async {
        while true {
            let batch = state.withLock { state -> [Waiting] in
                let batch = Array(state.queue.prefix(Self.batchLimit))
                state.queue.removeFirst(batch.count)
                if batch.isEmpty { state.sending = false }
                return batch
            }
            guard !batch.isEmpty else { return }
            do {
                let found = try await send(batch.map(\.mark))
                for waiting in batch { waiting.continuation.resume(returning: found.contains(waiting.mark.id)) }
            } catch {
                for waiting in batch { waiting.continuation.resume(throwing: error) }
            }
        }
    }
}
