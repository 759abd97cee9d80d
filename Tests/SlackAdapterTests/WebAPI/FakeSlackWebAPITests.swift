import RelayCore
import RelayTestSupport
import SlackAdapter
import Testing

/// The fake's own promises, beyond what the client tests use.
@Suite("Fake Slack Web API")
struct FakeSlackWebAPITests {
    @Test func waitingResumesWhenTheRequestArrivesAndTimesOutClearly() async throws {
        try await withSlackWeb { harness in
            let client = harness.client
            async let waited = harness.fake.waitForRequests(count: 2, path: "/api/chat.postMessage", timeout: 5)
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
            #expect(unknown == .api(method: "conversations.list", code: "unknown_method", status: 404))

            // A failure scripted for chat.update does not hit chat.postMessage.
            harness.fake.failNext(with: .status(500), path: "chat.update")
            let ts = try await harness.client.postMessage(channel: "C1", text: "x")
            let failed = await slackError { try await harness.client.update(channel: "C1", ts: ts, text: "y") }
            #expect(failed == .server(method: "chat.update", status: 500))
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
}
