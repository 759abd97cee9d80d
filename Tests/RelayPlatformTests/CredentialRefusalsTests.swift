import Foundation
import Logging
import RelayPlatform
import RelayTestSupport
import Testing

/// What `/readyz` and the log are told of a refused credential, on the manual clock: the refusal
/// is recorded at once and kept (with its latest reason) until the platform takes the credential
/// again; the error line is written at once, then at most once a minute while it lasts.
@Suite("Credential refusals")
struct CredentialRefusalsTests {
    @Test func aLastingRefusalIsLoggedOnceAMinute() {
        let clock = ManualClock()
        let log = LogCapture()
        let board = CredentialRefusals()
        let telegram = board.reporter(platform: "telegram", clock: clock, logger: log.logger)
        func lines() -> Int { log.text.split(separator: "\n").filter { $0.contains("telegram: refused TELEGRAM_BOT_TOKEN") }.count }

        let start = clock.now
        telegram.refused("TELEGRAM_BOT_TOKEN", reason: "getUpdates: 401")
        #expect(lines() == 1)
        #expect(board.current["telegram"] == [.init(credential: "TELEGRAM_BOT_TOKEN", reason: "getUpdates: 401", since: start)])

        // Retries at the poll's backoff (30 s at most): no new line before a minute has passed.
        for _ in 0..<3 {
            clock.advance(by: .seconds(19))
            telegram.refused("TELEGRAM_BOT_TOKEN", reason: "getUpdates: 401 again")
        }
        #expect(lines() == 1)
        #expect(board.current["telegram"]?.first?.reason == "getUpdates: 401 again", "the latest reason is shown")
        #expect(board.current["telegram"]?.first?.since == start, "since the first refusal")
        clock.advance(by: .seconds(3))
        telegram.refused("TELEGRAM_BOT_TOKEN", reason: "getUpdates: 401")
        #expect(lines() == 2, "a minute after the first line")

        telegram.accepted("TELEGRAM_BOT_TOKEN")
        #expect(board.current.isEmpty)
        #expect(log.text.contains("telegram: TELEGRAM_BOT_TOKEN is taken again"))

        // A new refusal after one that ended is said at once.
        clock.advance(by: .seconds(1))
        telegram.refused("TELEGRAM_BOT_TOKEN", reason: "getUpdates: 401")
        #expect(lines() == 3)
    }

    /// Slack's two tokens are refused and taken apart: Socket Mode taking the app token does not
    /// clear a refused bot token; another platform's refusal is its own.
    @Test func eachCredentialIsItsOwn() {
        let clock = ManualClock()
        let log = LogCapture()
        let board = CredentialRefusals()
        let slack = board.reporter(platform: "slack", clock: clock, logger: log.logger)
        let discord = board.reporter(platform: "discord", clock: clock, logger: log.logger)
        slack.refused("SLACK_BOT_TOKEN", reason: "auth.test: invalid_auth")
        discord.refused("DISCORD_BOT_TOKEN", reason: "401")
        slack.accepted("SLACK_APP_TOKEN")
        #expect(board.current["slack"]?.map(\.credential) == ["SLACK_BOT_TOKEN"])
        #expect(board.current["discord"]?.map(\.credential) == ["DISCORD_BOT_TOKEN"])
        discord.accepted("DISCORD_BOT_TOKEN")
        #expect(board.current["discord"] == nil)
        #expect(board.current["slack"] != nil)
        #expect(!log.text.contains("SLACK_APP_TOKEN"), "nothing was refused, so nothing is taken again")
    }
}
