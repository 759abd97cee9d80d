import RelayTestSupport
import Synchronization
import Testing

@testable import RelayStore

/// What `PostgresStore.withinDeadline` does with a value that arrives after the caller was answered.
///
/// A connection to PostgreSQL that opened just after its deadline was once dropped open: its socket
/// leaked, and PostgresNIO trapped on it in a debug build, ending the whole test process (a clean
/// clone's CI, the peers group). The store's first connection now hands such a late connection to
/// `discardingLate`, which closes it.
@Suite("A PostgreSQL operation past its deadline")
struct PostgresDeadlineTests {
    /// The values handed to `discardingLate`.
    final class Handed: Sendable {
        let values = Mutex<[Int]>([])
    }

    @Test("A value that arrives after the deadline is handed over to be disposed of, not dropped")
    func aLateValueIsHandedOver() async throws {
        let handed = Handed()
        await #expect(throws: PostgresFailure.TimedOut.self) {
            try await PostgresStore.withinDeadline(.milliseconds(50), discardingLate: { value in handed.values.withLock { $0.append(value) } }) {
                // Like a connection already under way, it finishes despite being cancelled at the deadline.
                try? await Task.sleep(for: .milliseconds(400))
                return 7
            }
        }
        try await eventually("the late value handed over", safety: .seconds(30)) { !handed.values.withLock { $0 }.isEmpty }
        #expect(handed.values.withLock { $0 } == [7])
    }

    @Test("A value in time is the caller's, and nothing is handed over")
    func aValueInTimeIsTheCallers() async throws {
        let handed = Handed()
        let value = try await PostgresStore.withinDeadline(.seconds(30), discardingLate: { value in handed.values.withLock { $0.append(value) } }) { 7 }
        #expect(value == 7)
        try await Task.sleep(for: .milliseconds(100))
        #expect(handed.values.withLock { $0 }.isEmpty)
    }
}
