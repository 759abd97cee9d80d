import RelayCore
import RelayPipeline
import RelayStore
import RelayTestTags
import Testing

@Suite("Using a closed store, in every store", .tags(.peers))
struct ClosedStoreTests {
    @Test(
        "Operations after close() fail with StoreError.closed; closing twice is harmless",
        arguments: StoreKind.allCases)
    func useAfterClose(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await store.close()
            try await store.close()
            await #expect(throws: StoreError.closed) {
                try await store.chains(team: "T")
            }
            await #expect(throws: StoreError.closed) {
                try await store.claimEvent(key: "k", expiresAt: instant(60), now: instant())
            }
            #expect(StoreError.closed.description.contains("close()"))
        }
    }

    @Test("Every operation fails with StoreError.closed after close()", arguments: StoreKind.allCases)
    func everyOperation(kind: StoreKind) async throws {
        try await withStore(kind) { store in
            try await store.enqueue(OutboxFixtures.entry("e1"))
            try await store.close()
            let chain = SavedChain(
                team: "T", name: "c", source: "input > output", creator: "U", createdAt: instant(),
                updatedAt: instant())
            let command = CustomCommand(team: "T", name: "c", template: "{input}", creator: "U", createdAt: instant())
            let run = HistoryEntry(
                team: "T", user: "U", channel: "C", command: "fix", commandLine: nil, resultText: nil, succeeded: true,
                elapsed: 1, createdAt: instant())
            let scope = SettingsScope.user(team: "T", user: "U")
            let operations: [@Sendable () async throws -> Void] = [
                { try await store.saveChain(chain) },
                { _ = try await store.chain(team: "T", name: "c") },
                { _ = try await store.deleteChain(team: "T", name: "c") },
                { try await store.saveCustomCommand(command) },
                { _ = try await store.customCommand(team: "T", name: "c") },
                { _ = try await store.customCommands(team: "T") },
                { _ = try await store.deleteCustomCommand(team: "T", name: "c") },
                { _ = try await store.settings(scope) },
                { try await store.saveSettings(Settings(lang: "fr"), for: scope) },
                { try await store.recordRun(run) },
                { _ = try await store.history(team: "T", user: "U", limit: 10) },
                { try await store.enqueue(OutboxFixtures.entry("e2")) },
                { _ = try await store.claimDueOutbox(now: instant(), leaseUntil: instant(60), limit: 10) },
                { try await store.markSent(id: "e1", platformRef: nil, at: instant()) },
                { try await store.reschedule(id: "e1", attempts: 1, nextAttemptAt: instant(), lastError: "x") },
                { try await store.markFailed(id: "e1", attempts: 1, lastError: "x") },
                { _ = try await store.outboxEntry(id: "e1") },
                { _ = try await store.pendingOutboxCount() },
                { try await store.releaseOutboxLeases() },
                { try await store.purgeOutbox(before: instant()) },
            ]
            for operation in operations {
                await #expect(throws: StoreError.closed) { try await operation() }
            }
        }
    }
}
