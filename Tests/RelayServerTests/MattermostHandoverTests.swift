import Foundation
import MattermostAdapter
import RelayCore
import RelayServer
import RelayStore
import RelayTestSupport
import RelayTestTags
import Testing

/// The Mattermost websocket is held by one replica at a time (`mattermost.websocket`): two
/// connections would each get every event and answer every mention twice. When its holder dies,
/// the other takes it over and answers.
@Suite("Mattermost's websocket moves between replicas", .tags(.peers))
struct MattermostHandoverTests {
    @Test func oneReplicaHoldsTheWebsocketAndTheNextTakesItOver() async throws {
        try await MattermostFakes.with { fakes in
            var configuration = fakes.configuration(websocket: true)
            configuration.connectionLease = ReplicaRelay.fastLeases
            let (store, mattermost) = (MemoryStore(), fakes.mattermost)
            let a = try await ReplicaRelay.start("relay-a", configuration, store: store)
            _ = try #require(await mattermost.nextAuthenticatedSocket())
            let b = try await ReplicaRelay.start("relay-b", configuration, store: store)
            // Several renew intervals with both relays up: relay-b never connected alongside.
            try await Task.sleep(for: .milliseconds(400))
            #expect(mattermost.authenticatedSocketCount == 1)
            #expect(mattermost.requests("websocket authenticated").count == 1)

            let mention = try await mattermost.post("@rhea translate fr one", channel: MattermostEndToEndTests.channel)
            _ = try #require(await mattermost.next("POST /posts"))
            try await a.settled(adminToken: MattermostFakes.adminToken)

            let killed = ContinuousClock.now
            await a.kill()
            _ = try #require(await mattermost.nextAuthenticatedSocket(), "relay-b connects")
            #expect(killed.duration(to: .now) < ConnectionHandoverTests.takeoverLimit)
            _ = try await mattermost.post("@rhea translate fr two", channel: MattermostEndToEndTests.channel)
            let second = try #require(await mattermost.next("POST /posts"))
            try await b.settled(adminToken: MattermostFakes.adminToken)
            let text = second["message"]?.stringValue ?? ""
            #expect(text.contains("two"), "\(second)")
            let answers = mattermost.posts(channel: MattermostEndToEndTests.channel).filter { $0.via == "POST /posts" }
            #expect(answers.count == 2, "each mention answered once: \(answers.map(\.message))")
            #expect(answers.first?.rootID == mention)
            await b.stop()
        }
    }
}
