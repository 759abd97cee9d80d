import Foundation
import RelayCore
import RelayPipeline
import RelayStore
import RelayTestTags
import Testing

@Suite("Connection leases, in every store", .tags(.peers))
struct LeaseStoreTests {
    static let name = "telegram.poll"

    @Test("A free lease is granted with token 1, renewed with the same token, refused to another while live", arguments: StoreKind.allCases)
    func grantRenewRefuse(kind: StoreKind) async throws {
        try await withStore(kind) { store throws in
            #expect(try await store.acquireLease(Self.name, holder: "a", until: instant(8), now: instant()) == 1)
            #expect(try await store.acquireLease(Self.name, holder: "a", until: instant(10), now: instant(2)) == 1)
            #expect(try await store.acquireLease(Self.name, holder: "b", until: instant(12), now: instant(4)) == nil)
            // The renewal moved the end to 10: at 9 the lease is still a's.
            #expect(try await store.acquireLease(Self.name, holder: "b", until: instant(17), now: instant(9)) == nil)
        }
    }

    @Test("A lease that ended before now goes to another holder, with the next token", arguments: StoreKind.allCases)
    func expiryAndTakeover(kind: StoreKind) async throws {
        try await withStore(kind) { store throws in
            #expect(try await store.acquireLease(Self.name, holder: "a", until: instant(8), now: instant()) == 1)
            // Ending at 8 means held at 8.
            #expect(try await store.acquireLease(Self.name, holder: "b", until: instant(16), now: instant(8)) == nil)
            #expect(try await store.acquireLease(Self.name, holder: "b", until: instant(17), now: instant(9)) == 2)
            // The old holder is refused now, and b's renewals keep token 2.
            #expect(try await store.acquireLease(Self.name, holder: "a", until: instant(18), now: instant(10)) == nil)
            #expect(try await store.acquireLease(Self.name, holder: "b", until: instant(19), now: instant(11)) == 2)
            #expect(try await store.acquireLease(Self.name, holder: "c", until: instant(30), now: instant(20)) == 3)
        }
    }

    @Test("A holder that takes back its own lapsed lease, which no one took, keeps its token", arguments: StoreKind.allCases)
    func lapsedButUntaken(kind: StoreKind) async throws {
        try await withStore(kind) { store throws in
            #expect(try await store.acquireLease(Self.name, holder: "a", until: instant(8), now: instant()) == 1)
            #expect(try await store.acquireLease(Self.name, holder: "a", until: instant(108), now: instant(100)) == 1)
        }
    }

    @Test("Release lets another holder take the lease at once; only the holder can release it", arguments: StoreKind.allCases)
    func release(kind: StoreKind) async throws {
        try await withStore(kind) { store throws in
            #expect(try await store.acquireLease(Self.name, holder: "a", until: instant(8), now: instant()) == 1)
            try await store.releaseLease(Self.name, holder: "b")
            #expect(try await store.acquireLease(Self.name, holder: "b", until: instant(9), now: instant(1)) == nil)
            try await store.releaseLease(Self.name, holder: "a")
            #expect(try await store.acquireLease(Self.name, holder: "b", until: instant(9), now: instant(1)) == 2)
            // Released and taken again, even by the same holder, is a new hand: the token moves on.
            try await store.releaseLease(Self.name, holder: "b")
            #expect(try await store.acquireLease(Self.name, holder: "b", until: instant(10), now: instant(2)) == 3)
            // Releasing a lease never taken does nothing.
            try await store.releaseLease("discord.gateway", holder: "a")
            #expect(try await store.acquireLease("discord.gateway", holder: "b", until: instant(10), now: instant(2)) == 1)
        }
    }

    @Test("Leases are independent by name, byte for byte", arguments: StoreKind.allCases)
    func independentNames(kind: StoreKind) async throws {
        try await withStore(kind) { store throws in
            #expect(try await store.acquireLease("discord.gateway", holder: "a", until: instant(8), now: instant()) == 1)
            #expect(try await store.acquireLease("slack.socket-mode", holder: "b", until: instant(8), now: instant()) == 1)
            // The precomposed é and e with a combining accent are different names and holders.
            #expect(try await store.acquireLease("caf\u{E9}", holder: "caf\u{E9}", until: instant(8), now: instant()) == 1)
            #expect(try await store.acquireLease("cafe\u{301}", holder: "b", until: instant(8), now: instant()) == 1)
            #expect(try await store.acquireLease("caf\u{E9}", holder: "cafe\u{301}", until: instant(8), now: instant(1)) == nil)
        }
    }

    @Test("State is saved only with the current token, kept across release, read by the next holder", arguments: StoreKind.allCases)
    func stateWithToken(kind: StoreKind) async throws {
        try await withStore(kind) { store throws in
            #expect(try await store.leaseState(Self.name) == nil)
            #expect(try await !store.saveLeaseState(Self.name, value: "5", token: 1), "no lease, nothing to save into")
            let first = try #require(try await store.acquireLease(Self.name, holder: "a", until: instant(8), now: instant()))
            #expect(try await store.leaseState(Self.name) == nil)
            #expect(try await store.saveLeaseState(Self.name, value: "101", token: first))
            #expect(try await store.leaseState(Self.name) == "101")

            let second = try #require(try await store.acquireLease(Self.name, holder: "b", until: instant(20), now: instant(10)))
            #expect(second == first + 1)
            #expect(try await store.leaseState(Self.name) == "101", "the successor reads what the last holder saved")
            // The stalled holder wakes and writes: refused, and nothing changes.
            #expect(try await !store.saveLeaseState(Self.name, value: "99", token: first))
            #expect(try await store.leaseState(Self.name) == "101")
            #expect(try await store.saveLeaseState(Self.name, value: "{\"offset\":102}", token: second))
            // Renewals do not touch the state.
            #expect(try await store.acquireLease(Self.name, holder: "b", until: instant(22), now: instant(12)) == second)
            #expect(try await store.leaseState(Self.name) == "{\"offset\":102}")

            try await store.releaseLease(Self.name, holder: "b")
            #expect(try await store.leaseState(Self.name) == "{\"offset\":102}")
            #expect(try await store.acquireLease(Self.name, holder: "c", until: instant(23), now: instant(13)) == second + 1)
            #expect(try await store.leaseState(Self.name) == "{\"offset\":102}")
        }
    }

    @Test("Ten holders racing for a free lease, then for a lapsed one: exactly one wins each time", arguments: StoreKind.allCases)
    func concurrentAcquires(kind: StoreKind) async throws {
        try await withStore(kind) { store throws in
            for (round, now) in [instant(), instant(100)].enumerated() {
                let tokens = try await withThrowingTaskGroup(of: Int64?.self) { group in
                    for holder in 0..<10 {
                        group.addTask {
                            try await store.acquireLease(Self.name, holder: "round\(round)-replica\(holder)", until: now + .seconds(8), now: now)
                        }
                    }
                    return try await group.reduce(into: [Int64]()) { tokens, token in
                        if let token { tokens.append(token) }
                    }
                }
                #expect(tokens == [Int64(round + 1)], "round \(round)")
            }
        }
    }
}
