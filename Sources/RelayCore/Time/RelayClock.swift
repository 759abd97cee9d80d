public import struct Foundation.Date
public import typealias Foundation.TimeInterval

/// The time source of everything that decides by time: pacing, backoff, leases, caches, shutdown
/// grace. Injected, so tests advance a manual clock instead of sleeping.
///
/// Wall time (`Date`), because the same instants are stored (outbox `nextAttemptAt`, dedupe
/// expiry) and compared across restarts.
public protocol RelayClock: Sendable {
    /// Now.
    var now: Date { get }
    /// Returns at `deadline` (at once when it has passed); throws `CancellationError` when the
    /// calling task is cancelled first.
    func sleep(until deadline: Date) async throws
}

extension RelayClock {
    /// Returns after `duration`; throws `CancellationError` when the task is cancelled first.
    public func sleep(for duration: Duration) async throws {
        try await sleep(until: now + duration)
    }
}

/// The real clock: `Date()` and `Task.sleep`.
public struct SystemClock: RelayClock {
    public init() {}

    public var now: Date { Date() }

    public func sleep(until deadline: Date) async throws {
        let seconds = deadline.timeIntervalSinceNow
        try Task.checkCancellation()
        guard seconds > 0 else { return }
        try await Task.sleep(for: .seconds(seconds))
    }
}

extension Duration {
    /// The duration in seconds, for `Date` arithmetic and for the places that must speak
    /// seconds (HTTP headers, JSON fields, metrics).
    public var seconds: TimeInterval {
        let (whole, attoseconds) = components
        return TimeInterval(whole) + TimeInterval(attoseconds) / 1e18
    }

    /// A duration from seconds that may come from outside (a header, a JSON field, a setting):
    /// non-finite or negative values become zero and huge ones `maximum`, so nothing downstream
    /// traps or waits forever.
    public static func clampedSeconds(_ seconds: Double, maximum: Duration = .seconds(86_400 * 365)) -> Duration {
        guard seconds.isFinite, seconds > 0 else { return .zero }
        guard seconds < maximum.seconds else { return maximum }
        return .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }
}

extension Date {
    /// This instant moved by `duration`.
    public static func + (date: Date, duration: Duration) -> Date {
        date.addingTimeInterval(duration.seconds)
    }

    /// This instant moved back by `duration`.
    public static func - (date: Date, duration: Duration) -> Date {
        date.addingTimeInterval(-duration.seconds)
    }

    /// The duration from `earlier` to this instant (negative when `earlier` is later).
    public func duration(since earlier: Date) -> Duration {
        let seconds = timeIntervalSince(earlier)
        guard seconds.isFinite, abs(seconds) < 9e9 else { return seconds < 0 ? .seconds(-9e9) : .seconds(9e9) }
        return .nanoseconds(Int64((seconds * 1e9).rounded()))
    }
}
