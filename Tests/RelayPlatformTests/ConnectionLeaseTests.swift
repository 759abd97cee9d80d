import Foundation
import Logging
import RelayCore
import RelayPipeline
import RelayPlatform
import RelayStore
import RelayTestSupport
import ServiceLifecycle
import Synchronization
import Testing

/// `ConnectionLease` on a manual clock: one holder runs the connection, a dead holder's lease
/// lapses and the next asker takes it with the saved state, a holder that cannot renew stops
/// before its lease lapses, and a graceful shutdown hands the lease over at once.
@Suite("Connection leases")
struct ConnectionLeaseTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let logger = Logger(label: "test.connection-lease", factory: { _ in SwiftLogNoOpLogHandler() })

    static func lease(_ holder: String, _ store: (any LeaseStore)?, _ clock: any RelayClock) -> ConnectionLease {
        ConnectionLease(name: "telegram.poll", holder: holder, store: store, clock: clock, logger: logger)
    }

    @Test func aDeadHoldersLeaseLapsesAndTheNextAskerTakesItWithTheSavedState() async throws {
        let (store, clock, log) = (MemoryStore(), ManualClock(now: Self.start), ConnectionLog())
        let a = Task { try await Self.lease("a", store, clock).run(whileHeld: log.body("a")) }
        let first = try #require(await log.nextGrant())
        #expect(first.holder == "a" && first.grant.token == 1 && first.grant.state == nil && first.grant.isShared)
        #expect(await first.grant.saveState("701"))
        await clock.waitForSleepers(2)  // a renews and watches
        let b = Task { try await Self.lease("b", store, clock).run(whileHeld: log.body("b")) }
        await clock.waitForSleepers(3)  // b was refused and waits to ask again

        clock.advance(by: .seconds(2))  // a renews until 10 s; b is refused
        await clock.waitForSleepers(3)
        a.cancel()  // a crash, as far as b can tell: nothing is released
        #expect(await log.nextEnd() == "a")
        await clock.waitForSleepers(1)
        for second in stride(from: 4, through: 10, by: 2) {
            clock.advance(by: .seconds(2))
            await clock.waitForSleepers(1)
            #expect(log.running.isEmpty, "at \(second) s a's lease (until 10 s) still holds b off")
        }
        clock.advance(by: .seconds(2))
        let second = try #require(await log.nextGrant())
        #expect(second.holder == "b")
        #expect(second.grant.token == 2, "a new hand, a new token")
        #expect(second.grant.state == "701", "b starts where a left off")
        #expect(clock.now == Self.start + .seconds(12), "taken within the lease's end (10 s) and one interval")
        #expect(await !first.grant.saveState("702"), "a's grant can no longer write")
        #expect(log.mostRunning == 1)
        b.cancel()
        _ = await (a.result, b.result)
    }

    @Test func aHolderThatCannotRenewStopsTheConnectionBeforeItsLeaseLapses() async throws {
        let (store, clock, log) = (FailingLeases(MemoryStore()), ManualClock(now: Self.start), ConnectionLog())
        let a = Task { try await Self.lease("a", store, clock).run(whileHeld: log.body("a")) }
        _ = try #require(await log.nextGrant())
        await clock.waitForSleepers(2)
        store.failing.withLock { $0 = true }
        for _ in 0..<3 {
            clock.advance(by: .seconds(2))  // renewals at 2, 4 and 6 s fail
            await clock.waitForSleepers(2)
        }
        #expect(log.running == ["a"], "still within the lease")
        clock.advance(by: .seconds(1))
        #expect(await log.nextEnd() == "a")
        #expect(clock.now == Self.start + .seconds(7), "stopped a margin (1 s) before the lease's end at 8 s")

        // The store answers again: nobody took the lapsed lease, so a takes it back with its token.
        store.failing.withLock { $0 = false }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(2))
        let again = try #require(await log.nextGrant())
        #expect(again.holder == "a" && again.grant.token == 1)
        a.cancel()
        _ = await a.result
    }

    /// On a store of one process nobody else can take the lease: renewals that fail or lag
    /// (a stalled SQLite write) leave the connection running, where on a shared store it stops
    /// at 7 s (the test above).
    @Test func onAStoreOfOneProcessFailedRenewalsLeaveTheConnectionRunning() async throws {
        let (store, clock) = (FailingLeases(MemoryStore()), ManualClock(now: Self.start))
        let lease = ConnectionLease(name: "telegram.poll", holder: "a", store: store, exclusive: true, clock: clock, logger: Self.logger)
        // When the connection ended, by the test's clock.
        let ended = Mutex<Date?>(nil)
        let a = Task {
            try await lease.run { _ in
                try? await Task.sleep(for: .seconds(3600))
                ended.withLock { $0 = clock.now }
            }
        }
        await clock.waitForSleepers(1)  // granted; a renews, and nothing watches
        store.failing.withLock { $0 = true }
        for _ in 0..<10 {
            clock.advance(by: .seconds(2))  // renewals at 2 … 20 s fail
            await clock.waitForSleepers(1)
        }
        a.cancel()
        _ = await a.result
        #expect(ended.withLock { $0 } == Self.start + .seconds(20), "ran until cancelled at 20 s, past the lease's 8 s")
    }

    @Test func aRefusedRenewalStopsTheConnectionAtOnce() async throws {
        let (store, clock, log) = (MemoryStore(), ManualClock(now: Self.start), ConnectionLog())
        let a = Task { try await Self.lease("a", store, clock).run(whileHeld: log.body("a")) }
        _ = try #require(await log.nextGrant())
        await clock.waitForSleepers(2)
        // Another replica whose clock runs far ahead took the lease as lapsed.
        #expect(try store.acquireLease("telegram.poll", holder: "z", until: Self.start + .seconds(60), now: Self.start + .seconds(9)) == 2)
        clock.advance(by: .seconds(2))
        #expect(await log.nextEnd() == "a")
        #expect(clock.now == Self.start + .seconds(2))
        a.cancel()
        _ = await a.result
    }

    @Test func aGracefulShutdownEndsTheConnectionAndReleasesTheLease() async throws {
        let (store, clock) = (MemoryStore(), ManualClock(now: Self.start))
        let started = AsyncStream.makeStream(of: Void.self)
        let service = Self.lease("a", store, clock).service { grant in
            started.continuation.yield()
            // As the platforms' connections do: stop on the shutdown, saving first.
            try? await gracefulShutdown()
            _ = await grant.saveState("at shutdown")
        }
        let group = ServiceGroup(configuration: .init(services: [service], logger: Self.logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = started.stream.makeAsyncIterator()
            await iterator.next()
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        // Long before the lease would lapse, b takes it, and reads what a saved last.
        #expect(try store.acquireLease("telegram.poll", holder: "b", until: Self.start + .seconds(8), now: Self.start) == 2)
        #expect(try store.leaseState("telegram.poll") == "at shutdown")
    }

    @Test func withoutAStoreTheConnectionIsAlwaysHeld() async throws {
        let log = ConnectionLog()
        let a = Task { try await Self.lease("a", nil, ManualClock(now: Self.start)).run(whileHeld: log.body("a")) }
        let grant = try #require(await log.nextGrant()).grant
        #expect(!grant.isShared && grant.state == nil)
        #expect(await !grant.saveState("1"))
        a.cancel()
        _ = await a.result
    }
}

/// What the connections under test did: grants, ends, and which were running at once.
final class ConnectionLog: Sendable {
    private let grants = AsyncStream.makeStream(of: (holder: String, grant: LeaseGrant).self)
    private let ends = AsyncStream.makeStream(of: String.self)
    private let state = Mutex((running: [String](), most: 0))

    var running: [String] { state.withLock { $0.running } }
    var mostRunning: Int { state.withLock { $0.most } }

    /// A connection that runs until cancelled.
    func body(_ holder: String) -> @Sendable (LeaseGrant) async throws -> Void {
        { grant in
            self.state.withLock { state in
                state.running.append(holder)
                state.most = max(state.most, state.running.count)
            }
            self.grants.continuation.yield((holder, grant))
            try? await Task.sleep(for: .seconds(3600))
            self.state.withLock { $0.running.removeAll { $0 == holder } }
            self.ends.continuation.yield(holder)
        }
    }

    func nextGrant() async -> (holder: String, grant: LeaseGrant)? {
        var iterator = grants.stream.makeAsyncIterator()
        return await iterator.next()
    }

    func nextEnd() async -> String? {
        var iterator = ends.stream.makeAsyncIterator()
        return await iterator.next()
    }
}

/// A lease store that fails every call while `failing`: the shared store unreachable.
final class FailingLeases: LeaseStore {
    let base: any LeaseStore
    let failing = Mutex(false)

    init(_ base: any LeaseStore) {
        self.base = base
    }

    private func check() throws {
        if failing.withLock({ $0 }) { throw StoreError.operationFailed(operation: "reach the store", reason: "connection refused") }
    }

    func acquireLease(_ name: String, holder: String, until: Date, now: Date) async throws -> Int64? {
        try check()
        return try await base.acquireLease(name, holder: holder, until: until, now: now)
    }

    func releaseLease(_ name: String, holder: String) async throws {
        try check()
        try await base.releaseLease(name, holder: holder)
    }

    func leaseState(_ name: String) async throws -> String? {
        try check()
        return try await base.leaseState(name)
    }

    func saveLeaseState(_ name: String, value: String, token: Int64) async throws -> Bool {
        try check()
        return try await base.saveLeaseState(name, value: value, token: token)
    }
}
