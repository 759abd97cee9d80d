public import RelayCore
import Synchronization

public import struct Foundation.Date

/// The real clock, running, but as far ahead as a test has jumped it: for a whole running server
/// that must see time pass in a moment (a `response_url` past its 30 minutes) while everything
/// else keeps real time. Sleeps last as long as on the real clock.
public final class ShiftedClock: RelayClock {
    private let offset = Mutex(Duration.zero)

    public init() {}

    public var now: Date { Date() + offset.withLock { $0 } }

    /// Moves the clock `duration` ahead, at once.
    public func jump(by duration: Duration) {
        offset.withLock { $0 += duration }
    }

    public func sleep(until deadline: Date) async throws {
        // Deadlines are in shifted time; a later jump only makes the sleeper late, never early.
        let real = deadline - offset.withLock { $0 }
        try await SystemClock().sleep(until: real)
    }
}
