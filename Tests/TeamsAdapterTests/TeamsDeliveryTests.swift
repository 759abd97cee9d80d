import Foundation
import RelayCore
import RelayPipeline
import RelayPlatform
import RelayTestSupport
import Testing

@testable import TeamsAdapter

/// Replies through the Bot Connector (issue 42, point 3): in the command's thread, a run's
/// placeholder updated into its answer, private results in the asker's personal chat, 429s
/// waited out as asked, one token for many replies.
@Suite("Teams: delivery through the Bot Connector")
struct TeamsDeliveryTests {
    static let commandMessage = "1700000000001"

    static func address(_ framework: FakeBotFramework, personal: Bool = false) -> TeamsAddress {
        TeamsAddress(
            team: personal ? "dm:\(TeamsHarness.aliceAAD)" : TeamsHarness.team, serviceURL: framework.serviceURL,
            conversation: personal ? TeamsHarness.personalChat : TeamsHarness.channelThread, replyTo: commandMessage, user: TeamsHarness.alice,
            tenant: FakeBotFramework.tenant, bot: FakeBotFramework.botAccount, isPersonal: personal)
    }

    static func entry(_ content: OutboxEntry.Content, _ address: TeamsAddress, id: String = UUID().uuidString, replaces: String? = nil) -> OutboxEntry {
        OutboxEntry(
            id: id, platform: TeamsPlatform.name, conversation: address.conversationKey, address: address.route.address, content: content,
            replaces: replaces, nextAttemptAt: Date(), createdAt: Date())
    }

    static func result(_ body: String, private isPrivate: Bool = false) -> Reply {
        Reply(
            kind: .result, title: "Translation (fr)", body: body, isPrivate: isPrivate,
            actions: isPrivate
                ? [.postToChannel, .runAgain(commandLine: "/translate fr Good morning")] : [.runAgain(commandLine: "/translate fr Good morning")])
    }

    @Test func aReplyGoesToTheCommandsThreadAndOneTokenServesMany() async throws {
        try await TeamsHarness.with { harness, _ in
            let address = Self.address(harness.framework)
            for index in 0..<3 {
                let outcome = await harness.connection.sender.deliver(
                    Self.entry(.reply(Reply(kind: .info, body: "Note \(index) <at>Everyone</at>", isPrivate: false)), address), earlier: nil)
                guard case .sent(let ref) = outcome else {
                    Issue.record("not sent: \(outcome)")
                    return
                }
                #expect(ref.flatMap(TeamsMessageRef.decode)?.conversation == TeamsHarness.channelThread)
            }
            let messages = harness.framework.messages(in: TeamsHarness.channelThread)
            #expect(messages.map(\.text) == ["Note 0 <at>Everyone</at>", "Note 1 <at>Everyone</at>", "Note 2 <at>Everyone</at>"])
            #expect(messages.allSatisfy { $0.replyTo == Self.commandMessage })
            // Shown as text: the model's `<at>` is escaped, and no mention entity is sent.
            #expect(messages.first?.activity["text"]?.stringValue == "Note 0 &lt;at&gt;Everyone&lt;/at&gt;")
            #expect(messages.allSatisfy { $0.activity["entities"] == nil })
            #expect(harness.framework.counts.tokens == 1)
        }
    }

    @Test func theAnswerUpdatesTheRunsPlaceholderIntoACard() async throws {
        try await TeamsHarness.with { harness, _ in
            let address = Self.address(harness.framework)
            let progress = Self.entry(.progress(.started("/translate")), address)
            guard case .sent(let ref) = await harness.connection.sender.deliver(progress, earlier: nil) else {
                Issue.record("the placeholder was not sent")
                return
            }
            var placed = progress
            placed.platformRef = ref
            let answer = Self.entry(.reply(Self.result("Bonjour")), address, replaces: progress.id)
            let outcome = await harness.connection.sender.deliver(answer, earlier: placed)
            guard case .sent = outcome else {
                Issue.record("not sent: \(outcome)")
                return
            }
            let messages = harness.framework.messages(in: TeamsHarness.channelThread)
            #expect(messages.count == 1, "one message: the placeholder, updated")
            #expect(messages.first?.history.count == 2)
            #expect(messages.first?.text.contains("Bonjour") == true)
            #expect(messages.first?.buttons.map(\.title) == ["Run again"])
            #expect(messages.first?.buttons.first?.data["line"]?.stringValue == "/translate fr Good morning")
        }
    }

    /// Teams has no message only one person sees: a private result goes to the asker's personal
    /// chat (made once), with "Post to channel"; nothing of it is posted in the channel.
    @Test func aPrivateResultGoesToTheAskersPersonalChat() async throws {
        try await TeamsHarness.with { harness, _ in
            let address = Self.address(harness.framework)
            for _ in 0..<2 {
                let outcome = await harness.connection.sender.deliver(Self.entry(.reply(Self.result("Bonjour", private: true)), address), earlier: nil)
                guard case .sent = outcome else {
                    Issue.record("not sent: \(outcome)")
                    return
                }
            }
            let chat = try #require(harness.framework.personalChat(with: TeamsHarness.alice))
            #expect(harness.framework.messages(in: chat).count == 2)
            #expect(harness.framework.messages(in: chat).first?.buttons.map(\.title) == ["Post to channel", "Run again"])
            #expect(harness.framework.messages(in: TeamsHarness.channelThread).isEmpty)
            let creations = harness.framework.requests().filter { $0.0 == "POST /amer/v3/conversations" }
            #expect(creations.count == 1, "the personal chat is made once")
            #expect(creations.first?.1.body?["tenantId"]?.stringValue == FakeBotFramework.tenant)
        }
    }

    @Test(arguments: [429, 503])
    func aRefusalWithRetryAfterWaitsAsAsked(status: Int) async throws {
        try await TeamsHarness.with { harness, _ in
            harness.framework.rateLimitNext(1, retryAfter: 7, status: status)
            let outcome = await harness.connection.sender.deliver(
                Self.entry(.reply(Reply(kind: .info, body: "hello", isPrivate: false)), Self.address(harness.framework)), earlier: nil)
            guard case .rateLimited(let retryAfter, _) = outcome else {
                Issue.record("not rate limited: \(outcome)")
                return
            }
            #expect(retryAfter == .seconds(7))
        }
    }

    /// A refused app password fails the reply for good and shows in `/readyz`'s board.
    @Test func aRefusedPasswordIsReported() async throws {
        try await TeamsHarness.with(password: "a-revoked-secret") { harness, _ in
            let outcome = await harness.connection.sender.deliver(
                Self.entry(.reply(Reply(kind: .info, body: "hello", isPrivate: false)), Self.address(harness.framework)), earlier: nil)
            guard case .rejected(let reason) = outcome else {
                Issue.record("not rejected: \(outcome)")
                return
            }
            #expect(reason.contains("invalid_client"))
            #expect(!reason.contains("a-revoked-secret"))
            #expect(harness.credentials.current[TeamsPlatform.name]?.first?.credential == "TEAMS_APP_PASSWORD")
        }
    }
}
