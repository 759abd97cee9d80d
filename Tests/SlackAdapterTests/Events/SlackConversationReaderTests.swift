import Foundation
import RelayCore
import RelayTestSupport
import SlackAdapter
import Testing

/// The reader against the fake Web API over loopback HTTP: what Slack is asked, and what the
/// relay is told.
@Suite("Slack conversation reader")
struct SlackConversationReaderTests {
    /// A reader on a fake Web API.
    struct Harness {
        let web: SlackWebHarness
        let reader: SlackConversationReader

        var fake: FakeSlackWebAPI { web.fake }

        /// The `users.info` requests so far.
        var userInfoRequests: [RecordedRequest] { fake.requests(path: "users.info") }
        /// The `conversations.replies` requests so far, as their form fields.
        var repliesRequests: [[String: String]] { fake.requests(path: "conversations.replies").map { FakeSlackWebAPI.formFields($0.rawBody) } }
    }

    func withReader(
        limits: SlackConversationReader.Limits = .init(), _ body: (Harness) async throws -> Void
    ) async throws {
        try await withSlackWeb { web in
            let reader = SlackConversationReader(api: web.client, logger: web.logs.logger, limits: limits)
            try await body(Harness(web: web, reader: reader))
        }
    }

    static func event(user: String = "U0ASKER", team: String = "T0FAKE", channel: String = "C0TALK", thread: String? = nil) -> Event {
        Event(platform: "slack", team: team, channel: channel, thread: thread, user: user, text: "/settings channel lang fr")
    }

    // MARK: Admins

    @Test func adminsAndOwnersAreAdminsAndAPlainMemberIsNot() async throws {
        try await withReader { harness in
            for user in [FakeSlackUser.admin("U0ADMIN"), .owner("U0OWNER"), .primaryOwner("U0PRIMARY"), .member("U0MEMBER")] {
                harness.fake.seed(user)
            }
            #expect(await harness.reader.isAdmin(Self.event(user: "U0ADMIN")) == true)
            #expect(await harness.reader.isAdmin(Self.event(user: "U0OWNER")) == true)
            #expect(await harness.reader.isAdmin(Self.event(user: "U0PRIMARY")) == true)
            #expect(await harness.reader.isAdmin(Self.event(user: "U0MEMBER")) == false)

            // users.info is a read method: a form naming the user, with the bot token.
            let request = try #require(harness.userInfoRequests.first)
            #expect(request.header("Content-Type") == "application/x-www-form-urlencoded")
            #expect(request.header("Authorization") == "Bearer \(harness.fake.botToken)")
            #expect(FakeSlackWebAPI.formFields(request.rawBody) == ["user": "U0ADMIN"])
            #expect(harness.userInfoRequests.count == 4)
        }
    }

    @Test func anUnknownUserIsNoAdminAndSlacksReasonIsLogged() async throws {
        try await withReader { harness in
            #expect(await harness.reader.isAdmin(Self.event(user: "U0NOBODY")) != true)
            #expect(harness.web.logs.text.contains("warning"))
            #expect(harness.web.logs.text.contains("users.info: user_not_found"))
        }
    }

    @Test func aFailedCallSaysItCouldNotTell() async throws {
        try await withReader { harness in
            harness.fake.seed(.owner("U0OWNER"))
            harness.fake.failNext(with: .status(503), path: "users.info")
            // Nil, not false: the pipeline does not keep it (TeamRoles), so the next ask tries again.
            #expect(await harness.reader.isAdmin(Self.event(user: "U0OWNER")) == nil)
            #expect(harness.web.logs.text.contains("users.info: Slack answered HTTP 503"))
            #expect(await harness.reader.isAdmin(Self.event(user: "U0OWNER")) == true)
            #expect(harness.userInfoRequests.count == 2)
        }
    }

    // MARK: Threads

    /// A thread in `C0TALK`: the parent, then `replies` replies, one a second, by two people.
    static func seedThread(_ fake: FakeSlackWebAPI, replies: [String], parent: String = "Shall we ship on Friday?") -> String {
        let parentTS = "1700000100.000100"
        fake.seed(FakeSlackMessage(channel: "C0TALK", ts: parentTS, text: parent, user: "U0ANN"))
        for (index, text) in replies.enumerated() {
            fake.seed(
                FakeSlackMessage(
                    channel: "C0TALK", ts: "17000001\(String(format: "%02d", 1 + index)).000100", text: text, threadTS: parentTS,
                    user: index.isMultiple(of: 2) ? "U0BOB" : "U0ANN"))
        }
        // Chatter outside the thread is never read.
        fake.seed(FakeSlackMessage(channel: "C0TALK", ts: "1700000500.000100", text: "lunch?", user: "U0CAT"))
        return parentTS
    }

