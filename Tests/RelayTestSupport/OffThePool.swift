import class Foundation.Thread

/// Runs CPU-bound work on a thread of its own and returns its result.
///
/// Swift Testing runs every test, synchronous ones too, on the cooperative pool, which has one
/// thread per core (two here). Two long synchronous loops (the fuzz runs, the property tests)
/// would hold both threads for seconds, and every other test — fake servers, deadlines, the
/// store's connections — would stall meanwhile and miss its timing.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
