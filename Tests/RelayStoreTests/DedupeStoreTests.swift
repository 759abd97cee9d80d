import RelayCore
import RelayPipeline
import RelayStore
import RelayTestTags
import Testing

@Suite("Event dedupe, in every store", .tags(.peers))
struct DedupeStoreTests {
    @Test("First claim wins, a retry is dropped, an expired claim can be made again", arguments: StoreKind.allCases)
    func claimLifecycle(kind: StoreKind) async throws {
        try await withStore(kind) { store throws in
            #expect(try await store.claimEvent(key: "slack:Ev1", expiresAt: instant(600), now: instant()))
            #expect(try await !store.claimEvent(key: "slack:Ev1", expiresAt: instant(660), now: instant(60)))
            // The retry did not extend the claim: it still expires at 600.
            #expect(try await !store.claimEvent(key: "slack:Ev1", expiresAt: instant(1200), now: instant(599)))
            #expect(try await store.claimEvent(key: "slack:Ev1", expiresAt: instant(1200), now: instant(600)))
            #expect(try await !store.claimEvent(key: "slack:Ev1", expiresAt: instant(1300), now: instant(700)))
        }
    }

    @Test("A claim is seen while it lasts, and looking claims nothing", arguments: StoreKind.allCases)
    func claimSeen(kind: StoreKind) async throws {
        try await withStore(kind) { store throws in
            #expect(try await !store.isClaimed(key: "withdrawn:matrix:$e1", now: instant()))
            #expect(try await store.claimEvent(key: "withdrawn:matrix:$e1", expiresAt: instant(600), now: instant()))
            #expect(try await store.isClaimed(key: "withdrawn:matrix:$e1", now: instant(599)))
            #expect(try await !store.isClaimed(key: "withdrawn:matrix:$e1", now: instant(600)), "expired")
            #expect(try await !store.isClaimed(key: "withdrawn:matrix:$e2", now: instant()))
            #expect(try await store.claimEvent(key: "withdrawn:matrix:$e2", expiresAt: instant(600), now: instant()), "looking claimed nothing")
        }
    }

    @Test("Keys are independent", arguments: StoreKind.allCases)
    func independentKeys(kind: StoreKind) async throws {
        try await withStore(kind) { store throws in
            #expect(try await store.claimEvent(key: "telegram:1", expiresAt: instant(600), now: instant()))
            #expect(try await store.claimEvent(key: "telegram:2", expiresAt: instant(600), now: instant()))
            #expect(try await !store.claimEvent(key: "telegram:1", expiresAt: instant(600), now: instant(1)))
        }
    }

    @Test("Many concurrent claims of one key yield exactly one true", arguments: StoreKind.allCases)
    func concurrentClaims(kind: StoreKind) async throws {
        try await withStore(kind) { store throws in
            let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<64 {
                    group.addTask {
                        try await store.claimEvent(key: "discord:123", expiresAt: instant(600), now: instant())
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(wins == 1)
        }
    }

    @Test("Concurrent claims of distinct keys all succeed", arguments: StoreKind.allCases)
    func concurrentDistinctKeys(kind: StoreKind) async throws {
        try await withStore(kind) { store throws in
            let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<32 {
                    group.addTask {
                        try await store.claimEvent(key: "matrix:\(index)", expiresAt: instant(600), now: instant())
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(wins == 32)
        }
    }
}