    @Test func aThreadIsReadAcrossPagesOldestFirst() async throws {
        try await withReader(limits: .init(threadPageSize: 3)) { harness in
            let thread = Self.seedThread(harness.fake, replies: ["Only if QA signs off", "QA signed off", "Then Friday it is"])
            let texts = await harness.reader.threadMessages(Self.event(thread: thread), limit: 50)
            #expect(texts == ["Shall we ship on Friday?", "Only if QA signs off", "QA signed off", "Then Friday it is"])

            // Two pages: the second asked for with the cursor the first gave.
            let requests = harness.repliesRequests
            #expect(requests.count == 2)
            #expect(requests.first?["channel"] == "C0TALK")
            #expect(requests.first?["ts"] == thread)
            #expect(requests.first?["limit"] == "3")
            #expect(requests.first?["cursor"] == nil)
            let firstPage = try #require(harness.fake.requests(path: "conversations.replies").first)
            #expect(firstPage.header("Content-Type") == "application/x-www-form-urlencoded")
            let cursor = try #require(requests.last?["cursor"])
            #expect(!cursor.isEmpty)
        }
    }

    @Test func theLimitIsRespectedKeepingTheOldest() async throws {
        try await withReader { harness in
            let thread = Self.seedThread(harness.fake, replies: ["one", "two", "three", "four"])
            let texts = await harness.reader.threadMessages(Self.event(thread: thread), limit: 2)
            #expect(texts == ["Shall we ship on Friday?", "one"])
            #expect(harness.repliesRequests.map { $0["limit"] } == ["2"], "no more asked for than needed")
        }
    }

    @Test func pagesStopAtTheLimitOfPages() async throws {
        try await withReader(limits: .init(threadPageSize: 1, maxThreadPages: 2)) { harness in
            let thread = Self.seedThread(harness.fake, replies: ["one", "two", "three"])
            let texts = await harness.reader.threadMessages(Self.event(thread: thread), limit: 100)
            #expect(texts == ["Shall we ship on Friday?", "one"])
            #expect(harness.repliesRequests.count == 2)
        }
    }

    @Test func slackMarkupBecomesPlainTextAndEmptyMessagesAreDropped() async throws {
        try await withReader { harness in
            let thread = Self.seedThread(
                harness.fake,
                replies: [
                    "<@U0BOB|bob> see <https://example.com/plan|the plan> &amp; the &lt;draft&gt;", "", "   ",
                    "<!here> done in <#C0DEV|dev>",
                ])
            let texts = await harness.reader.threadMessages(Self.event(thread: thread), limit: 10)
            #expect(
                texts == [
                    "Shall we ship on Friday?", "@bob see the plan (https://example.com/plan) & the <draft>",
                    "@here done in #dev",
                ])
        }
    }

    @Test func withoutAThreadNothingIsAsked() async throws {
        try await withReader { harness in
            _ = Self.seedThread(harness.fake, replies: ["one"])
            #expect(await harness.reader.threadMessages(Self.event(thread: nil), limit: 10) == [])
            #expect(harness.fake.requests().isEmpty)
        }
    }

    @Test func aThreadThatCannotBeReadIsEmpty() async throws {
        try await withReader(limits: .init(threadPageSize: 1)) { harness in
            let thread = Self.seedThread(harness.fake, replies: ["one", "two"])
            harness.fake.failNext(with: .error("not_in_channel"), path: "conversations.replies")
            #expect(await harness.reader.threadMessages(Self.event(thread: thread), limit: 10) == [])
            #expect(harness.web.logs.text.contains("conversations.replies: not_in_channel"))

            // A failure on a later page does not pass off the first pages as the whole thread.
            harness.fake.clearRequests()
            harness.fake.failNext(with: .status(500), path: "conversations.replies", after: 1)
            let texts = await harness.reader.threadMessages(Self.event(thread: thread), limit: 10)
            #expect(texts == [])
            #expect(harness.repliesRequests.count == 2)

            let unknown = await harness.reader.threadMessages(Self.event(thread: "1600000000.000100"), limit: 10)
            #expect(unknown == [])
        }
    }
}
