import Foundation
import RelayCore
import RelayPipeline
import RelayPlatform
import RelayTestSupport
import Testing

@testable import GoogleChatAdapter

/// Replies through the Chat API and in the event's own answer (issue 42, point 6).
@Suite("Google Chat: replies")
struct GoogleChatDeliveryTests {
    static func result(_ body: String, private isPrivate: Bool = false) -> Reply {
        Reply(
            kind: .result, title: "Translation (fr)", body: body, isPrivate: isPrivate,
            actions: isPrivate
                ? [.postToChannel, .runAgain(commandLine: "/translate fr Good morning")] : [.runAgain(commandLine: "/translate fr Good morning")])
    }

    @Test func aReplyGoesToTheThreadOnceAndOneTokenServesMany() async throws {
        try await GoogleChatHarness.with { harness, _ in
            let address = GoogleChatHarness.address()
            for index in 0..<3 {
                let entry = GoogleChatHarness.entry(.reply(Reply(kind: .info, body: "Note \(index) <users/all>", isPrivate: false)), address)
                guard case .sent(let ref) = await harness.connection.sender.deliver(entry, earlier: nil) else {
                    Issue.record("not sent")
                    return
                }
                #expect(ref.flatMap(GoogleChatMessageRef.decode)?.name.hasPrefix(FakeGoogleChat.space + "/messages/") == true)
                // Sent again (a crash before the outbox recorded it): Google returns the same message.
                _ = await harness.connection.sender.deliver(entry, earlier: nil)
            }
            let messages = harness.google.messages(in: FakeGoogleChat.space)
            #expect(messages.map(\.text) == ["Note 0 <users/all>", "Note 1 <users/all>", "Note 2 <users/all>"])
            #expect(messages.allSatisfy { $0.thread == address.thread })
            #expect(messages.allSatisfy { !($0.body["text"]?.stringValue ?? "").contains("<users/") }, "no mention can form")
            #expect(harness.google.counts.tokens == 1)
            let create = try #require(harness.google.requests().first { $0.0.hasPrefix("POST /v1/") }?.1)
            #expect(create.query?.contains("messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD") == true)
        }
    }

    @Test func theAnswerPatchesTheRunsProgressIntoACard() async throws {
        try await GoogleChatHarness.with { harness, _ in
            let address = GoogleChatHarness.address()
            let progress = GoogleChatHarness.entry(.progress(RunProgress(completed: 1, total: 2, block: "grammar")), address)
            guard case .sent(let ref) = await harness.connection.sender.deliver(progress, earlier: nil) else {
                Issue.record("the progress was not sent")
                return
            }
            var placed = progress
            placed.platformRef = ref
            let answer = GoogleChatHarness.entry(.reply(Self.result("Bonjour")), address, replaces: progress.id)
            guard case .sent = await harness.connection.sender.deliver(answer, earlier: placed) else {
                Issue.record("the answer was not sent")
                return
            }
            let messages = harness.google.messages(in: FakeGoogleChat.space)
            #expect(messages.count == 1, "one message: the progress, patched")
            #expect(messages.first?.history.count == 2)
            #expect(messages.first?.text.contains("Bonjour") == true)
            #expect(messages.first?.body["text"] == nil, "the progress text is replaced by the card")
            #expect(messages.first?.buttons.map(\.text) == ["Run again"])
            #expect(messages.first?.buttons.first?.parameters["line"] == "/translate fr Good morning")
            #expect(harness.google.requests().contains { $0.0.hasPrefix("PATCH /v1/spaces/") && $0.1.query == "updateMask=text%2CcardsV2" })
        }
    }

