import Dispatch

import class Foundation.Thread

/// Runs CPU-bound work on a thread of its own and returns its result, one such work at a time.
///
/// Swift Testing runs every test, synchronous ones too, on the cooperative pool, which has one
/// thread per core (two here). Two long synchronous loops (the fuzz runs, the property tests)
/// would hold both threads for seconds, and every other test — fake servers, deadlines, the
/// store's connections — would stall meanwhile and miss its timing. Off the pool, several such
/// loops at once would still take both cores from the rest, so they take turns: one core stays
/// for the tests that wait on real time.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            cpuBoundTurn.wait()
            defer { cpuBoundTurn.signal() }
            continuation.resume(with: Result { try body() })
        }.start()
    }
}

/// Held by the CPU-bound work running now (`offThePool`).
private let cpuBoundTurn = DispatchSemaphore(value: 1)
