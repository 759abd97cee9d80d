import DiscordAdapter
import MatrixAdapter
import MattermostAdapter
import RelayPlatform
import RelayServer
import SlackAdapter
import TelegramAdapter
import Testing

/// A platform given some of its settings but not what turns it on says what is set and exactly
/// what is missing — never asks for what is already there (issue 46, point 2), on every platform.
@Suite("Half-configured platforms name what is missing")
struct HalfConfiguredPlatformTests {
    static let platforms: [any ChatPlatform.Type] = [
        SlackPlatform.self, DiscordPlatform.self, TelegramPlatform.self, MatrixPlatform.self, MattermostPlatform.self,
    ]

    @Test(
        arguments: [
            (
                ["MATRIX_HOMESERVER_URL": "https://matrix.example.org"], "matrix",
                "off: MATRIX_HOMESERVER_URL is set; missing: MATRIX_ACCESS_TOKEN (the bot account's)"
            ),
            (["TELEGRAM_MODE": "webhook"], "telegram", "off: TELEGRAM_MODE is set; missing: TELEGRAM_BOT_TOKEN (from @BotFather)"),
            (
                ["SLACK_BOT_TOKEN": "xoxb-1-2-abc"], "slack",
                "off: SLACK_BOT_TOKEN is set; missing: SLACK_SIGNING_SECRET (HTTP mode) or SLACK_APP_TOKEN (Socket Mode)"
            ),
            (
                ["MATTERMOST_URL": "https://chat.example.com"], "mattermost",
                "off: MATTERMOST_URL is set; missing: MATTERMOST_COMMAND_TOKENS (slash commands) and/or MATTERMOST_BOT_TOKEN (the bot)"
            ),
            (
                ["DISCORD_APPLICATION_ID": "123456789012345678"], "discord",
                "off: DISCORD_APPLICATION_ID is set; missing: DISCORD_PUBLIC_KEY (slash commands) and DISCORD_BOT_TOKEN (mentions, DMs, reactions, posts after 15 minutes)"
            ),
        ])
    func saysWhatIsSetAndWhatIsMissing(environment: [String: String], platform: String, status: String) async throws {
        let configuration = try await ConfigurationLoader.load(file: nil, environment: environment, platforms: Self.platforms)
        let read = try #require(configuration.platforms.first { type(of: $0).name == platform })
        #expect(read.status.description == status)
        // The others, given nothing, ask for everything as before.
        for other in configuration.platforms where type(of: other).name != platform {
            #expect(other.status.description.hasPrefix("off: set "), "\(type(of: other).name): \(other.status)")
        }
    }
}
