import RelayCore
import RelayPipeline
import RelayStore
import RelayTestTags
import Testing

@Suite("The fact-check ledger, in every store", .tags(.peers))
struct LedgerStoreTests {
    static func entry(
        _ claim: String?, at offset: Double, team: String = "T1", user: String = "alice", channel: String = "general",
        verdict: Verdict? = .true
    ) -> LedgerEntry {
        LedgerEntry(
            team: team, user: user, channel: channel, origin: .tribunal, claim: claim, answer: claim.map { "About: \($0)" },
            verdict: verdict, score: 0.8, answered: 2, asked: 3,
            judges: [
                LedgerJudge(model: "mini", verdict: .true, confidence: 0.9, answer: "It is so.", latency: 1.25),
                LedgerJudge(model: "local", verdict: .false, confidence: 0.6, answer: "It is not.", latency: 2),
                LedgerJudge(model: "slow", error: "did not answer in time"),
            ],
            backend: "council", promptsVersion: "council-prompts/1", createdAt: instant(offset))
    }

    @Test("An entry comes back as recorded, judge by judge, with growing ids", arguments: StoreKind.allCases)
    func roundTrip(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let first = try await store.recordConsensus(Self.entry("The Eiffel Tower is in Berlin", at: 10))
            let second = try await store.recordConsensus(Self.entry("Water is wet", at: 5))
            #expect(second > first)
            var expected = Self.entry("The Eiffel Tower is in Berlin", at: 10)
            expected.id = first
            #expect(try await store.ledgerEntry(team: "T1", id: first) == expected)
            #expect(try await store.ledgerEntry(team: "T2", id: first) == nil, "another team's entry is not there")
            #expect(try await store.ledgerEntry(team: "T1", id: 999) == nil)
        }
    }

    @Test("Numbers that are not finite are not kept as they came", arguments: StoreKind.allCases)
    func hostileNumbers(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            var entry = Self.entry("NaN everywhere", at: 1)
            entry.score = .nan
            entry.judges[0].confidence = .infinity
            entry.judges[1].latency = -.infinity
            entry.judges[1].confidence = 7
            let id = try await store.recordConsensus(entry)
            let stored = try #require(try await store.ledgerEntry(team: "T1", id: id))
            #expect(stored.score == 0)
            #expect(stored.judges[0].confidence == nil)
            #expect(stored.judges[1].latency == nil)
            #expect(stored.judges[1].confidence == 1)
        }
    }

    @Test("Search finds the oldest of 1 300 entries, and only the newest of many matches", arguments: StoreKind.allCases)
    func searchAcrossALongLedger(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            // PostgreSQL reads the claims a page at a time (500, then 1 000…): the needle is past both.
            try await store.recordConsensus(Self.entry("A needle in the hay", at: 0))
            for index in 1...1_300 { try await store.recordConsensus(Self.entry("Hay number \(index)", at: Double(index))) }
            #expect(try await store.searchLedger(team: "T1", words: ["needle"], limit: 10).map(\.claim) == ["A needle in the hay"])
            #expect(
                try await store.searchLedger(team: "T1", words: ["hay"], limit: 3).map(\.claim) == ["Hay number 1300", "Hay number 1299", "Hay number 1298"])
            #expect(try await store.searchLedger(team: "T1", words: ["straw"], limit: 10).isEmpty)
        }
    }

    @Test("Search: every word, as a prefix, ignoring case and accents; newest first; one team", arguments: StoreKind.allCases)
    func search(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await store.recordConsensus(Self.entry("The Eiffel Tower is in Berlin", at: 1))
            try await store.recordConsensus(Self.entry("The Eiffel Tower is in Paris", at: 2))
            try await store.recordConsensus(Self.entry("Crème brûlée is French", at: 3))
            try await store.recordConsensus(Self.entry("The Eiffel Tower is in Rome", at: 4, team: "T2"))
            try await store.recordConsensus(Self.entry(nil, at: 5))  // kept without its text

            func claims(_ words: [String]) async throws -> [String?] {
                try await store.searchLedger(team: "T1", words: words, limit: 10).map(\.claim)
            }
            #expect(try await claims(["eiffel"]) == ["The Eiffel Tower is in Paris", "The Eiffel Tower is in Berlin"])
            #expect(try await claims(["EIFF", "berl"]) == ["The Eiffel Tower is in Berlin"])
            #expect(try await claims(["creme", "brulee"]) == ["Crème brûlée is French"])
            #expect(try await claims(["rome"]).isEmpty, "T2's entry is not T1's")
            #expect(try await claims([]).count == 4, "no words: the newest")
            #expect(try await store.searchLedger(team: "T1", words: [], limit: 2).map(\.claim) == [nil, "Crème brûlée is French"])
            // Nothing a user types is FTS syntax: quotes, stars, operators are words or nothing.
            #expect(try await claims(["\"eiffel", "OR", "paris"]).isEmpty)
            #expect(try await claims(["eiffel)", "(paris"]) == ["The Eiffel Tower is in Paris"])
            #expect(try await claims(["NEAR(eiffel", "paris)"]).isEmpty, "a word is its tokens in a row: `near eiffel` is not in any claim")
            #expect(try await claims(["*"]).isEmpty)
            #expect(try await claims(["eiffel-tower"]) == ["The Eiffel Tower is in Paris", "The Eiffel Tower is in Berlin"])
            #expect(try await claims(["tower-eiffel"]).isEmpty, "both words are there, not in that order")
        }
    }

    @Test("Search: quotes and backslashes are words, long words match whole or by their start", arguments: StoreKind.allCases)
    func searchOddWords(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let long = String(repeating: "ab", count: 150) + "z"  // past PostgreSQL's kept 255 bytes
            try await store.recordConsensus(Self.entry("Miles O'Brien and a back\\slash", at: 1))
            try await store.recordConsensus(Self.entry("The word \(long) is long", at: 2))
            try await store.recordConsensus(Self.entry("Ça coûte \(String(repeating: "é", count: 300))", at: 3))

            func claims(_ words: [String]) async throws -> [String?] {
                try await store.searchLedger(team: "T1", words: words, limit: 10).map(\.claim)
            }
            #expect(try await claims(["o'brien"]) == ["Miles O'Brien and a back\\slash"])
            #expect(try await claims(["'", "back\\sl"]) == ["Miles O'Brien and a back\\slash"])
            #expect(try await claims(["o'brian"]).isEmpty)
            #expect(try await claims([long]) == ["The word \(long) is long"])
            #expect(try await claims([String(long.prefix(280))]) == ["The word \(long) is long"])
            #expect(try await claims([String(long.dropLast()) + "y"]).isEmpty, "a difference past the kept bytes still counts")
            #expect(try await claims(["ca", String(repeating: "E", count: 150)]) == ["Ça coûte \(String(repeating: "é", count: 300))"])
            // More different words than PostgreSQL keeps for a claim (a third of a megabyte).
            let many = (0..<40_000).map { "w\($0)x" }.joined(separator: " ")
            try await store.recordConsensus(Self.entry(many, at: 4))
            #expect(try await claims(["w39999x"]).map { $0?.count } == [many.count])
            #expect(try await claims(["w39999y"]).isEmpty)
        }
    }

    @Test("Export is the team's whole ledger, oldest first", arguments: StoreKind.allCases)
    func export(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await store.recordConsensus(Self.entry("second", at: 2))
            try await store.recordConsensus(Self.entry("first", at: 1))
            try await store.recordConsensus(Self.entry("elsewhere", at: 3, team: "T2"))
            #expect(try await store.ledgerEntries(team: "T1").map(\.claim) == ["first", "second"])
            #expect(try await store.recentLedger(limit: 2).map(\.claim) == ["elsewhere", "second"], "learning reads every team")
        }
    }

    @Test("A mark is the team's, and a later one replaces it", arguments: StoreKind.allCases)
    func marks(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let id = try await store.recordConsensus(Self.entry("Water is wet", at: 1))
            #expect(try await store.markLedger(team: "T2", id: id, mark: LedgerMark(verdict: .false, user: "mallory", markedAt: instant(2))) == false)
            #expect(try await store.ledgerEntry(team: "T1", id: id)?.mark == nil)
            #expect(try await store.markLedger(team: "T1", id: id, mark: LedgerMark(verdict: .false, user: "bob", markedAt: instant(2))))
            #expect(try await store.markLedger(team: "T1", id: id, mark: LedgerMark(verdict: .partly, user: "carol", markedAt: instant(3))))
            #expect(try await store.ledgerEntry(team: "T1", id: id)?.mark == LedgerMark(verdict: .partly, user: "carol", markedAt: instant(3)))
            #expect(try await store.markLedger(team: "T1", id: id + 100, mark: LedgerMark(verdict: .true, user: "bob", markedAt: instant(4))) == false)
        }
    }

    @Test("Stamps are the newest entries of every team, in the same order, with their marks", arguments: StoreKind.allCases)
    func stamps(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            let first = try await store.recordConsensus(Self.entry("first", at: 1))
            var rhea = Self.entry("from the gateway", at: 2, team: "T2")
            rhea.backend = "rhea"
            let second = try await store.recordConsensus(rhea)
            let third = try await store.recordConsensus(Self.entry("third", at: 3))
            #expect(try await store.markLedger(team: "T1", id: first, mark: LedgerMark(verdict: .false, user: "bob", markedAt: instant(4))))
            let stamps = try await store.ledgerStamps(limit: 2)
            #expect(stamps == [LedgerStamp(id: third, backend: "council", mark: nil), LedgerStamp(id: second, backend: "rhea", mark: nil)])
            #expect(try await store.ledgerStamps(limit: 5) == store.recentLedger(limit: 5).map(LedgerStamp.init))
            #expect(try await store.ledgerStamps(limit: 5).last == LedgerStamp(id: first, backend: "council", mark: .false))
            #expect(try await store.ledgerStamps(limit: 0).isEmpty)
        }
    }

    @Test("Clearing deletes what one user asked in one team", arguments: StoreKind.allCases)
    func clear(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            for offset in [1.0, 2] { try await store.recordConsensus(Self.entry("mine \(offset)", at: offset)) }
            try await store.recordConsensus(Self.entry("bob's", at: 3, user: "bob"))
            try await store.recordConsensus(Self.entry("other team", at: 4, team: "T2"))
            #expect(try await store.clearLedger(team: "T1", user: "alice") == 2)
            #expect(try await store.ledgerEntries(team: "T1").map(\.claim) == ["bob's"])
            #expect(try await store.ledgerEntries(team: "T2").count == 1)
            #expect(try await store.searchLedger(team: "T1", words: ["mine"], limit: 10).isEmpty, "the search index forgets them too")
        }
    }

    @Test("Purging ages entries out and applies retention set since they were recorded", arguments: StoreKind.allCases)
    func purge(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await store.recordConsensus(Self.entry("old", at: 1))
            try await store.recordConsensus(Self.entry("kept", at: 100))
            try await store.recordConsensus(Self.entry("quiet user", at: 100, user: "carol"))
            try await store.recordConsensus(Self.entry("quiet channel", at: 100, user: "dave", channel: "secret"))
            let terse = try await store.recordConsensus(Self.entry("terse", at: 100, user: "erin"))
            try await store.saveSettings(Settings(retention: .off), for: .user(team: "T1", user: "carol"))
            try await store.saveSettings(Settings(retention: .off), for: .channel(team: "T1", channel: "secret"))
            try await store.saveSettings(Settings(retention: .metadata), for: .user(team: "T1", user: "erin"))

            #expect(try await store.purgeLedger(before: instant(50), defaultRetention: .full) == 3)
            #expect(try await store.ledgerEntries(team: "T1").map(\.user) == ["alice", "erin"])
            let stripped = try #require(try await store.ledgerEntry(team: "T1", id: terse))
            #expect(stripped.claim == nil && stripped.answer == nil)
            #expect(stripped.judges.map(\.answer) == [nil, nil, nil])
            #expect(stripped.judges.map(\.verdict) == [.true, .false, nil], "verdicts stay: they are what the council learns from")
            #expect(stripped.judges.map(\.latency) == [1.25, 2, nil])
            #expect(try await store.searchLedger(team: "T1", words: ["terse"], limit: 10).isEmpty)
            #expect(try await store.ledgerEntries(team: "T1").first?.claim == "kept")

            #expect(try await store.purgeLedger(before: instant(0), defaultRetention: .off) == 2)
            #expect(try await store.ledgerEntries(team: "T1").isEmpty)
        }
    }
}