    @Test func aPrivateResultIsShownToTheAskerAlone() async throws {
        try await GoogleChatHarness.with { harness, _ in
            let outcome = await harness.connection.sender.deliver(
                GoogleChatHarness.entry(.reply(Self.result("Bonjour", private: true)), GoogleChatHarness.address()), earlier: nil)
            guard case .sent = outcome else {
                Issue.record("not sent: \(outcome)")
                return
            }
            let message = try #require(harness.google.messages().first)
            #expect(message.viewer == FakeGoogleChat.alice)
            #expect(message.buttons.map(\.text) == ["Post to channel", "Run again"])
            // In a direct message everything is private already: no viewer, no "Post to channel".
            _ = await harness.connection.sender.deliver(
                GoogleChatHarness.entry(.reply(Self.result("Hallo", private: true)), GoogleChatHarness.address(direct: true)), earlier: nil)
            let direct = try #require(harness.google.messages(in: FakeGoogleChat.aliceDM).first)
            #expect(direct.viewer == nil)
            #expect(direct.buttons.map(\.text) == ["Run again"])
        }
    }

    /// A reply ready while its event's request waits goes back in that request's answer; once
    /// the request stopped waiting, it goes through the API.
    @Test func aReplyReadyInTimeRidesTheEventsAnswer() async throws {
        try await GoogleChatHarness.with { harness, _ in
            let answers = harness.connection.answers
            let slot = answers.open()
            let waiting = Task { await answers.wait(slot) }
            let entry = GoogleChatHarness.entry(
                .reply(Reply(kind: .info, body: "Try /translate fr …", isPrivate: false)), GoogleChatHarness.address(slot: slot))
            guard case .sent(let ref) = await harness.connection.sender.deliver(entry, earlier: nil) else {
                Issue.record("not handed over")
                return
            }
            #expect(ref == nil)
            let handed = await waiting.value
            #expect(handed?.body["text"]?.stringValue == "Try /translate fr …")
            #expect(handed?.entryID == entry.id)
            #expect(harness.google.messages().isEmpty, "no API call")
            // The same slot again: its request is answered, so the API takes it.
            _ = await harness.connection.sender.deliver(entry, earlier: nil)
            #expect(harness.google.messages().count == 1)
        }
    }

    @Test func progressThroughTheAPIClosesTheEventsWait() async throws {
        try await GoogleChatHarness.with { harness, _ in
            let answers = harness.connection.answers
            let slot = answers.open()
            let waiting = Task { await answers.wait(slot) }
            let address = GoogleChatHarness.address(slot: slot)
            _ = await harness.connection.sender.deliver(GoogleChatHarness.entry(.progress(.started("/tribunal")), address), earlier: nil)
            #expect(await waiting.value == nil)
            #expect(answers.isOpen(slot) == false)
        }
    }

    @Test(arguments: [429, 503])
    func aRefusalWithRetryAfterWaitsAsAsked(status: Int) async throws {
        try await GoogleChatHarness.with { harness, _ in
            harness.google.rateLimitNext(1, retryAfter: 7, status: status)
            let outcome = await harness.connection.sender.deliver(
                GoogleChatHarness.entry(.reply(Reply(kind: .info, body: "hello", isPrivate: false)), GoogleChatHarness.address()), earlier: nil)
            guard case .rateLimited(let retryAfter, _) = outcome else {
                Issue.record("not rate limited: \(outcome)")
                return
            }
            #expect(retryAfter == .seconds(7))
        }
    }

    @Test func aRefusedKeyIsReported() async throws {
        try await GoogleChatHarness.with { harness, _ in
            harness.google.revokeKey()
            let outcome = await harness.connection.sender.deliver(
                GoogleChatHarness.entry(.reply(Reply(kind: .info, body: "hello", isPrivate: false)), GoogleChatHarness.address()), earlier: nil)
            guard case .rejected(let reason) = outcome else {
                Issue.record("not rejected: \(outcome)")
                return
            }
            #expect(reason.contains("invalid_grant"))
            #expect(harness.credentials.current[GoogleChatPlatform.name]?.first?.credential == "GOOGLE_CHAT_SERVICE_ACCOUNT")
        }
    }
}
