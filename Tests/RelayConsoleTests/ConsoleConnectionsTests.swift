import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import RelayConsole
import RelayCore
import RelayPipeline
import RelayStore
import RelayTestSupport
import Testing

/// Issue 45, point 2 (connections): each platform's state, which replica holds its leases, its
/// last reply and last delivery error, and the outbox's depth, as the store and the platforms say.
@Suite("Console: connections")
struct ConsoleConnectionsTests {
    @Test func eachPlatformShowsItsStateItsLeaseHolderItsLastReplyAndError() async throws {
        let harness = ConsoleHarness()
        let now = harness.clock.now
        func entry(_ id: String, platform: String, at offset: Double) -> OutboxEntry {
            OutboxEntry(
                id: id, platform: platform, conversation: "\(platform):c", address: "{}", content: .reply(Reply(kind: .result, body: id)),
                nextAttemptAt: now.addingTimeInterval(offset), createdAt: now.addingTimeInterval(offset))
        }
        try await harness.store.enqueue(entry("t1", platform: "telegram", at: -120))
        try await harness.store.enqueue(entry("t2", platform: "telegram", at: -60))
        try await harness.store.reschedule(id: "t1", attempts: 1, nextAttemptAt: now, lastError: "HTTP 429 <retry after 3>")
        _ = try await harness.store.acquireLease("telegram.delivery", holder: "relay-a/12/0000beef", until: now.addingTimeInterval(30), now: now)
        _ = try await harness.store.acquireLease("retention", holder: "relay-b/7/00000001", until: now.addingTimeInterval(30), now: now)

        let router = Router()
        ConsoleRoutes(
            relay: harness.relay, tokens: harness.tokens, clock: harness.clock, logger: Logger(label: "console-test"),
            platformStates: { ["telegram": "on", "slack": "off: SLACK_BOT_TOKEN is not set"] }
        ).add(to: router)
        let path = try #require(ConsoleHarness.path(of: await harness.ask()))
        try await Application(router: router).test(.router) { client in
            let signIn = try await client.execute(
                uri: "/console/signin", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                body: form(["t": String(path.dropFirst("/console/signin?t=".count))]))
            let cookie = cookieHeader(try #require(signIn.sessionCookie))
            let page = try await client.execute(uri: "/console/test/T1/connections", method: .get, headers: [.cookie: cookie]).text
            #expect(page.contains(#"Replies waiting in the outbox: <strong id="depth">2</strong>"#), "\(page)")
            #expect(page.contains(#"data-platform="telegram" data-pending="2""#))
            #expect(page.contains(#"<li data-lease="telegram.delivery" data-holder="relay-a/12/0000beef">"#))
            #expect(page.contains("Last reply queued: 2026-12-05 19:45:40 UTC"), "\(page)")
            #expect(page.contains("Last delivery error: HTTP 429 &lt;retry after 3&gt; (a reply queued 2026-12-05 19:44:40 UTC)"))
            #expect(page.contains("off: SLACK_BOT_TOKEN is not set"))
            #expect(page.contains(#"<li data-lease="retention">retention: held by relay-b/7/00000001"#))
        }
    }
}
