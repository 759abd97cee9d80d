import Foundation
import RelayCore
import RelayPipeline
import Testing

@testable import RelayStore

@Suite("The outbox in an SQLite file: restarts and content written by a newer version")
struct SQLiteOutboxTests {
    typealias Fixtures = OutboxFixtures

    // MARK: Restart

    @Test("Entries survive closing and reopening the file, and are claimable after a restart")
    func survivesRestart() async throws {
        try await withTemporaryFolder { folder in
            let path = folder.path("relay.sqlite")
            let waiting = Fixtures.entry("waiting", conversation: "C1", content: .reply(Fixtures.fullReply))
            let inFlight = Fixtures.entry("in-flight", conversation: "C2", created: 1)
            let sent = Fixtures.entry("sent", conversation: "C3", created: 2)

            let first = try await SQLiteStore.open(path: path)
            for entry in [waiting, inFlight, sent] {
                try await first.enqueue(entry)
            }
            // in-flight and sent are claimed; only sent is confirmed before the "crash".
            _ = try await first.claimDueOutbox(now: instant(10), leaseUntil: instant(3600), limit: 10)
            try await first.reschedule(id: "waiting", attempts: 1, nextAttemptAt: instant(10), lastError: "HTTP 500")
            try await first.markSent(id: "sent", platformRef: "ts-3", at: instant(11))
            try await first.close()

            let second = try await SQLiteStore.open(path: path)
            #expect(try await second.pendingOutboxCount() == 2)
            #expect(try await second.outboxEntry(id: "sent")?.state == .sent)
            // Without a release, the dead process's lease still holds in-flight back.
            #expect(try await claim(second, at: 20) == ["waiting"])
            try await second.releaseOutboxLeases()
            let claimed = try await second.claimDueOutbox(now: instant(20), leaseUntil: instant(80), limit: 10)
            #expect(claimed.map(\.id) == ["waiting", "in-flight"])
            var expected = waiting
            expected.attempts = 1
            expected.nextAttemptAt = instant(10)
            expected.lastError = "HTTP 500"
            #expect(claimed.first == expected)
            try await second.close()
        }
    }

    // MARK: Unreadable content

    @Test("Content this version cannot decode gives a clear StoreError, and does not stall the outbox")
    func unreadableContent() async throws {
        try await withTemporaryFolder { folder in
            let path = folder.path("relay.sqlite")
            let first = try await SQLiteStore.open(path: path)
            try await first.enqueue(Fixtures.entry("future", conversation: "C1", created: 0))
            try await first.enqueue(Fixtures.entry("after-future", conversation: "C1", created: 1))
            try await first.enqueue(Fixtures.entry("elsewhere", conversation: "C2", created: 2))
            try await first.close()

            // A newer rhea-relay writes a kind of content this one does not know.
            let newer = Migration(
                version: SQLiteStore.supportedSchemaVersion + 1,
                statements: [#"UPDATE outbox SET content = '{"poll":{"question":"Lunch?"}}' WHERE id = 'future'"#])
            let store = try await SQLiteStore.open(path: path, migrations: Migration.all + [newer])
            let error = try await #require(throws: StoreError.self) {
                try await store.outboxEntry(id: "future")
            }
            guard case .unreadableOutboxEntry(let id, _) = error else {
                Issue.record("Expected unreadableOutboxEntry, got \(error)")
                try await store.close()
                return
            }
            #expect(id == "future")
            #expect(error.description.contains("future"))

            // The unreadable head is given up on, so the conversation and the others go on.
            #expect(try await claim(store, at: 10) == ["after-future", "elsewhere"])
            #expect(try await store.pendingOutboxCount() == 2)
            try await store.close()
        }
    }
}
