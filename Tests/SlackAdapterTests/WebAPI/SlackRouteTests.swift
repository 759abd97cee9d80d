import Foundation
import Logging
import RelayCore
import RelayPipeline
import RelayPlatform
import RelayTestSupport
import Testing

@testable import SlackAdapter

/// Issue 28, point 3: which Slack answers are idempotent, and how.
@Suite("Slack routes and placeholders")
struct SlackRouteTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func address(slashCommand: Bool?, responseURL: Bool = true) -> SlackAddress {
        SlackAddress(
            team: "T1", channel: "C1", user: "U1", sealedResponseURL: responseURL ? "sealed" : nil,
            responseURLExpiresAt: now.addingTimeInterval(600), answersSlashCommand: slashCommand)
    }

    static func situation(_ address: SlackAddress, part: Int, progressTS: String? = nil) -> SlackRoute.Situation {
        SlackRoute.Situation(address: address, part: part, progressTS: progressTS, canPost: true, now: now)
    }

    /// A slash command's first part replaces what an earlier post to its `response_url` left, so
    /// a resend after a crash shows once; its later parts, and a button's answers, add messages.
    @Test func onlyASlashCommandsFirstPartReplacesAtItsResponseURL() {
        let slash = Self.address(slashCommand: true)
        #expect(SlackRoute.forPublicPart(Self.situation(slash, part: 0)).first == .responseURL(.inChannel, replaceOriginal: true))
        #expect(SlackRoute.forPrivatePart(Self.situation(slash, part: 0)).first == .responseURL(.ephemeral, replaceOriginal: true))
        #expect(SlackRoute.forPublicPart(Self.situation(slash, part: 1)).contains(.responseURL(.inChannel, replaceOriginal: false)))
        let button = Self.address(slashCommand: nil)
        #expect(SlackRoute.forPublicPart(Self.situation(button, part: 0)).first == .responseURL(.inChannel, replaceOriginal: false))
        #expect(SlackRoute.forPrivatePart(Self.situation(button, part: 0)).first == .responseURL(.ephemeral, replaceOriginal: false))
        // With a placeholder, the answer is its edit first, then the button's response_url.
        let delivery = SlackDelivery(
            api: FakeWebAPI(), canPost: true, box: SlackSecretBox(secret: "slack-route-tests-secret"), clock: ManualClock(now: Self.now))
        let part = PartToSend(
            reply: Reply(kind: .result, body: "Bonjour"), index: 0, address: button, place: Audience.channel,
            placeholder: Placeholder(ref: "1.0", place: Audience.channel), firstPartRef: nil)
        #expect(Array(Deliverer.routes(for: part, platform: delivery).prefix(2)) == [.placeholder, .post(.responseURL(.inChannel, replaceOriginal: false))])
    }

    /// The run posts a placeholder where the answer would go by `chat.postMessage`: every route
    /// but a slash command's, and only with the bot token (without it nothing can be edited).
    @Test func aPlaceholderWhereTheAnswerWouldBeANewPostedMessage() throws {
        let box = SlackSecretBox(secret: "slack-route-tests-secret")
        let withToken = Deliverer(SlackDelivery(api: FakeWebAPI(), canPost: true, box: box), logger: Logger(label: "test"))
        let withoutToken = Deliverer(SlackDelivery(api: FakeWebAPI(), canPost: false, box: box), logger: Logger(label: "test"))
        let mention = SlackAddress(team: "T1", channel: "C1", user: "U1", threadTS: "1.0").route.address
        let slash = Self.address(slashCommand: true).route.address
        let button = Self.address(slashCommand: nil).route.address
        #expect(withToken.answersByEditingPlaceholder(at: mention))
        #expect(withToken.answersByEditingPlaceholder(at: button))
        #expect(!withToken.answersByEditingPlaceholder(at: slash))
        #expect(!withoutToken.answersByEditingPlaceholder(at: mention))
        // The flag is stored only for slash commands: other addresses read as before.
        #expect(!mention.contains("answersSlashCommand"))
        #expect(SlackAddress.decode(slash)?.answersSlashCommand == true)
    }
}

/// A Web API that is never called: the tests above only ask the sender about addresses.
private struct FakeWebAPI: SlackWebAPI {
    func send(_ request: SlackWebRequest) async throws(SlackAPIError) -> SlackAnswer { SlackAnswer([:]) }
}
