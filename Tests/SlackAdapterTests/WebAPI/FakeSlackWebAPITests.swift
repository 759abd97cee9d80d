import RelayCore
import RelayPlatform
import RelayTestSupport
import SlackAdapter
import Testing

/// The fake's own promises, beyond what the client tests use.
@Suite("Fake Slack Web API")
struct FakeSlackWebAPITests {
    @Test func waitingResumesWhenTheRequestArrivesAndTimesOutClearly() async throws {
        try await withSlackWeb { harness in
            let client = harness.client
            async let waited = harness.fake.waitForRequests(count: 2, path: "/api/chat.postMessage")
            try await client.postMessage(channel: "C1", text: "one")
            try await client.postMessage(channel: "C1", text: "two")
            let requests = try await waited
            #expect(requests.map { $0["text"] } == ["one", "two"])

            do {
                try await harness.fake.waitForRequests(count: 1, path: "chat.update", timeout: 0.2)
                Issue.record("expected a timeout")
            } catch let timeout as FakeSlackTimeout {
                #expect(timeout.description.contains("/api/chat.update"))
                #expect(timeout.description.contains("0 matching"))
            }
        }
    }

    @Test func unknownMethodsAndScriptedFailuresForOtherPathsAreSeparate() async throws {
        try await withSlackWeb { harness in
            let unknown = await slackError {
                try await harness.client.send(.method("conversations.list", body: [:]))
            }
            #expect(unknown == .refused(endpoint: "conversations.list", SlackRefusal(code: "unknown_method", status: 404)))

            // A failure scripted for chat.update does not hit chat.postMessage.
            harness.fake.failNext(with: .status(500), path: "chat.update")
            let ts = try await harness.client.postMessage(channel: "C1", text: "x")
            let failed = await slackError { try await harness.client.update(channel: "C1", ts: ts, text: "y") }
            #expect(failed == .server(endpoint: "chat.update", status: 500))
            #expect(harness.fake.messages().first?.text == "x", "a failed call changes nothing")
            try await harness.client.update(channel: "C1", ts: ts, text: "y")
            #expect(harness.fake.messages().first?.text == "y")
        }
    }

    @Test func longTextIsTruncatedWithAWarningLikeSlack() async throws {
        try await withSlackWeb { harness in
            let text = String(repeating: "a", count: 40_010)
            let ts = try await harness.client.postMessage(channel: "C1", text: text)
            #expect(!ts.isEmpty)
            #expect(harness.fake.messages().first?.text.count == 40_000)
            #expect(harness.logs.text.contains("message_truncated"))
        }
    }

    @Test func usersInfoAnswersSeededMembersInSlacksShapeAndOthersAreNotFound() async throws {
        try await withSlackWeb { harness in
            harness.fake.seed(FakeSlackUser(id: "U0OWNER", name: "olga", isOwner: true))
            let answer = try #require(
                JSONValue.parse(try await harness.client.send(SlackWebRequest(.method("users.info"), body: ["user": "U0OWNER"], encoding: .form)).body))
            #expect(answer["ok"] == true)
            #expect(answer["user"]?["id"] == "U0OWNER")
            #expect(answer["user"]?["team_id"] == "T0FAKE")
            #expect(answer["user"]?["name"] == "olga")
            #expect(answer["user"]?["is_owner"] == true)
            #expect(answer["user"]?["is_admin"] == false)
            #expect(answer["user"]?["is_primary_owner"] == false)
            #expect(answer["user"]?["profile"]?["display_name"] == "olga")

            let user = try await harness.client.userInfo(user: "U0OWNER")
            #expect(user == SlackUserInfo(id: "U0OWNER", teamID: "T0FAKE", name: "olga", isOwner: true))
            #expect(user.administersWorkspace)

            let unknown = await slackError { try await harness.client.userInfo(user: "U0NOBODY") }
            #expect(unknown == .refused(endpoint: "users.info", SlackRefusal(code: "user_not_found", status: 200)))
        }
    }

    @Test func repliesComeInPagesLinkedByACursor() async throws {
        try await withSlackWeb { harness in
            let parent = "1700000100.000100"
            harness.fake.seed(FakeSlackMessage(channel: "C1", ts: parent, text: "parent", user: "U0ANN"))
            for index in 1...2 {
                harness.fake.seed(
                    FakeSlackMessage(channel: "C1", ts: "170000010\(index).000100", text: "reply \(index)", threadTS: parent, user: "U0BOB"))
            }
            let first = try #require(
                JSONValue.parse(
                    try await harness.client.send(
                        SlackWebRequest(.method("conversations.replies"), body: ["channel": "C1", "ts": .string(parent), "limit": 2], encoding: .form)
                    ).body))
            #expect(first["has_more"] == true)
            #expect(first["messages"]?.arrayValue?.compactMap { $0["text"]?.stringValue } == ["parent", "reply 1"])
            #expect(first["messages"]?[0]?["reply_count"] == 2)
            #expect(first["messages"]?[0]?["thread_ts"]?.stringValue == parent)
            #expect(first["messages"]?[1]?["parent_user_id"] == "U0ANN")
            let cursor = try #require(first["response_metadata"]?["next_cursor"]?.stringValue)

            let second = try await harness.client.threadReplies(channel: "C1", ts: parent, cursor: cursor, limit: 2)
            #expect(second.messages.map(\.text) == ["reply 2"])
            #expect(second.messages.first?.user == "U0BOB")
            #expect(second.nextCursor == nil, "the last page")

            let wrong = await slackError { try await harness.client.threadReplies(channel: "C1", ts: parent, cursor: "bm9wZQ==") }
            #expect(wrong?.label == "invalid_cursor")
        }
    }
}
