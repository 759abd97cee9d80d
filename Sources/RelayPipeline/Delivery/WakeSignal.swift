import RelayCore
import Synchronization

import struct Foundation.Date

/// Wakes a waiting loop early when something happens (an entry enqueued, the last run
/// finished), so it does not wait for its next poll. Signals coalesce: many signals while the
/// waiter is busy make one wake-up.
final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.pending = true
            return nil
        }
        waiter?.resume()
    }

    /// Returns at the next signal (or at once if one came since the last wait), at `deadline`
    /// on `clock`, or when the task is cancelled. One waiter at a time.
    func wait(until deadline: Date, clock: any RelayClock) async {
        // A signal already came (the usual case under load): no tasks, no timer.
        let signalled = state.withLock { state in
            defer { state.pending = false }
            return state.pending
        }
        if signalled { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitForSignal() }
            group.addTask { try? await clock.sleep(until: deadline) }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForSignal() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    if state.pending {
                        state.pending = false
                        return true
                    }
                    // Cancelled before we could wait: the signal stays for the next waiter.
                    if Task.isCancelled { return true }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }
}
