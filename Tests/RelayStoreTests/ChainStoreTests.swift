import Foundation
import RelayCore
import RelayStore
import Testing

@Suite("Chains in the SQLite store")
struct ChainStoreTests {
    static func chain(_ name: String, team: String = "T1", source: String = "input > grammar > output") -> SavedChain {
        SavedChain(team: team, name: name, source: source, creator: "U1", createdAt: instant(), updatedAt: instant())
    }

    @Test("Save, read, list by name, delete")
    func crud() async throws {
        try await withTemporaryStore { store in
            #expect(try await store.chain(team: "T1", name: "polish") == nil)
            for name in ["polish", "brief", "check"] {
                try await store.saveChain(Self.chain(name))
            }
            #expect(try await store.chain(team: "T1", name: "polish") == Self.chain("polish"))
            #expect(try await store.chains(team: "T1").map(\.name) == ["brief", "check", "polish"])

            #expect(try await store.deleteChain(team: "T1", name: "check"))
            #expect(try await !store.deleteChain(team: "T1", name: "check"))
            #expect(try await store.chain(team: "T1", name: "check") == nil)
            #expect(try await store.chains(team: "T1").map(\.name) == ["brief", "polish"])
        }
    }

    @Test("Teams do not see each other's chains")
    func teamIsolation() async throws {
        try await withTemporaryStore { store in
            try await store.saveChain(Self.chain("polish", team: "T1", source: "input > grammar > output"))
            try await store.saveChain(Self.chain("polish", team: "T2", source: "input > summarize > output"))
            try await store.saveChain(Self.chain("other", team: "T2"))

            #expect(try await store.chain(team: "T1", name: "polish")?.source == "input > grammar > output")
            #expect(try await store.chain(team: "T2", name: "polish")?.source == "input > summarize > output")
            #expect(try await store.chains(team: "T1").map(\.name) == ["polish"])
            #expect(try await store.chain(team: "T1", name: "other") == nil)

            #expect(try await store.deleteChain(team: "T2", name: "polish"))
            #expect(try await store.chain(team: "T1", name: "polish") != nil)
            #expect(try await store.chains(team: "T3").isEmpty)
        }
    }

    @Test("Saving an existing name replaces the source and keeps createdAt and creator")
    func upsert() async throws {
        try await withTemporaryStore { store in
            try await store.saveChain(Self.chain("polish"))
            var edited = Self.chain("polish", source: "input > rewrite:formal > verify:80 > output")
            edited.creator = "ADMIN"
            edited.createdAt = instant(500)
            edited.updatedAt = instant(600)
            try await store.saveChain(edited)

            let stored = try #require(try await store.chain(team: "T1", name: "polish"))
            #expect(stored.source == "input > rewrite:formal > verify:80 > output")
            #expect(stored.updatedAt == instant(600))
            #expect(stored.createdAt == instant())
            #expect(stored.creator == "U1")
            #expect(try await store.chains(team: "T1").count == 1)
        }
    }

    @Test("Text and dates round-trip exactly enough")
    func roundTrip() async throws {
        try await withTemporaryStore { store in
            let created = Date(timeIntervalSince1970: 1_750_000_000.123_456)
            let chain = SavedChain(
                team: "T'1", name: "naïve → 🚀", source: "model:cheap \"Say '{input}' twice\" > output",
                creator: "U\"1", createdAt: created, updatedAt: created)
            try await store.saveChain(chain)
            let stored = try #require(try await store.chain(team: "T'1", name: "naïve → 🚀"))
            #expect(stored.source == chain.source)
            #expect(stored.creator == chain.creator)
            #expect(abs(stored.createdAt.timeIntervalSince(created)) < 0.001)
        }
    }
}
