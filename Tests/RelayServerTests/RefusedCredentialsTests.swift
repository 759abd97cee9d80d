import DiscordAdapter
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import MattermostAdapter
import RelayCore
import RelayServer
import RelayTestSupport
import SlackAdapter
import TelegramAdapter
import Testing

/// A platform whose token is refused is not "ready": `/readyz` answers 503, and its detailed
/// report names the platform, the variable and what the platform said; the log says it as an
/// error once, not at every retry (the once-a-minute rule itself is checked on a manual clock in
/// RelayPlatformTests/CredentialRefusalsTests). Every platform, each the way it finds out: at the
/// start-up check, and in the loop that holds its connection. (Matrix, against a real Synapse:
/// MatrixEndToEndTests.)
@Suite("Refused credentials: /readyz and the log")
struct RefusedCredentialsTests {
    static let adminToken = "refused-admin-token-0123456789abcdef"

    /// Runs the relay with `configuration` (its admin token set here), its log captured, while
    /// `body` reads it.
    static func withRelay(
        _ configuration: AppConfiguration, _ body: @escaping @Sendable (any TestClientProtocol, LogCapture) async throws -> Void
    ) async throws {
        var configuration = configuration
        configuration.http.adminToken = adminToken
        let log = LogCapture()
        let app = try await RelayApplication.build(
            configuration: configuration, registry: TestMetrics.registry, logger: log.logger, checkCredentialsAtStart: true)
        try await app.test(.live) { client in try await body(client, log) }
    }

    /// Waits until the detailed report shows `platform` refused with `credential` named (or,
    /// with nil, any refusal), then checks what the public and the admin are told, and returns
    /// the platform's state line.
    @discardableResult
    static func expectRefused(_ client: any TestClientProtocol, platform: String, naming words: [String]) async throws -> String {
        var state = ""
        try await eventually("/readyz to report \(platform)'s credentials refused", safety: .seconds(30)) {
            let response = try await client.execute(uri: "/readyz", method: .get, headers: [.authorization: "Bearer \(adminToken)"], body: nil)
            state = JSONValue.parse(response.body.readableBytesView)?["platforms"]?[platform]?.stringValue ?? ""
            return response.status == .serviceUnavailable && words.allSatisfy(state.contains)
        }
        #expect(state.contains("refused since"), "\(state)")
        let anonymous = try await client.execute(uri: "/readyz", method: .get)
        #expect(anonymous.status == .serviceUnavailable)
        #expect(String(buffer: anonymous.body) == "not ready\n")
        return state
    }

    /// The lines of the log that report `credential` refused.
    static func refusalLines(_ log: LogCapture, _ platform: String, _ credential: String) -> Int {
        log.text.split(separator: "\n").filter { $0.contains("\(platform): refused \(credential)") }.count
    }

    @Test func telegramPollingWithARevokedToken() async throws {
        try await TelegramFakes.with { fakes in
            var configuration = fakes.configuration(mode: .polling)
            var telegram = TelegramConfiguration(
                botToken: TelegramToken("123456:REVOKED-token-the-fake-does-not-know"), mode: .polling, apiURL: fakes.telegram.url, pollTimeout: .seconds(1))
            telegram.quietStart = .zero
            configuration.platforms = [TelegramPlatform(configuration: telegram)]
            try await Self.withRelay(configuration) { client, log in
                let state = try await Self.expectRefused(client, platform: "telegram", naming: ["TELEGRAM_BOT_TOKEN", "401"])
                #expect(!state.contains("REVOKED"), "the token is never shown: \(state)")
                // The poll goes on at its backoff (the token may be replaced), without a line each time.
                try await eventually("three refused polls", safety: .seconds(30)) {
                    fakes.telegram.calls().filter { $0.status == 401 }.count >= 4
                }
                #expect(Self.refusalLines(log, "telegram", "TELEGRAM_BOT_TOKEN") == 1, "\(log.text)")
                #expect(!log.text.contains("REVOKED"))
            }
        }
    }

