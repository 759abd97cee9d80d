import DiscordAdapter
import Foundation
import RelayCore
import RelayPipeline
import RelayPlatform
import RelayServer
import RelayStore
import RelayTestSupport
import RelayTestTags
import SlackAdapter
import TelegramAdapter
import Testing

/// Two relays sharing one store, as two replicas of a deployment: each connection a platform
/// allows once is held by one of them, and when its holder dies (killed: nothing released) the
/// other takes it over within the lease's duration and one renew interval, carrying on where
/// the dead one stopped. Leases here last 4 s and are renewed every 0.1 s
/// (`ReplicaRelay.fastLeases`); `ConnectionLeaseTests` checks the bound to the tick.
@Suite("Connections move between replicas", .tags(.peers))
struct ConnectionHandoverTests {
    /// The longest a takeover may take here. The leases here make it 4.1 s on an idle machine
    /// (`ConnectionLeaseTests` checks that bound to the tick, on a test clock); two cores shared
    /// with every other test have taken it past 6 s, so this checks that a takeover comes, not
    /// how soon.
    static let takeoverLimit: Duration = .seconds(20)

    @Test func oneReplicaPollsTelegramAndTheNextStartsFromTheOffsetTheDeadOneSaved() async throws {
        try await TelegramFakes.with { fakes in
            var configuration = fakes.configuration(mode: .polling)
            configuration.connectionLease = ReplicaRelay.fastLeases
            let (store, telegram, alice) = (MemoryStore(), fakes.telegram, TelegramFakes.alice)
            let a = try await ReplicaRelay.start("relay-a", configuration, store: store)
            try await eventually("relay-a to poll") { !telegram.offsets.isEmpty }
            let b = try await ReplicaRelay.start("relay-b", configuration, store: store)

            // relay-a's poll after this update is cut off: it dies without confirming it.
            telegram.failNext("getUpdates", with: .drop)
            telegram.enqueue(TelegramUpdates.message(updateID: 700, messageID: 70, chat: alice, from: alice, text: "/fix teh cat"))
            // (The run's placeholder comes first; the answer is edited into it.)
            try await eventually("the answer to update 700") { telegram.messages(chat: alice).filter { $0.text.contains("teh cat") }.count == 1 }
            try await eventually("relay-a's next poll, cut off") { telegram.calls("getUpdates").contains { $0.status == nil } }
            try await a.settled(adminToken: TelegramFakes.adminToken)
            // Several renew intervals with both relays up: relay-b never polled alongside.
            try await Task.sleep(for: .milliseconds(300))
            #expect(telegram.mostConcurrentPolls == 1)

            let killed = ContinuousClock.now
            await a.kill()
            let pollsByA = telegram.offsets.count
            try await eventually("relay-b to poll") { telegram.offsets.count > pollsByA }
            let takeover = killed.duration(to: .now)
            #expect(takeover < Self.takeoverLimit, "taken over after \(takeover)")
            #expect(telegram.offsets[pollsByA] == 701, "relay-b starts at the offset relay-a saved, confirming 700 it never saw")

            telegram.enqueue(TelegramUpdates.message(updateID: 701, messageID: 71, chat: alice, from: alice, text: "/fix teh dog"))
            try await eventually("the answer to update 701") { telegram.messages(chat: alice).filter { $0.text.contains("teh dog") }.count == 1 }
            #expect(telegram.messages(chat: alice).count == 2)
            try await b.settled(adminToken: TelegramFakes.adminToken)
            #expect(telegram.deliveredUpdateIDs == [700, 701], "no update was given out twice")
            #expect(telegram.messages(chat: alice).compactMap(\.replyToMessageID).sorted() == [70, 71])
            await b.stop()
        }
    }

    @Test func theReplicaTakingOverTheGatewayResumesTheDeadOnesSession() async throws {
        try await DiscordFakes.with { fakes in
            var configuration = fakes.configuration(gateway: true)
            configuration.connectionLease = ReplicaRelay.fastLeases
            // Every new sequence number saved at once: the successor replays nothing handled.
            try Self.discord(&configuration) { $0.gatewayTimings.resumeSaveInterval = .zero }
            let (store, gateway, discord) = (MemoryStore(), fakes.gateway, fakes.discord)
            let a = try await ReplicaRelay.start("relay-a", configuration, store: store)
            _ = try #require(await gateway.next(FakeDiscordGateway.identify))
            let b = try await ReplicaRelay.start("relay-b", configuration, store: store)

            try await gateway.dispatch("MESSAGE_CREATE", FakeDiscordInteractions.mention("fix teh cat", id: "1500000000000000101"))
            let first = try #require(await discord.next(FakeDiscordAPI.createMessage))
            #expect(first["message_reference"]?["message_id"]?.stringValue == "1500000000000000101")
            try await a.settled(adminToken: DiscordFakes.adminToken)
            try await eventually("relay-a to save sequence 2") { try store.leaseState("discord.gateway")?.contains("\"seq\":2") == true }
            try await Task.sleep(for: .milliseconds(300))
            #expect(gateway.received(FakeDiscordGateway.connected).count == 1, "relay-b never connected alongside")

            let killed = ContinuousClock.now
            await a.kill()
            // Sent while no one holds the gateway: Discord replays it on RESUME.
            try await gateway.dispatch("MESSAGE_CREATE", FakeDiscordInteractions.mention("fix teh dog", id: "1500000000000000102"))
            let resume = try #require(await gateway.next(FakeDiscordGateway.resume))
            let takeover = killed.duration(to: .now)
            #expect(takeover < Self.takeoverLimit, "taken over after \(takeover)")
            #expect(resume["d"]?["session_id"]?.stringValue == "fake-session-1")
            #expect(resume["d"]?["seq"]?.intValue == 2)
            let second = try #require(await discord.next(FakeDiscordAPI.createMessage))
            #expect(second["message_reference"]?["message_id"]?.stringValue == "1500000000000000102")
            try await b.settled(adminToken: DiscordFakes.adminToken)
            #expect(gateway.received(FakeDiscordGateway.identify).count == 1, "the session went on: no second IDENTIFY")
            #expect(discord.requests(FakeDiscordAPI.createMessage).count == 2)
            await b.stop()
        }
    }

