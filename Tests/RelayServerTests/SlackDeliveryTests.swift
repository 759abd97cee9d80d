import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import RelayCore
import RelayPipeline
import RelayServer
import RelayTestSupport
import SlackAdapter
import Testing

/// How replies reach Slack when Slack is difficult, through the running server: long replies in
/// parts (each delivered once, in order, across 429s, 5xx and restarts), `response_url` limits and
/// expiry, results whose progress message cannot be edited, private runs, and "Post to channel".
@Suite("Slack delivery, through the server")
struct SlackDeliveryTests {
    static let quick = FakeRheaTribunal.quickPath

    /// `count` paragraphs, each tagged `TAG-n` and long enough to be one Slack message of its own.
    static func paragraphs(_ count: Int, tag: String) -> String {
        (1...count).map { "\(tag)-\($0) " + String(repeating: "word ", count: 560) }.joined(separator: "\n\n")
    }

    /// Which of `TAG-1`…`TAG-count` each text holds, in order.
    static func tags(in texts: [String], tag: String, count: Int) -> [Int] {
        texts.flatMap { text in (1...count).filter { text.contains("\(tag)-\($0) ") } }
    }

    // MARK: Parts

    @Test func aReplyInFourPartsMeetsA429ThenA500OnPartTwoAndTheChannelSeesEachPartOnceInOrder() async throws {
        try await SlackFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                await relay.tribunal.setQuickAnswer { _ in Self.paragraphs(4, tag: "PART") }
                relay.slack.failNext(1, with: .rateLimited(retryAfter: 1), path: "chat.postMessage", after: 1)
                relay.slack.failNext(1, with: .status(500), path: "chat.postMessage")
                let mention = SlackFakes.mention("ai write at length", eventID: "Ev0PARTS1", channel: "C0PARTS", ts: "1700000000.001100")
                #expect(try await relay.event(mention).status == .ok)

                // Part 1, then part 2 refused twice, then parts 2, 3 and 4.
                for _ in 1...6 { _ = try #require(await relay.slack.next(path: "chat.postMessage")) }
                try await relay.settled()
                let texts = relay.slack.messages(channel: "C0PARTS").map(\.text)
                #expect(Self.tags(in: texts, tag: "PART", count: 4) == [1, 2, 3, 4])
                #expect(relay.slack.requests(path: "chat.postMessage").count == 6)
                #expect(relay.slack.messages(channel: "C0PARTS").allSatisfy { $0.threadTS == "1700000000.001100" })

                // The retry after the 429 waited for Retry-After (pacing between parts is checked
                // in clock time by the outbox worker's tests).
                let arrivals = relay.slack.arrivalTimes(path: "chat.postMessage")
                if arrivals.count == 6 {
                    #expect(arrivals[1].duration(to: arrivals[2]) >= .seconds(1))
                }
            }
        }
    }

    @Test func partsAcceptedBeforeARestartAreNotSentAgainAfterIt() async throws {
        try await SlackFakes.with { fakes in
            await fakes.tribunal.setQuickAnswer { _ in Self.paragraphs(3, tag: "KEPT") }
            let mention = SlackFakes.mention("ai write at length", eventID: "Ev0PARTS2", channel: "C0KEPT", ts: "1700000000.001200")
            fakes.slack.failNext(3, with: .status(500), path: "chat.postMessage", after: 1)
            var slow = fakes.configuration()
            slow.delivery = DeliveryPolicy(
                maxAttempts: 20, retry: RetryPolicy(attempts: 20, baseDelay: .seconds(3), maxDelay: .seconds(3)), lease: .seconds(30),
                pollInterval: .milliseconds(50), drainTimeout: .seconds(1))
            try await fakes.withRelay(slow) { relay in
                #expect(try await relay.event(mention).status == .ok)
                _ = try #require(await relay.slack.next(path: "chat.postMessage"))
                _ = try #require(await relay.slack.next(path: "chat.postMessage"))
            }
            #expect(Self.tags(in: fakes.slack.messages().map(\.text), tag: "KEPT", count: 3) == [1])

            try await fakes.withRelay(fakes.configuration()) { relay in
                // 1 accepted + 3 refused + parts 2 and 3: six in all, whichever run sent them.
                for _ in 3...6 { _ = try #require(await relay.slack.next(path: "chat.postMessage")) }
                try await relay.settled()
                #expect(relay.slack.requests(path: "chat.postMessage").count == 6)
                #expect(Self.tags(in: relay.slack.messages(channel: "C0KEPT").map(\.text), tag: "KEPT", count: 3) == [1, 2, 3])
                #expect(await relay.tribunal.requestCount(path: Self.quick) == 1)
            }
        }
    }

    // MARK: response_url

    @Test func aResponseURLCarriesFivePartsAndTheRestGoByTheBotTokenToTheSameChannel() async throws {
        try await SlackFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                await relay.tribunal.setQuickAnswer { _ in Self.paragraphs(7, tag: "LONG") }
                let url = relay.slack.makeResponseURL()
                _ = try await relay.slashCommand("/ai", text: "write at great length", responseURL: url, channel: "C0LONG")
                for _ in 1...2 { _ = try #require(await relay.slack.next(path: "chat.postMessage")) }
                try await relay.settled()
                let answers = relay.slack.requests(responseURL: url).compactMap(\.body)
                #expect(answers.count == 5)
                #expect(answers.allSatisfy { $0["response_type"]?.stringValue == "in_channel" })
                #expect(Self.tags(in: answers.compactMap { $0["text"]?.stringValue }, tag: "LONG", count: 7) == [1, 2, 3, 4, 5])
                let posted = relay.slack.messages(channel: "C0LONG")
                #expect(Self.tags(in: posted.map(\.text), tag: "LONG", count: 7) == [6, 7])
                #expect(posted.allSatisfy { $0.ephemeralUser == nil && $0.threadTS == nil })
            }
        }
    }

    @Test(arguments: ["expired", "used"])
    func anExpiredOrUsedResponseURLFallsBackToTheBotToken(_ how: String) async throws {
        try await SlackFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let url = relay.slack.makeResponseURL()
                if how == "expired" {
                    relay.slack.expire(responseURL: url)
                } else {
                    relay.slack.failNext(1, with: .error("used_url"), path: SlackEndToEndTests.path(of: url))
                }
                _ = try await relay.slashCommand("/translate", text: "fr Good morning", responseURL: url, channel: "C0FALLBACK")
                let post = try #require(await relay.slack.next(path: "chat.postMessage"))
                try await relay.settled()
                #expect(relay.slack.requests(responseURL: url).count == 1)
                #expect(post["channel"]?.stringValue == "C0FALLBACK")
                #expect(relay.slack.messages(channel: "C0FALLBACK").map(\.text).filter { $0.contains("[translate:fr] Good morning") }.count == 1)
            }
        }
    }

    @Test func aResponseURLOlderThanThirtyMinutesIsNotTriedAtAll() async throws {
        try await SlackFakes.with { fakes in
            let clock = ShiftedClock()
            try await fakes.withRelay(fakes.configuration(), clock: clock) { relay in
                relay.tribunal.hold(path: Self.quick)
                let url = relay.slack.makeResponseURL()
                _ = try await relay.slashCommand("/translate", text: "fr Good morning", responseURL: url, channel: "C0LATE")
                _ = try #require(await relay.tribunal.next(path: Self.quick))
                clock.jump(by: .seconds(31 * 60))
                relay.tribunal.release(path: Self.quick)
                let post = try #require(await relay.slack.next(path: "chat.postMessage"))
                try await relay.settled()
                #expect(relay.slack.requests(responseURL: url).isEmpty)
                #expect(post["channel"]?.stringValue == "C0LATE")
                #expect(post["text"]?.stringValue?.contains("[translate:fr] Good morning") == true)
            }
        }
    }

    // MARK: Progress that cannot be edited

    /// Saves `name` for the team with a slash command and waits for its confirmation.
    static func saveChain(_ name: String, _ dsl: String, on relay: RelayUnderTest) async throws {
        let url = relay.slack.makeResponseURL()
        _ = try await relay.slashCommand("/chain", text: "save \(name) = \(dsl)", responseURL: url)
        let saved = try #require(await relay.slack.next(responseURL: url)?.body)
        #expect(saved["text"]?.stringValue?.contains("Saved") == true, "\(saved)")
    }

    @Test func aResultWhoseProgressMessageCannotBeEditedGoesToTheResponseURLInstead() async throws {
        try await SlackFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                try await Self.saveChain("twostep", "grammar > rewrite:formal", on: relay)
                relay.slack.failNext(5, with: .error("message_not_found"), path: "chat.update")
                let url = relay.slack.makeResponseURL()
                _ = try await relay.slashCommand("/run", text: "twostep teh cat", responseURL: url, channel: "C0GONE")
                let progress = try #require(await relay.slack.next(path: "chat.postMessage"))
                #expect(progress["text"]?.stringValue?.contains("Running") == true)
                let result = try #require(await relay.slack.next(responseURL: url)?.body)
                try await relay.settled()
                #expect(result["response_type"]?.stringValue == "in_channel")
                #expect(result["text"]?.stringValue?.contains("[rewrite:formal] [grammar] teh cat") == true)
                #expect(relay.slack.requests(path: "chat.update").count >= 1)
            }
        }
    }

    @Test func aResultRefusedByEveryRouteIsMarkedFailedAndCounted() async throws {
        try await SlackFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                try await Self.saveChain("doomed", "grammar > rewrite:formal", on: relay)
                let failedBefore = try await Self.failedDeliveries(relay)
                relay.slack.failNext(5, with: .error("cant_update_message"), path: "chat.update")
                // The progress message is posted; the result's own post is refused.
                relay.slack.failNext(1, with: .error("not_in_channel"), path: "chat.postMessage", after: 1)
                let url = relay.slack.makeResponseURL()
                relay.slack.expire(responseURL: url)
                _ = try await relay.slashCommand("/run", text: "doomed teh cat", responseURL: url, channel: "C0DOOMED")
                _ = try #require(await relay.slack.next(path: "chat.postMessage"))
                _ = try #require(await relay.slack.next(path: "chat.postMessage"))
                try await relay.settled()
                #expect(relay.slack.requests(responseURL: url).count == 1)
                #expect(!relay.slack.messages(channel: "C0DOOMED").contains { $0.text.contains("teh cat") })
                try await eventually("the failure to be counted") { try await Self.failedDeliveries(relay) > failedBefore }
            }
        }
    }

    /// `relay_outbox_deliveries_total{platform="slack",outcome="failed"}` from `/metrics`.
    static func failedDeliveries(_ relay: RelayUnderTest) async throws -> Int {
        let text = String(
            buffer: try await relay.client.execute(
                uri: "/metrics", method: .get, headers: [.authorization: "Bearer \(SlackFakes.adminToken)"], body: nil
            ).body)
        let line = text.split(separator: "\n").first {
            $0.hasPrefix("relay_outbox_deliveries_total") && $0.contains("outcome=\"failed\"") && $0.contains("platform=\"slack\"")
        }
        return line.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }.map { Int($0) } ?? 0
    }

    // MARK: Private runs

    /// The text of a reply's context blocks (notes, footer), where a chain's steps are listed.
    static func contextText(_ body: JSONValue) -> String {
        (body["blocks"]?.arrayValue ?? []).filter { $0["type"]?.stringValue == "context" }
            .flatMap { $0["elements"]?.arrayValue ?? [] }.compactMap { $0["text"]?.stringValue }.joined(separator: "\n")
    }

    @Test(arguments: ["secretive hello there --private", "hush hello there"])
    func aPrivateChainRunPostsNothingToTheChannelAndShowsNoPrompt(_ line: String) async throws {
        try await SlackFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                try await Self.saveChain("secretive", "grammar > model \"SECRET-PROMPT {input}\" > rewrite:formal", on: relay)
                try await Self.saveChain("hush", "grammar > model \"SECRET-PROMPT {input}\" > output:private", on: relay)
                let url = relay.slack.makeResponseURL()
                _ = try await relay.slashCommand("/run", text: line, responseURL: url, channel: "C0HUSH")
                let result = try #require(await relay.slack.next(responseURL: url)?.body)
                try await relay.settled()
                #expect(result["response_type"]?.stringValue == "ephemeral")
                #expect(result["text"]?.stringValue?.contains("hello there") == true)
                #expect(!Self.contextText(result).contains("SECRET"))
                #expect(Self.contextText(result).contains("model"))
                #expect(relay.slack.requests(path: "chat.postMessage").isEmpty)
                #expect(relay.slack.requests(path: "chat.update").isEmpty)
                #expect(relay.slack.messages(channel: "C0HUSH").isEmpty)
            }
        }
    }

    @Test func aPublicChainRunShowsProgressWithoutThePrompt() async throws {
        try await SlackFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                try await Self.saveChain("open", "grammar > model \"SECRET-PROMPT {input}\" > rewrite:formal", on: relay)
                let url = relay.slack.makeResponseURL()
                _ = try await relay.slashCommand("/run", text: "open hello there", responseURL: url, channel: "C0OPEN")
                let progress = try #require(await relay.slack.next(path: "chat.postMessage"))
                let result = try #require(await relay.slack.next(path: "chat.update"))
                try await relay.settled()
                #expect(progress["text"]?.stringValue?.contains("Running") == true)
                let progressLines = (relay.slack.requests(path: "chat.postMessage") + relay.slack.requests(path: "chat.update"))
                    .filter { $0["text"]?.stringValue?.contains("Running") == true }
                #expect(!progressLines.isEmpty)
                #expect(progressLines.allSatisfy { !$0.rawBody.contains("SECRET") })
                #expect(!Self.contextText(result.body ?? [:]).contains("SECRET"))
            }
        }
    }

    // MARK: Post to channel

    @Test func postToChannelPostsOnceHoweverOftenItIsClickedAndTheOriginalSaysSo() async throws {
        try await SlackFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let first = relay.slack.makeResponseURL()
                _ = try await relay.slashCommand("/rhea", text: "fix teh cat --private", responseURL: first, user: "U0HUMAN")
                let privately = try #require(await relay.slack.next(responseURL: first)?.body)
                let post = try #require(SlackEndToEndTests.button("post_to_channel", in: privately)?["value"]?.stringValue)

                let click = relay.slack.makeResponseURL()
                _ = try await relay.click("post_to_channel", value: post, user: "U0HUMAN", responseURL: click)
                let published = try #require(await relay.slack.next(responseURL: click)?.body)
                #expect(published["response_type"]?.stringValue == "in_channel")
                let note = try #require(await relay.slack.next(responseURL: click)?.body)
                #expect(note["response_type"]?.stringValue == "ephemeral")
                #expect(note["replace_original"]?.boolValue == true)
                #expect(note["text"]?.stringValue?.contains("teh cat") == true)
                #expect(Self.contextText(note).contains("You posted this to the channel"))
                #expect(SlackEndToEndTests.button("post_to_channel", in: note) == nil)

                // A second click, and the first click's request again: nothing more is posted.
                let again = relay.slack.makeResponseURL()
                _ = try await relay.click("post_to_channel", value: post, user: "U0HUMAN", responseURL: again)
                let refused = try #require(await relay.slack.next(responseURL: again)?.body)
                #expect(refused["response_type"]?.stringValue == "ephemeral")
                #expect(refused["text"]?.stringValue?.contains("already posted") == true)
                _ = try await relay.click("post_to_channel", value: post, user: "U0HUMAN", responseURL: click)
                _ = try #require(await relay.slack.next(responseURL: click))
                try await relay.settled()
                let publicAnswers = relay.slack.requests().compactMap(\.body).filter { $0["response_type"]?.stringValue == "in_channel" }
                #expect(publicAnswers.count == 1)
                #expect(relay.slack.messages().filter { $0.ephemeralUser == nil }.isEmpty)
            }
        }
    }
}
