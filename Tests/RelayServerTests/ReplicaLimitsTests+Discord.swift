import RelayCore
import RelayTestSupport
import Testing

/// Discord's limits counted per bot — its global 50 requests a second, each channel's message
/// buckets — hold for three replicas together, with the delivery lease moving midway (issue 49).
extension ReplicaLimitsTests {
    /// Mentions in 200 channels, in two waves, answered by replicas sharing one store; between
    /// the waves the delivery lease moves. Two chains in one channel add progress messages and
    /// their edits. The replica that lost the lease hands its queue over: sending it beside the
    /// new holder, each pacing on its own, would send up to 100 a second.
    @Test func aBurstOfMentionsWhoseDeliveryLeaseMovesMidwayStaysWithinDiscordsLimits() async throws {
        try await DiscordFakes.with { fakes in
            var limits = FakeDiscordRateLimits()
            // Arrivals up to 300 ms off their pacing are forgiven, as for Telegram's burst.
            limits.tolerance = .milliseconds(300)
            fakes.discord.rateLimits = limits
            try await Self.withReplicas(3, fakes.configuration(gateway: true)) { replicas, database in
                let discord = fakes.discord
                // Chains are saved by those who manage the server.
                discord.makeGuildAdmin(FakeDiscordInteractions.asker)
                _ = try #require(await fakes.gateway.next(FakeDiscordGateway.identify), "a replica connected to the gateway")
                try await fakes.gateway.dispatch(
                    "MESSAGE_CREATE",
                    FakeDiscordInteractions.mention(
                        "chain save polish = input > grammar > rewrite:formal > rewrite:shorter > output", id: "1500000000000009000"))
                try await eventually("the chain saved") {
                    discord.messages().contains { $0.content.contains("Saved chain") || "\($0.body)".contains("Saved chain") }
                }
                // Each model call takes 600 ms: a chain of three shows its progress before its answer.
                await fakes.tribunal.setDelay(path: FakeRheaTribunal.quickPath, seconds: 0.6)
                let holder = try await Self.holder(of: "discord.delivery", in: database)
                func wave(_ range: Range<Int>) async throws {
                    for index in range {
                        let mention = FakeDiscordInteractions.mention(
                            "fix teh cat \(index)", id: String(1_500_000_000_000_010_000 + index), channel: String(1_600_000_000_000_000_000 + index))
                        try await fakes.gateway.dispatch("MESSAGE_CREATE", mention)
                    }
                }
                try await wave(0..<100)
                for index in 0..<2 {
                    try await fakes.gateway.dispatch(
                        "MESSAGE_CREATE", FakeDiscordInteractions.mention("run polish teh dog \(index)", id: String(1_500_000_000_000_009_100 + index)))
                }
                try await eventually("the first wave under way") { discord.requests(FakeDiscordAPI.createMessage).count >= 30 }
                let successor = replicas.map(\.name).first { $0 != holder }!
                let movedAt = ContinuousClock.now
                try await Self.move("discord.delivery", to: successor, in: database)
                try await wave(100..<200)
                let mentions = Set((0..<200).map { String(1_500_000_000_000_010_000 + $0) })
                try await eventually("every mention answered", safety: .seconds(90)) { Set(Self.answered(discord).keys).isSuperset(of: mentions) }
                try await eventually("the chains answered", safety: .seconds(90)) {
                    (0..<2).allSatisfy { index in
                        discord.messages().contains { !"\($0.body)".contains("Running…") && "\($0.body)".contains("teh dog \(index)") }
                    }
                }
                let refused = discord.rateLimitRefusals()
                let offsets = discord.refusedArrivals().map { Int((movedAt.duration(to: $0) / .milliseconds(1)).rounded()) }
                #expect(
                    refused.isEmpty, "Discord never had to refuse one: \(refused.count) refused (\(Set(refused).sorted())), at ms from the move \(offsets)")
                #expect(discord.maximumGlobalRate() <= 50)
                #expect(Self.answered(discord).filter { mentions.contains($0.key) }.values.allSatisfy { $0 == 1 }, "each mention answered once")
                #expect(!discord.requests(FakeDiscordAPI.editMessage).isEmpty, "the chains' progress was edited in place")
                #expect(try await Self.holder(of: "discord.delivery", in: database) == successor, "the lease stayed where it was moved")
            }
        }
    }

    /// How many accepted replies answer each message, by the message's id.
    static func answered(_ discord: FakeDiscordAPI) -> [String: Int] {
        var counts: [String: Int] = [:]
        for message in discord.messages() {
            if let id = message.body["message_reference"]?["message_id"]?.stringValue { counts[id, default: 0] += 1 }
        }
        return counts
    }
}
