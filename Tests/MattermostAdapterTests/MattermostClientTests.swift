import Logging
import MattermostAdapter
import RelayCore
import RelayHTTP
import RelayPipeline
import RelayPlatform
import RelayTestSupport
import Testing

/// The REST client against the fake Mattermost: answers read as Mattermost means them.
@Suite("Mattermost REST client")
struct MattermostClientTests {
    static let channel = "chan0000000000000000000009"

    func withClient(token: String = FakeMattermost.botToken, _ body: (MattermostClient, FakeMattermost) async throws -> Void) async throws {
        try await withFakeMattermost { mattermost in
            try await HTTPTransport.withOwnClient { transport in
                let client = MattermostClient(transport: transport, serverURL: mattermost.url, botToken: MattermostToken(token), logger: Logger(label: "test"))
                try await body(client, mattermost)
            }
        }
    }

    @Test func aResponseURLTakesFivePostsAndRefusesTheSixth() async throws {
        try await withClient { client, mattermost in
            let url = mattermost.makeResponseURL(channel: Self.channel)
            for index in 1...5 { try await client.respond(to: url, body: MattermostCommandResponse.body(.inChannel, text: "part \(index)")) }
            await #expect(throws: MattermostAPIError.refused(endpoint: "response_url", MattermostRefusal(id: "web.command_webhook.use.app_error", status: 400)))
            {
                try await client.respond(to: url, body: MattermostCommandResponse.body(.inChannel, text: "part 6"))
            }
            #expect(mattermost.posts(channel: Self.channel).map(\.message) == (1...5).map { "part \($0)" })
        }
    }

    /// Issue 28, point 3: a create repeated with its `pending_post_id` (a resend after a crash)
    /// answers the post the first made, as Mattermost's server deduplicates for 30 seconds.
    @Test func aPostRepeatedWithItsPendingIDShowsOnce() async throws {
        try await withClient { client, mattermost in
            let first = try await client.createPost(channel: Self.channel, message: "the answer", rootID: nil, pendingID: "rr0123456789abcdef01234567")
            let again = try await client.createPost(channel: Self.channel, message: "the answer", rootID: nil, pendingID: "rr0123456789abcdef01234567")
            #expect(again == first)
            _ = try await client.createPost(channel: Self.channel, message: "the answer", rootID: nil)
            #expect(mattermost.posts(channel: Self.channel).map(\.message) == ["the answer", "the answer"], "the third, without an id, is a post of its own")
        }
    }

    @Test func limitExceededWaitsForTheResetAndARefusedTokenIsNamed() async throws {
        try await withClient { client, mattermost in
            mattermost.rateLimitNext(1, reset: 3)
            await #expect(throws: MattermostAPIError.rateLimited(endpoint: "POST /posts", retryAfter: .seconds(3))) {
                try await client.createPost(channel: Self.channel, message: "hi", rootID: nil)
            }
            let id = try await client.createPost(channel: Self.channel, message: "hi", rootID: nil)
            #expect(mattermost.post(id)?.message == "hi")
        }
        try await withClient(token: "wrongtoken0000000000000001") { client, _ in
            do throws(MattermostAPIError) {
                _ = try await client.me()
                Issue.record("a wrong token was accepted")
            } catch {
                #expect(error.label == "api.context.session_expired.app_error")
                #expect(error.reason.contains("MATTERMOST_BOT_TOKEN"), "\(error.reason)")
                #expect(error.deliveryOutcome == .rejected(reason: error.reason))
            }
        }
    }
}
