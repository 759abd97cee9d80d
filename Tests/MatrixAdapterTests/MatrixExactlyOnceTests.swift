import AsyncHTTPClient
import Foundation
import Logging
import RelayCore
import RelayHTTP
import RelayPipeline
import RelayTestSupport
import RelayTestTags
import Testing

@testable import MatrixAdapter

/// Exactly once for free, against a real Synapse: a reply whose send reached the homeserver but
/// whose answer was lost (a crash, a timeout) is delivered again after the restart, under the
/// same transaction id, and the room shows it once.
@Suite("Matrix sends are idempotent", .tags(.peers))
struct MatrixExactlyOnceTests {
    /// A sender as a fresh process makes it: a client of its own, nothing remembered.
    static func withFreshSender<T: Sendable>(_ synapse: SynapseTestServer, token: String, _ body: (Deliverer<MatrixDelivery>) async throws -> T) async throws
        -> T
    {
        let logger = Logger(label: "test.matrix-once")
        return try await HTTPTransport.withOwnClient { transport in
            let api = MatrixClient(transport: transport, homeserverURL: synapse.url, token: MatrixToken(token), logger: logger)
            let identity = MatrixIdentity(api: api, logger: logger)
            return try await body(
                Deliverer(MatrixDelivery(api: api, identity: identity, rooms: MatrixDirectRooms(api: api, identity: identity)), logger: logger))
        }
    }

    @Test func aReplyDeliveredAgainAfterARestartShowsOnce() async throws {
        let synapse = try await SynapseTestServer.shared()
        let bot = try await synapse.register("relay")
        let alice = try await synapse.register("alice")
        let room = try await alice.createRoom(invite: [bot.user])
        try await bot.join(room)
        let command = try await alice.send("!translate fr Good morning", in: room)
        let address = MatrixAddress(team: MatrixAddress.team(room: room), room: room, user: alice.user, replyTo: command)
        let entry = OutboxEntry(
            id: UUID().uuidString, platform: MatrixPlatform.name, conversation: address.route.conversation, address: address.route.address,
            content: .reply(Reply(kind: .result, body: "Bonjour")), nextAttemptAt: Date(), createdAt: Date())

        var outcomes: [DeliveryOutcome] = []
        for _ in 0..<3 {
            outcomes.append(try await Self.withFreshSender(synapse, token: bot.token) { await $0.deliver(entry, earlier: nil) })
        }
        guard case .sent(let first) = outcomes[0], let first else {
            Issue.record("not sent: \(outcomes[0])")
            return
        }
        #expect(outcomes.allSatisfy { $0 == .sent(platformRef: first) }, "the same event each time: \(outcomes)")
        let shown = try await alice.events(in: room).filter { $0["sender"]?.stringValue == bot.user && $0["type"]?.stringValue == "m.room.message" }
        #expect(shown.count == 1, "\(shown)")
        #expect(shown.first?["content"]?["body"]?.stringValue == "Bonjour")
        // What the outbox keeps for the edit that may follow: the room and the event, typed.
        let posted = try #require(shown.first?["event_id"]?.stringValue)
        #expect(MatrixMessageRef(stored: first) == MatrixMessageRef(room: room, event: posted), "\(first)")
    }

    @Test func aLongReplyGoesInPartsEachWithinTheEventLimit() async throws {
        let synapse = try await SynapseTestServer.shared()
        let bot = try await synapse.register("relay")
        let alice = try await synapse.register("alice")
        let room = try await alice.createRoom(invite: [bot.user])
        try await bot.join(room)
        let address = MatrixAddress(team: MatrixAddress.team(room: room), room: room, user: alice.user)
        // 70 000 characters: Synapse refuses one event of that size (413 M_TOO_LARGE).
        let body = String(repeating: "Les <données> & les \"faits\". ", count: 2_500)
        var entry = OutboxEntry(
            id: UUID().uuidString, platform: MatrixPlatform.name, conversation: address.route.conversation, address: address.route.address,
            content: .reply(Reply(kind: .result, body: body)), nextAttemptAt: Date(), createdAt: Date())
        try await Self.withFreshSender(synapse, token: bot.token) { sender in
            for _ in 0..<10 {
                let outcome = await sender.deliver(entry, earlier: nil)
                switch outcome {
                case .partDelivered: entry.partsDelivered += 1
                case .sent: return
                default:
                    Issue.record("part \(entry.partsDelivered): \(outcome)")
                    return
                }
            }
        }
        let shown = try await alice.events(in: room).filter { $0["sender"]?.stringValue == bot.user && $0["type"]?.stringValue == "m.room.message" }
        #expect(shown.count == entry.partsDelivered + 1)
        #expect(shown.count >= 3)
        let joined = shown.compactMap { $0["content"]?["body"]?.stringValue }.joined()
        #expect(joined.filter { !$0.isWhitespace } == body.filter { !$0.isWhitespace })
    }
}
