import Foundation
import RelayCore
import RelayPipeline
import RelayStore
import RelayTestTags
import Testing

@Suite("Chains, in every store", .tags(.peers))
struct ChainStoreTests {
    static func chain(_ name: String, team: String = "T1", source: String = "input > grammar > output") -> SavedChain {
        SavedChain(team: team, name: name, source: source, creator: "U1", createdAt: instant(), updatedAt: instant())
    }

    @Test("Save, read, list by name, delete", arguments: StoreKind.allCases)
    func crud(kind: StoreKind) async throws {
        try await withStore(kind) { store in
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

    @Test("Teams do not see each other's chains", arguments: StoreKind.allCases)
    func teamIsolation(kind: StoreKind) async throws {
        try await withStore(kind) { store in
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

    @Test("Saving an existing name replaces the source and keeps createdAt and creator", arguments: StoreKind.allCases)
    func upsert(kind: StoreKind) async throws {
        try await withStore(kind) { store in
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

    @Test("Text and dates round-trip exactly enough", arguments: StoreKind.allCases)
    func roundTrip(kind: StoreKind) async throws {
        try await withStore(kind) { store in
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

    @Test(
        "Names are compared byte for byte: two Unicode spellings of one name are two chains",
        arguments: StoreKind.allCases)
    func namesCompareExactly(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let composed = "caf\u{E9}"  // "é" as one code point
            let decomposed = "cafe\u{301}"  // "e" and a combining accent
            try await store.saveChain(Self.chain(composed, source: "input > grammar > output"))
            try await store.saveChain(Self.chain(decomposed, source: "input > summarize > output"))
            #expect(try await store.chain(team: "T1", name: composed)?.source == "input > grammar > output")
            #expect(try await store.chain(team: "T1", name: decomposed)?.source == "input > summarize > output")
            // In UTF-8 byte order, "e" (0x65) comes before "é" (0xC3 0xA9).
            let names = try await store.chains(team: "T1").map { Array($0.name.utf8) }
            #expect(names == [Array(decomposed.utf8), Array(composed.utf8)])

            #expect(try await store.deleteChain(team: "T1", name: decomposed))
            #expect(try await store.chain(team: "T1", name: composed) != nil)
        }
    }

    @Test("A NUL character in a name is kept", arguments: StoreKind.allCases)
    func nulInName(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await store.saveChain(Self.chain("a\u{0}b"))
            let names = try await store.chains(team: "T1").map { Array($0.name.utf8) }
            // PostgreSQL text cannot hold U+0000: the shared store keeps U+FFFD in its place.
            #expect(names == [kind == .postgres ? [0x61, 0xEF, 0xBF, 0xBD, 0x62] : [0x61, 0x00, 0x62]])
        }
    }
}
