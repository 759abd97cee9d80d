import Foundation
import Logging
import RelayCore
import RelayPipeline
import RelayStore
import RelayTestSupport
import RelayTestTags
import Testing

/// Replicas sharing a store purge it one at a time (issue 24): the `retention` lease.
@Suite("Retention purges, one replica at a time", .tags(.peers))
struct RetentionLeaseTests {
    @Test("While one replica holds the retention lease, another skips its pass; the holder purges at its next")
    func oneReplicaPurges() async throws {
        // A shared store: replicas take turns only where they share one.
        try await withPostgresStore { store in try await Self.oneReplicaPurges(store) }
    }

    static func oneReplicaPurges(_ store: PostgresStore) async throws {
        let clock = ManualClock()
        let interval = Duration.seconds(3600)
        func retention(_ holder: String) -> DataRetention {
            DataRetention(
                store: store, clock: clock, interval: interval, outboxKeep: .seconds(60), relay: RelayConfiguration(),
                logger: Logger(label: "test.retention"), holder: holder)
        }
        let first = Task { try await retention("replica-a").run() }
        // Its first pass is done (it sleeps until the next): it holds the lease.
        await clock.waitForSleepers(1)
        // A reply delivered long ago, which any pass from now on would delete.
        try await store.enqueue(
            OutboxEntry(
                id: "old", platform: "slack", conversation: "C1", address: "", content: .progress(RunProgress(completed: 1, total: 2, block: "fix")),
                state: .sent, nextAttemptAt: clock.now - 7200, createdAt: clock.now - 7200))
        let second = Task { try await retention("replica-b").run() }
        await clock.waitForSleepers(2)
        #expect(try await store.outboxEntry(id: "old") != nil, "replica b skipped its pass while a held the lease")
        // An interval later both wake: a renews its lease and purges, b skips again.
        clock.advance(by: interval)
        try await eventually("the old reply to be purged") { try await store.outboxEntry(id: "old") == nil }
        first.cancel()
        second.cancel()
        _ = await (first.result, second.result)
    }
}
