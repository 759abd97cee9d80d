import Foundation
import RelayCore
import RelayPlatform
import RelayTestSupport
import Synchronization
import Testing

/// A platform's published signing keys (`PublishedKeys`), on the manual clock: fetched once and
/// kept, an unknown key id fetching them again at most once a minute, a day's age, one fetch at
/// a time, a failed fetch keeping what was known.
@Suite("Published signing keys")
struct PublishedKeysTests {
    /// A key server whose key ids a test sets, counting fetches; `failing` makes them fail.
    final class Server: Sendable {
        private let state = Mutex((ids: Set<String>(["k1"]), fetches: 0, failing: false))
        var fetches: Int { state.withLock { $0.fetches } }
        func publish(_ ids: Set<String>) { state.withLock { $0.ids = ids } }
        func fail(_ failing: Bool) { state.withLock { $0.failing = failing } }

        func fetch() async -> Result<PublishedKeys<Set<String>>.Fetched, KeyFetchFailure> {
            state.withLock { state in
                state.fetches += 1
                return state.failing
                    ? .failure(KeyFetchFailure("the key set could not be fetched (HTTP 503)")) : .success(.init(keys: state.ids, ids: state.ids))
            }
        }
    }

    static func found(_ lookup: PublishedKeys<Set<String>>.Lookup) -> Bool {
        if case .found = lookup { true } else { false }
    }

    @Test func keysAreFetchedOnceAndAnUnknownIDFetchesAgainAtMostOnceAMinute() async {
        let clock = ManualClock()
        let server = Server()
        let keys = PublishedKeys<Set<String>>(clock: clock) { await server.fetch() }
        for _ in 0..<5 { #expect(Self.found(await keys.lookUp(kid: "k1"))) }
        #expect(server.fetches == 1)
        server.publish(["k1", "k2"])
        // Within the minute of the first fetch: unknown, nothing fetched.
        for _ in 0..<5 {
            guard case .unknown = await keys.lookUp(kid: "k2") else {
                Issue.record("k2 found within the minute")
                return
            }
        }
        #expect(server.fetches == 1)
        clock.advance(by: .seconds(61))
        #expect(Self.found(await keys.lookUp(kid: "k2")))
        #expect(server.fetches == 2)
        // A made-up id right after: no fetch.
        guard case .unknown = await keys.lookUp(kid: "made-up") else {
            Issue.record("a made-up id found")
            return
        }
        #expect(server.fetches == 2)
    }

    @Test func keysADayOldAreFetchedAgainAndAFailedFetchKeepsThem() async {
        let clock = ManualClock()
        let server = Server()
        let keys = PublishedKeys<Set<String>>(clock: clock) { await server.fetch() }
        #expect(Self.found(await keys.lookUp(kid: "k1")))
        clock.advance(by: .seconds(24 * 3600 + 1))
        server.fail(true)
        #expect(Self.found(await keys.lookUp(kid: "k1")), "the known keys are kept when a fetch fails")
        #expect(server.fetches == 2)
        server.fail(false)
        clock.advance(by: .seconds(61))
        #expect(Self.found(await keys.lookUp(kid: "k1")))
        #expect(server.fetches == 3)
    }

    @Test func withNoKeysAFailedFetchSaysWhy() async {
        let server = Server()
        server.fail(true)
        let keys = PublishedKeys<Set<String>>(clock: ManualClock()) { await server.fetch() }
        guard case .unavailable(let reason) = await keys.lookUp(kid: "k1") else {
            Issue.record("not unavailable")
            return
        }
        #expect(reason.contains("HTTP 503"))
    }

    @Test func tokensArrivingTogetherShareOneFetch() async {
        let server = Server()
        let keys = PublishedKeys<Set<String>>(clock: ManualClock()) {
            try? await Task.sleep(for: .milliseconds(50))
            return await server.fetch()
        }
        await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<20 { group.addTask { Self.found(await keys.lookUp(kid: "k1")) } }
            for await found in group { #expect(found) }
        }
        #expect(server.fetches == 1)
    }
}
