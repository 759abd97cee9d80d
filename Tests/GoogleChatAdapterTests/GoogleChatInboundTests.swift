import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import RelayCore
import RelayPipeline
import RelayTestSupport
import Testing

@testable import GoogleChatAdapter

/// Commands as Google Chat users type them (issue 42, point 6): slash commands by their ids,
/// `@Rhea` in a space, anything in a direct message; a card's buttons; being added to a space.
@Suite("Google Chat: commands as typed")
struct GoogleChatInboundTests {
    @Test func slashCommandsRunByTheirIDs() async throws {
        try await GoogleChatHarness.with { harness, client in
            let google = harness.google
            _ = try await harness.post(google.message("fr Good morning", slashCommand: 1), to: client)
            _ = try await harness.post(google.message("", slashCommand: 23), to: client)
            _ = try await harness.post(google.message("The moon is made of cheese", direct: true, slashCommand: 14), to: client)
            #expect(harness.inbox.submissions.map(\.0.text) == ["/translate fr Good morning", "/help", "/tribunal The moon is made of cheese"])
            // The newer shape of a slash command event.
            var appCommand = google.message("teh cat", slashCommand: nil).objectValue ?? [:]
            appCommand["type"] = "APP_COMMAND"
            appCommand["appCommandMetadata"] = ["appCommandId": 2, "appCommandType": "SLASH_COMMAND"]
            _ = try await harness.post(.object(appCommand), to: client)
            #expect(harness.inbox.submissions.last?.0.text == "/fix teh cat")
        }
    }

    @Test func anUnknownCommandIDIsAnsweredNotRun() async throws {
        try await GoogleChatHarness.with { harness, client in
            let response = try await harness.post(harness.google.message("x", slashCommand: 999), to: client)
            #expect(response.status == .ok)
            let answer = JSONValue.parse(response.body.readableBytesView)
            #expect(answer?["text"]?.stringValue?.contains("bots/google-chat/commands.md") == true)
            #expect(harness.inbox.submissions.isEmpty)
        }
    }

    @Test func mentionsInASpaceAndDirectMessages() async throws {
        try await GoogleChatHarness.with { harness, client in
            let google = harness.google
            let thread = FakeGoogleChat.space + "/threads/abc"
            _ = try await harness.post(google.message("translate fr Good morning", thread: thread, id: "m1"), to: client)
            _ = try await harness.post(google.message("/rewrite formal hey", id: "m2"), to: client)
            _ = try await harness.post(google.message("The earth is flat", id: "m3"), to: client)
            _ = try await harness.post(google.message("", id: "m4"), to: client)
            _ = try await harness.post(google.message("summarize", direct: true, id: "m5"), to: client)
            _ = try await harness.post(google.message("/transalte fr hi", direct: true, id: "m6"), to: client)
            let submitted = harness.inbox.submissions
            #expect(
                submitted.map(\.0.text) == [
                    "/translate fr Good morning", "/rewrite formal hey", "/tribunal The earth is flat", "/help", "/summarize", "/transalte fr hi",
                ])
            let first = try #require(submitted.first)
            #expect(first.0.team == FakeGoogleChat.space)
            #expect(first.0.channel == FakeGoogleChat.space)
            #expect(first.0.thread == thread)
            #expect(first.0.user == FakeGoogleChat.alice)
            #expect(first.0.eventKey == "message:\(FakeGoogleChat.space)/messages/m1")
            let address = try #require(GoogleChatAddress.decode(first.1.address))
            #expect(address.thread == thread)
            #expect(address.isDirect == false)
            #expect(address.eventSlot != nil)
            let direct = try #require(submitted.last)
            #expect(direct.0.team == "dm:\(FakeGoogleChat.alice)")
            #expect(GoogleChatAddress.decode(direct.1.address)?.isDirect == true)
        }
    }

    @Test func theAppsOwnMessagesAndOtherBotsAreIgnored() async throws {
        try await GoogleChatHarness.with { harness, client in
            var event = harness.google.message("translate fr hi").objectValue ?? [:]
            event["user"] = ["name": "users/other-bot", "type": "BOT"]
            let response = try await harness.post(.object(event), to: client)
            #expect(response.status == .ok)
            #expect(harness.inbox.submissions.isEmpty)
        }
    }

    @Test func beingAddedToASpaceWelcomesOrRunsWhatItWasAddedWith() async throws {
        try await GoogleChatHarness.with { harness, client in
            var added = harness.google.message("x").objectValue ?? [:]
            added["type"] = "ADDED_TO_SPACE"
            added["message"] = nil
            let welcome = try await harness.post(.object(added), to: client)
            #expect(JSONValue.parse(welcome.body.readableBytesView)?["text"]?.stringValue?.contains("/help") == true)
            let withCommand = harness.google.message("translate de hi", type: "ADDED_TO_SPACE")
            _ = try await harness.post(withCommand, to: client)
            #expect(harness.inbox.submissions.map(\.0.text) == ["/translate de hi"])
            var removed = added
            removed["type"] = "REMOVED_FROM_SPACE"
            let answer = try await harness.post(.object(removed), to: client)
            #expect(answer.status == .ok)
            #expect(String(buffer: answer.body) == "{}")
        }
    }

    @Test func runAgainRunsTheButtonsLine() async throws {
        try await GoogleChatHarness.with { harness, client in
            let thread = FakeGoogleChat.space + "/threads/t9"
            let click = harness.google.click(GoogleChatInbound.runAgainFunction, parameters: ["line": "/translate fr Good morning"], thread: thread)
            let response = try await harness.post(click, to: client)
            #expect(response.status == .ok)
            #expect(harness.inbox.submissions.map(\.0.text) == ["/translate fr Good morning"])
            #expect(harness.inbox.submissions.first.flatMap { GoogleChatAddress.decode($0.1.address) }?.thread == thread)
        }
    }

    /// "Post to channel" posts the private result for everyone once, and only for its asker.
    @Test func postToChannelPostsThePrivateResultOnce() async throws {
        try await GoogleChatHarness.with { harness, client in
            let original = GoogleChatHarness.entry(
                .reply(Reply(kind: .result, title: "Translation (fr)", body: "Bonjour", isPrivate: true, actions: [.postToChannel])),
                GoogleChatHarness.address(slot: "old-slot"), id: "entry-1")
            harness.inbox.keep(original)
            let click = harness.google.click(GoogleChatInbound.postToChannelFunction, parameters: ["entry": "entry-1"])
            _ = try await harness.post(click, to: client)
            _ = try await harness.post(click, to: client)
            let posts = harness.inbox.posts
            #expect(posts.count == 3, "the post, the note, then 'already posted'")
            #expect(posts.first?.reply.isPrivate == false)
            #expect(posts.first?.reply.actions.isEmpty == true)
            #expect(posts.first.flatMap { GoogleChatAddress.decode($0.route.address) }?.eventSlot == nil)
            #expect(posts.last?.reply.body.contains("already posted") == true)
            var someoneElse = click.objectValue ?? [:]
            someoneElse["user"] = ["name": "users/999", "displayName": "Bob", "type": "HUMAN"]
            someoneElse["common"] = ["invokedFunction": .string(GoogleChatInbound.postToChannelFunction), "parameters": ["entry": "entry-1"]]
            _ = try await harness.post(.object(someoneElse), to: client)
            #expect(harness.inbox.posts.last?.reply.body.contains("Only the person who asked") == true)
        }
    }
}
