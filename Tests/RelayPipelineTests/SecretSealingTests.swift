import Foundation
import RelayCore
import RelayStore
import Testing

@testable import RelayPipeline

/// A secret reply (a console sign-in link) never rests in the store in plain text: the one
/// outbox seals its text as it is written and the worker opens it just before delivery; a text
/// that no longer opens is delivered as the reason the asker gets nothing.
@Suite("The outbox seals secret replies")
struct SecretSealingTests {
    /// A toy seal for the test: the text reversed and marked (serve's is AES-GCM, `OutboxSecretBox`).
    static let sealer = SecretSealer(seal: { "R" + String($0.reversed()) }, open: { $0.hasPrefix("R") ? String($0.dropFirst().reversed()) : nil })

    @Test func aSecretsTextIsSealedInTheStoreAndOpenedForDelivery() async throws {
        let store = MemoryStore()
        let outbox = Outbox(store: store, sealer: Self.sealer)
        var secret = Reply.info("https://relay.example/console/signin?t=SECRET")
        secret.isSecret = true
        let entry = outbox.entry(platform: "slack", conversation: "slack:c", address: "{}", content: .reply(secret))
        try await outbox.enqueue(entry)
        let stored = try #require(try await store.outboxEntry(id: entry.id))
        guard case .reply(let kept) = stored.content else {
            Issue.record("not a reply")
            return
        }
        #expect(!kept.body.contains("SECRET") && kept.body.hasPrefix("sealed:v1:"), "\(kept.body)")
        #expect(outbox.opened(stored).content == .reply(secret))

        // Not secret: kept as it is.
        let plain = outbox.entry(platform: "slack", conversation: "slack:c", address: "{}", content: .reply(.info("hello")))
        try await outbox.enqueue(plain)
        #expect(try await store.outboxEntry(id: plain.id)?.content == .reply(.info("hello")))

        // Sealed by another key (the relay's secret changed): the reason instead.
        let other = Outbox(store: store, sealer: SecretSealer(seal: { $0 }, open: { _ in nil }))
        #expect(other.opened(stored).content == .reply(.secretRefused))
    }
}
