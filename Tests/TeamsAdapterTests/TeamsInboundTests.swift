import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import RelayCore
import RelayPipeline
import RelayTestSupport
import Testing

@testable import TeamsAdapter

/// Commands as Teams users type them (issue 42, point 2), the message action, the cards'
/// buttons, and activities the bot does not handle (point 9).
@Suite("Teams: commands, the message action and buttons")
struct TeamsInboundTests {
    @Test(arguments: [
        ("translate fr Good morning", false, "/translate fr Good morning"),
        ("/translate fr Good morning", false, "/translate fr Good morning"),
        ("translate fr Good morning", true, "/translate fr Good morning"),
        ("/fix teh cat", true, "/fix teh cat"),
        ("The moon is made of cheese", true, "/tribunal The moon is made of cheese"),
        ("The moon is made of cheese", false, "/tribunal The moon is made of cheese"),
        ("", false, "/help"),
        ("explain 2 &amp; 2", true, "/explain 2 & 2"),
    ])
    func commandsAsTyped(text: String, personal: Bool, line: String) async throws {
        try await TeamsHarness.with { harness, client in
            let status1 = try await harness.post(harness.message(text, personal: personal), to: client).status
            #expect(status1 == .ok)
            #expect(harness.inbox.submissions.map(\.0.text) == [line])
        }
    }

    @Test func inAChannelOnlyAMentionOfTheBotRuns() async throws {
        try await TeamsHarness.with { harness, client in
            let status2 = try await harness.post(harness.message("translate fr hi", mentioning: false), to: client).status
            #expect(status2 == .ok)
            #expect(harness.inbox.submissions.isEmpty)
        }
    }

    /// The tenant is the team in a channel, the person in a personal chat; the address answers
    /// in the command's conversation, replying to its message.
    @Test func tenantsAndAddresses() async throws {
        try await TeamsHarness.with { harness, client in
            _ = try await harness.post(harness.message("fix teh cat", id: "m-1"), to: client)
            _ = try await harness.post(harness.message("fix teh cat", personal: true, id: "m-2"), to: client)
            let submitted = harness.inbox.submissions
            #expect(submitted.map(\.0.team) == [TeamsHarness.team, "dm:\(TeamsHarness.aliceAAD)"])
            #expect(submitted.map(\.0.user) == [TeamsHarness.aliceAAD, TeamsHarness.aliceAAD])
            #expect(submitted.map(\.0.eventKey) == ["activity:m-1", "activity:m-2"])
            let addresses = submitted.compactMap { TeamsAddress.decode($0.1.address) }
            #expect(addresses.map(\.replyTo) == ["m-1", "m-2"])
            #expect(addresses.map(\.isPersonal) == [false, true])
            #expect(addresses.first?.serviceURL == harness.framework.serviceURL)
        }
    }

    /// "Fact-check with Rhea" on a message: a tribunal on its text (HTML undone), in its thread.
    @Test func theMessageActionFactChecksTheMessage() async throws {
        try await TeamsHarness.with { harness, client in
            var activity = harness.message("", id: "invoke-1").objectValue ?? [:]
            activity["type"] = "invoke"
            activity["name"] = "composeExtension/submitAction"
            activity["text"] = nil
            activity["value"] = [
                "commandId": "factCheck", "commandContext": "message",
                "messagePayload": [
                    "id": "1700000000042", "body": ["contentType": "html", "content": "<p>The Great Wall is visible from the Moon &amp; Mars.</p>"],
                    "from": ["user": ["id": "bob", "displayName": "Bob"]],
                ],
            ]
            let response = try await harness.post(.object(activity), to: client)
            #expect(response.status == .ok)
            let submitted = try #require(harness.inbox.submissions.first)
            #expect(submitted.0.text == "/tribunal")
            #expect(submitted.0.repliedTo == "The Great Wall is visible from the Moon & Mars.")
            #expect(TeamsAddress.decode(submitted.1.address)?.replyTo == "1700000000042")
        }
    }

