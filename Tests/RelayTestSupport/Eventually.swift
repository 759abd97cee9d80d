/// A condition did not become true in time.
public struct EventuallyTimedOut: Error, CustomStringConvertible {
    public var what: String
    public init(what: String) { self.what = what }
    public var description: String { "timed out waiting for \(what)" }
}

/// Waits until `condition` holds, checking every few milliseconds; throws after `safety` so a
/// broken test fails instead of hanging. The one polling helper of the test suites: use it only
/// for state that has no event to await (a row written by another task); await a fake's
/// `next(_:)` for requests, and advance a `ManualClock` instead of waiting for time to pass.
///
/// The safety is long (120 s) because it only ever ends a failing test: a passing one returns as
/// soon as the condition holds. Beside `stress-ng --cpu 1` and the whole unit group, eleven runs
/// one after another on SQLite took over 30 s.
public func eventually(
    _ what: String, safety: Duration = .seconds(120), _ condition: () async throws -> Bool
) async throws {
    let clock = ContinuousClock()
    let end = clock.now.advanced(by: safety)
    while true {
        if try await condition() { return }
        guard clock.now < end else { throw EventuallyTimedOut(what: what) }
        try await Task.sleep(for: .milliseconds(5))
    }
}