    @Test func aReplicaShuttingDownHandsTheGatewayOverAtOnceWithItsSession() async throws {
        try await DiscordFakes.with { fakes in
            var configuration = fakes.configuration(gateway: true)
            // A lease that would take 30 s to lapse: only a release explains a quick takeover.
            configuration.connectionLease = .init(duration: .seconds(30), renewInterval: .milliseconds(100), margin: .milliseconds(100))
            let (store, gateway, discord) = (MemoryStore(), fakes.gateway, fakes.discord)
            let a = try await ReplicaRelay.start("relay-a", configuration, store: store)
            _ = try #require(await gateway.next(FakeDiscordGateway.identify))
            let b = try await ReplicaRelay.start("relay-b", configuration, store: store)
            try await gateway.dispatch("MESSAGE_CREATE", FakeDiscordInteractions.mention("fix teh cat", id: "1500000000000000201"))
            _ = try #require(await discord.next(FakeDiscordAPI.createMessage))
            try await a.settled(adminToken: DiscordFakes.adminToken)

            let stopping = ContinuousClock.now
            await a.stop()
            let resume = try #require(await gateway.next(FakeDiscordGateway.resume))
            let takeover = stopping.duration(to: .now)
            #expect(takeover < .seconds(25), "taken over after \(takeover), before the lease would have lapsed")
            // relay-a saved where it was as it closed, keeping the session open for relay-b.
            #expect(resume["d"]?["session_id"]?.stringValue == "fake-session-1")
            #expect(resume["d"]?["seq"]?.intValue == 2)
            try await gateway.dispatch("MESSAGE_CREATE", FakeDiscordInteractions.mention("fix teh dog", id: "1500000000000000202"))
            let second = try #require(await discord.next(FakeDiscordAPI.createMessage))
            #expect(second["message_reference"]?["message_id"]?.stringValue == "1500000000000000202")
            #expect(gateway.received(FakeDiscordGateway.identify).count == 1)
            await b.stop()
        }
    }

    @Test func oneReplicaHoldsSocketModeAndTheOtherConnectsWhenItDies() async throws {
        try await withFakeSocketModeServer { socketMode in
            try await SlackFakes.with { fakes in
                fakes.slack.attach(socketMode: socketMode)
                var configuration = fakes.configuration(signingSecret: nil, appToken: fakes.slack.appToken)
                configuration.connectionLease = ReplicaRelay.fastLeases
                let store = MemoryStore()
                let a = try await ReplicaRelay.start("relay-a", configuration, store: store)
                try await socketMode.waitForConnections(count: 1)
                let b = try await ReplicaRelay.start("relay-b", configuration, store: store)
                try await Task.sleep(for: .milliseconds(300))
                #expect(socketMode.connectionCount == 1, "relay-b holds off while relay-a holds the lease")

                let killed = ContinuousClock.now
                await a.kill()
                try await socketMode.waitForConnections(count: 2)
                let takeover = killed.duration(to: .now)
                #expect(takeover < Self.takeoverLimit, "taken over after \(takeover)")
                let mention = SlackPayloads.socketModeEnvelope(
                    type: "events_api", envelopeID: "env-1",
                    payload: SlackFakes.mention("translate fr hello", eventID: "Ev0MOVED", channel: "C0SOCKET", ts: "1700000000.000060"))
                try await socketMode.send(json: mention, to: 2)
                #expect(try await socketMode.waitForAck(envelopeID: "env-1").first?.connection == 2)
                // The run's placeholder, then the answer in its place.
                _ = try #require(await fakes.slack.next(path: "chat.postMessage"))
                _ = try #require(await fakes.slack.next(path: "chat.update"))
                await b.stop()
            }
        }
    }

    /// Changes the Discord platform's configuration in `configuration`.
    static func discord(_ configuration: inout AppConfiguration, _ change: (inout DiscordConfiguration) -> Void) throws {
        var discord = try #require(configuration.platforms.first as? DiscordPlatform).configuration
        change(&discord)
        configuration.platforms = [DiscordPlatform(configuration: discord)]
    }
}
