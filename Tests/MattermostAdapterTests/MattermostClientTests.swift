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
