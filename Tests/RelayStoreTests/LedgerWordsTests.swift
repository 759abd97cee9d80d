import Foundation
import PostgresNIO
import RelayCore
import RelayPipeline
import RelayTestSupport
import RelayTestTags
import Testing

@testable import RelayStore

/// PostgreSQL's words of each claim (`ledger.claim_words`), which its ledger search reads: made
/// for entries written before they existed, and gone with the claim.
@Suite("The ledger's words on PostgreSQL", .tags(.peers))
struct LedgerWordsTests {
    @Test("A PostgreSQL store of version 12 gets its claims' words, every page of them")
    func wordsForEarlierEntries() async throws {
        try await PostgresTestServer.shared().withDatabase { database in
            let old = try await openTestStore(database.url, before: 13)
            let count = PostgresLedgerWords.page + 10
            try await old.recordConsensus(LedgerStoreTests.entry("The first crème brûlée", at: 0))
            for index in 1..<count { try await old.recordConsensus(LedgerStoreTests.entry("Claim number \(index)", at: Double(index))) }
            try await old.recordConsensus(LedgerStoreTests.entry(nil, at: Double(count)))
            try await old.close()

            let store = try await openTestStore(database.url)
            #expect(try await store.searchLedger(team: "T1", words: ["creme", "BRUL"], limit: 10).map(\.claim) == ["The first crème brûlée"])
            #expect(try await store.searchLedger(team: "T1", words: ["number", "\(count - 1)"], limit: 10).map(\.claim) == ["Claim number \(count - 1)"])
            #expect(try await Self.withWords(store) == count, "every entry with a claim, none without")
            try await store.close()
        }
    }

    @Test("Retention that drops a claim drops its words")
    func wordsGoWithTheClaim() async throws {
        try await PostgresTestServer.shared().withDatabase { database in
            let store = try await openTestStore(database.url)
            try await store.recordConsensus(LedgerStoreTests.entry("Kept whole", at: 100))
            try await store.recordConsensus(LedgerStoreTests.entry("Only its numbers", at: 100, user: "erin"))
            try await store.saveSettings(Settings(retention: .metadata), for: .user(team: "T1", user: "erin"))
            #expect(try await Self.withWords(store) == 2)
            _ = try await store.purgeLedger(before: instant(0), defaultRetention: .full)
            #expect(try await Self.withWords(store) == 1)
            #expect(try await store.searchLedger(team: "T1", words: ["kept"], limit: 10).map(\.claim) == ["Kept whole"])
            try await store.close()
        }
    }

    /// Entries that have words.
    static func withWords(_ store: PostgresStore) async throws -> Int {
        try await store.query("count the ledger's words", "SELECT count(*)::bigint AS n FROM ledger WHERE claim_words IS NOT NULL").first?.int("n") ?? -1
    }
}