    @Test func theRunAgainButtonRunsItsLineAgain() async throws {
        try await TeamsHarness.with { harness, client in
            var activity = harness.message("", id: "click-1").objectValue ?? [:]
            activity["text"] = nil
            activity["entities"] = nil
            activity["replyToId"] = "1700000000077"
            activity["value"] = ["rhea": "runAgain", "line": "/translate fr Good morning"]
            let status3 = try await harness.post(.object(activity), to: client).status
            #expect(status3 == .ok)
            #expect(harness.inbox.submissions.map(\.0.text) == ["/translate fr Good morning"])
        }
    }

    /// "Post to channel" posts the private result for everyone once, and only for its asker.
    @Test func postToChannelPostsTheResultOnceAndOnlyForItsAsker() async throws {
        try await TeamsHarness.with { harness, client in
            let address = TeamsDeliveryTests.address(harness.framework)
            let result = TeamsDeliveryTests.result("Bonjour", private: true)
            harness.inbox.keep(TeamsDeliveryTests.entry(.reply(result), address, id: "entry-1"))
            func click(from user: String) async throws -> HTTPResponse.Status {
                var activity = harness.message("", id: UUID().uuidString).objectValue ?? [:]
                activity["text"] = nil
                activity["from"] = ["id": .string(user), "name": "Someone"]
                activity["value"] = ["rhea": "postToChannel", "entry": "entry-1"]
                return try await harness.post(.object(activity), to: client).status
            }
            for user in ["29:1mallory", TeamsHarness.alice, TeamsHarness.alice] {
                let status = try await click(from: user)
                #expect(status == .ok)
            }
            let posts = harness.inbox.posts
            #expect(posts.first?.reply.body == "Only the person who asked can post this result to the channel.")
            let published = posts.filter { $0.onceAs == "entry-1:posted" }
            #expect(published.count == 1)
            #expect(published.first?.reply.isPrivate == false)
            #expect(published.first?.reply.actions == [.runAgain(commandLine: "/translate fr Good morning")])
            #expect(posts.contains { $0.onceAs == "entry-1:posted-note" && $0.replacing == "entry-1" })
            #expect(posts.last?.reply.body == "This result was already posted to the channel.")
        }
    }

    /// Activities Teams sends that the bot does nothing with are taken (200) and run nothing;
    /// an invoke it does not handle is 501, an activity type the Bot Framework does not define 400,
    /// a body that is no activity 400 naming the field, and one past the cap 413.
    @Test func activitiesTheBotDoesNotHandle() async throws {
        try await TeamsHarness.with { harness, client in
            var update = harness.message("", id: "u-1").objectValue ?? [:]
            update["type"] = "conversationUpdate"
            let status4 = try await harness.post(.object(update), to: client).status
            #expect(status4 == .ok)
            var invoke = update
            invoke["type"] = "invoke"
            invoke["name"] = "task/fetch"
            let unhandled = try await harness.post(.object(invoke), to: client)
            #expect(unhandled.status == .notImplemented)
            #expect(String(buffer: unhandled.body).contains("task/fetch"))
            var strange = update
            strange["type"] = "hologram"
            let bad = try await harness.post(.object(strange), to: client)
            #expect(bad.status == .badRequest)
            #expect(String(buffer: bad.body).contains("hologram"))
            var noConversation = harness.message("fix teh cat").objectValue ?? [:]
            noConversation["conversation"] = nil
            let missing = try await harness.post(.object(noConversation), to: client)
            #expect(missing.status == .badRequest)
            #expect(String(buffer: missing.body).contains("conversation"))
            let huge = harness.message(String(repeating: "a", count: TeamsRoutes.maxBody))
            let status5 = try await harness.post(huge, to: client).status
            #expect(status5 == .contentTooLarge)
            #expect(harness.inbox.submissions.isEmpty)
        }
    }
}
