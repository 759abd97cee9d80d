import Foundation
import RelayPipeline
import RelayStore
import RelayTestSupport
import RelayTestTags
import Testing

/// The served API's per-key limits, counted in PostgreSQL for every replica (issue 24, point 5).
@Suite("API calls counted across replicas", .tags(.peers))
struct CallCountStoreTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000.25)

    @Test("A key gets its minute's calls, then a refusal saying when the oldest leaves the minute")
    func minuteLimit() async throws {
        try await withPostgresStore { (store: PostgresStore) async throws in
            for second in 0..<3 {
                #expect(try await store.admitCall(caller: "key:a", now: Self.start + Double(second), perMinute: 3, perDay: 100) == .allowed)
            }
            // The first call (second 0) leaves the minute 60 s after it: 57.75 s from second 2.25 → 58.
            #expect(try await store.admitCall(caller: "key:a", now: Self.start + 2, perMinute: 3, perDay: 100) == .refused(perDay: false, retryAfter: 58))
            #expect(try await store.admitCall(caller: "key:b", now: Self.start + 2, perMinute: 3, perDay: 100) == .allowed, "another key counts apart")
            // Once its second is 60 s past, the first call no longer counts.
            #expect(try await store.admitCall(caller: "key:a", now: Self.start + 60, perMinute: 3, perDay: 100) == .allowed)
            #expect(try await store.admitCall(caller: "key:a", now: Self.start + 60.5, perMinute: 3, perDay: 100) == .refused(perDay: false, retryAfter: 1))
        }
    }

    @Test("A key gets its day's calls, then a refusal until the oldest minute is a day past")
    func dayLimit() async throws {
        try await withPostgresStore { (store: PostgresStore) async throws in
            for minute in 0..<4 {
                #expect(try await store.admitCall(caller: "key:a", now: Self.start + Double(minute * 60), perMinute: 10, perDay: 4) == .allowed)
            }
            let later = Self.start + 3_600
            // The first call's minute (started 0.25 s before it) ends a day later: 86 400 − 3 600 − 0.25 + 60 → 82 860.
            #expect(try await store.admitCall(caller: "key:a", now: later, perMinute: 10, perDay: 4) == .refused(perDay: true, retryAfter: 82_860))
            // Not a second sooner: the minute's calls count until it has ended a day ago.
            #expect(try await store.admitCall(caller: "key:a", now: Self.start + 86_459, perMinute: 10, perDay: 4) == .refused(perDay: true, retryAfter: 1))
            #expect(try await store.admitCall(caller: "key:a", now: Self.start + 86_460, perMinute: 10, perDay: 4) == .allowed)
        }
    }

    @Test("Two replicas counting one key at once allow exactly its limit between them")
    func replicasShareTheCount() async throws {
        try await PostgresTestServer.shared().withDatabase { database in
            let (a, b) = (try await openTestStore(database.url), try await openTestStore(database.url))
            let allowed = try await withThrowingTaskGroup(of: Bool.self) { group in
                for call in 0..<40 {
                    let store = call.isMultiple(of: 2) ? a : b
                    group.addTask { try await store.admitCall(caller: "key:shared", now: Self.start, perMinute: 25, perDay: 1_000) == .allowed }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            try await a.close()
            try await b.close()
            #expect(allowed == 25)
        }
    }
}