    @Test func slackOverHTTPWithAWrongBotToken() async throws {
        try await SlackFakes.with { fakes in
            var configuration = fakes.configuration()
            var slack = SlackConfiguration(signingSecret: SlackFakes.signingSecret, botToken: "xoxb-wrong-token", apiURL: fakes.slack.apiURL)
            slack.filesURL = fakes.slack.baseURL
            configuration.platforms = [SlackPlatform(configuration: slack)]
            try await Self.withRelay(configuration) { client, log in
                // No connection of its own to find out: the start-up check (auth.test) does.
                try await Self.expectRefused(client, platform: "slack", naming: ["SLACK_BOT_TOKEN", "invalid_auth"])
                #expect(!log.text.contains("xoxb-wrong-token"))
            }
        }
    }

    @Test func slackSocketModeWithAWrongAppToken() async throws {
        try await SlackFakes.with { fakes in
            let configuration = fakes.configuration(signingSecret: nil, appToken: "xapp-wrong-app-token")
            try await Self.withRelay(configuration) { client, log in
                try await Self.expectRefused(client, platform: "slack", naming: ["SLACK_APP_TOKEN", "invalid_auth"])
                try await eventually("Socket Mode to ask again", safety: .seconds(30)) {
                    fakes.slack.requests(path: "/api/apps.connections.open").count >= 3
                }
                #expect(Self.refusalLines(log, "slack", "SLACK_APP_TOKEN") == 1, "\(log.text)")
            }
        }
    }

    @Test func discordWithAResetBotToken() async throws {
        try await DiscordFakes.with { fakes in
            var configuration = fakes.configuration(gateway: true)
            var discord = DiscordConfiguration(
                publicKey: fakes.signer.publicKeyHex, botToken: DiscordToken("reset-bot-token"), applicationID: FakeDiscordAPI.applicationID,
                apiURL: fakes.discord.apiURL, gateway: true)
            discord.cdnURL = fakes.discord.cdnURL
            discord.gatewayTimings = DiscordGatewayClient.Configuration(
                backoff: Backoff(initial: .milliseconds(20), maximum: .milliseconds(100)), identifySpacing: .milliseconds(20),
                closeTimeout: .milliseconds(200))
            configuration.platforms = [DiscordPlatform(configuration: discord)]
            try await Self.withRelay(configuration) { client, log in
                // Both ways: the start-up check (GET /users/@me) and the gateway's GET /gateway/bot.
                try await Self.expectRefused(client, platform: "discord", naming: ["DISCORD_BOT_TOKEN", "401"])
                try await eventually("the gateway to ask again", safety: .seconds(30)) {
                    fakes.discord.requests().filter { $0.path.hasSuffix("/gateway/bot") }.count >= 3
                }
                #expect(Self.refusalLines(log, "discord", "DISCORD_BOT_TOKEN") == 1, "\(log.text)")
                #expect(!log.text.contains("reset-bot-token"))
            }
        }
    }

    @Test func mattermostWebsocketWithARevokedBotToken() async throws {
        try await MattermostFakes.with { fakes in
            var configuration = fakes.configuration(bot: true, websocket: true)
            configuration.platforms = [
                MattermostPlatform(
                    configuration: MattermostConfiguration(
                        commandTokens: [MattermostToken(MattermostFakes.commandToken)], serverURL: fakes.mattermost.url,
                        botToken: MattermostToken("revokedbottoken000000000001"), websocket: true))
            ]
            try await Self.withRelay(configuration) { client, log in
                try await Self.expectRefused(client, platform: "mattermost", naming: ["MATTERMOST_BOT_TOKEN", "the token was refused"])
                #expect(Self.refusalLines(log, "mattermost", "MATTERMOST_BOT_TOKEN") == 1, "\(log.text)")
                #expect(!log.text.contains("revokedbottoken"))
            }
        }
    }

    /// A platform that takes its token is ready: the start-up check passes and nothing is
    /// reported (the contrast that shows the tests above can fail).
    @Test func telegramWithItsRightTokenIsReady() async throws {
        try await TelegramFakes.with { fakes in
            try await Self.withRelay(fakes.configuration(mode: .polling)) { client, _ in
                try await eventually("the start-up check to ask Telegram", safety: .seconds(30)) { !fakes.telegram.calls("getMe").isEmpty }
                try await eventually("a poll", safety: .seconds(30)) { !fakes.telegram.calls("getUpdates").isEmpty }
                let response = try await client.execute(uri: "/readyz", method: .get, headers: [.authorization: "Bearer \(Self.adminToken)"], body: nil)
                #expect(response.status == .ok, "\(String(buffer: response.body))")
                #expect(!String(buffer: response.body).contains("refused"))
            }
        }
    }
}
