import Foundation
import RelayCore
import RelayServer
import RelayTestSupport
import SlackAdapter
import Testing

/// Stored data ages out while the server runs, and users can clear theirs: through signed slash
/// commands, with the relay's clock jumped ahead instead of waiting months.
@Suite("Data retention, through the server")
struct DataRetentionTests {
    /// A configuration whose retention passes come every 100 ms.
    static func frequentPurges(_ fakes: SlackFakes) -> AppConfiguration {
        var configuration = fakes.configuration()
        configuration.retentionInterval = .milliseconds(100)
        return configuration
    }

    /// Sends a slash command as `user` and returns the text of its answer.
    static func ask(_ relay: RelayUnderTest, _ command: String, _ text: String, user: String = "U0HUMAN") async throws -> String {
        let url = relay.slack.makeResponseURL()
        _ = try await relay.slashCommand(command, text: text, responseURL: url, user: user)
        return try #require(await relay.slack.next(responseURL: url)?.body?["text"]?.stringValue)
    }

    @Test func historyAndFinishedRepliesOlderThanTheirLimitsDisappearWithoutARestart() async throws {
        try await SlackFakes.with { fakes in
            let clock = ShiftedClock()
            try await fakes.withRelay(Self.frequentPurges(fakes), clock: clock) { relay in
                let url = relay.slack.makeResponseURL()
                _ = try await relay.slashCommand("/rhea", text: "fix teh cat --private", responseURL: url)
                let privately = try #require(await relay.slack.next(responseURL: url)?.body)
                let post = try #require(SlackEndToEndTests.button("post_to_channel", in: privately)?["value"]?.stringValue)
                #expect(try await Self.ask(relay, "/history", "").contains("fix"))

                // 91 days later (history keeps 90 by default, finished replies 24 hours).
                clock.jump(by: .seconds(91 * 86_400))
                try await eventually("the old run to leave the history") {
                    try await Self.ask(relay, "/history", "").contains("No results yet")
                }
                let click = relay.slack.makeResponseURL()
                _ = try await relay.click("post_to_channel", value: post, user: "U0HUMAN", responseURL: click)
                let answer = try #require(await relay.slack.next(responseURL: click)?.body?["text"]?.stringValue)
                #expect(answer.contains("no longer available"))
            }
        }
    }

    @Test func turningRetentionOffAlsoRemovesWhatWasStoredAtTheNextPurge() async throws {
        try await SlackFakes.with { fakes in
            try await fakes.withRelay(Self.frequentPurges(fakes)) { relay in
                _ = try await Self.ask(relay, "/translate", "fr Good morning")
                #expect(try await Self.ask(relay, "/history", "").contains("Good morning"))
                #expect(try await Self.ask(relay, "/settings", "retention off").contains("retention is now off"))
                try await eventually("the stored run to be purged") {
                    try await Self.ask(relay, "/history", "").contains("No results yet")
                }
            }
        }
    }

    @Test func historyClearDeletesTheAskersHistoryAtOnceAndNoOneElses() async throws {
        try await SlackFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                _ = try await Self.ask(relay, "/translate", "fr Good morning", user: "U0ADA")
                _ = try await Self.ask(relay, "/fix", "teh cat", user: "U0ADA")
                _ = try await Self.ask(relay, "/translate", "de Good night", user: "U0BOB")
                #expect(try await Self.ask(relay, "/history", "clear", user: "U0ADA").contains("2 results"))
                #expect(try await Self.ask(relay, "/history", "", user: "U0ADA").contains("No results yet"))
                #expect(try await Self.ask(relay, "/history", "", user: "U0BOB").contains("Good night"))
                #expect(try await Self.ask(relay, "/history", "clear", user: "U0ADA").contains("already empty"))
                #expect(try await Self.ask(relay, "/history", "everything", user: "U0ADA").contains("/history clear"))
            }
        }
    }
}
