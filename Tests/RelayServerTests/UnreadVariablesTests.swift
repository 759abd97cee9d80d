import DiscordAdapter
import MatrixAdapter
import MattermostAdapter
import RelayPlatform
import RelayServer
import SlackAdapter
import TelegramAdapter
import Testing

/// A variable with the relay's prefix that nothing reads is named at start, with the nearest
/// name that is read, instead of being ignored in silence.
@Suite("Configuration: variables nothing reads")
struct UnreadVariablesTests {
    static let platforms: [any ChatPlatform.Type] = [
        SlackPlatform.self, DiscordPlatform.self, TelegramPlatform.self, MatrixPlatform.self, MattermostPlatform.self,
    ]

    func warnings(_ environment: [String: String]) async throws -> [String] {
        try await ConfigurationLoader.load(file: nil, environment: environment, platforms: Self.platforms).warnings
    }

    @Test func aMisspeltVariableIsNamedWithTheNearestOneRead() async throws {
        let said = try await warnings(["COUNCIL_MODLES": "a,b", "SLACK_SIGNING_SECRT": "x", "PATH": "/bin", "HOME": "/tmp"])
        #expect(said.count == 2, "\(said)")
        #expect(said.contains { $0.contains("COUNCIL_MODLES is set, but rhea-relay reads no such variable") && $0.hasSuffix("Did you mean COUNCIL_MODELS?") })
        #expect(said.contains { $0.contains("SLACK_SIGNING_SECRT") && $0.hasSuffix("Did you mean SLACK_SIGNING_SECRET?") })
    }

    @Test func aCouncilModelsKeyVariableMissingItsEnvSuffixIsNamed() async throws {
        let said = try await warnings([
            "TRIBUNAL_BACKEND": "council", "COUNCIL_MODELS": "a", "COUNCIL_A_BASE_URL": "http://127.0.0.1:9/v1", "COUNCIL_A_MODEL": "m",
            "COUNCIL_A_TIER": "cheap", "COUNCIL_A_API_KEY": "sk-test",
        ])
        #expect(said == ["warning: COUNCIL_A_API_KEY is set, but rhea-relay reads no such variable; it is ignored. Did you mean COUNCIL_A_API_KEY_ENV?"])
    }

    /// Every variable docs/configuration.md documents (empty: unset to the reader) draws no warning, and a
    /// key a council model names for its API key is known.
    @Test func documentedVariablesAndNamedKeysDrawNoWarning() async throws {
        var environment = Dictionary(uniqueKeysWithValues: Self.documented.map { ($0, "") })
        environment["COUNCIL_MODELS"] = nil
        #expect(try await warnings(environment) == [])
        let council = try await warnings([
            "TRIBUNAL_BACKEND": "council", "COUNCIL_MODELS": "a", "COUNCIL_A_BASE_URL": "http://127.0.0.1:9/v1", "COUNCIL_A_MODEL": "m",
            "COUNCIL_A_TIER": "cheap", "COUNCIL_A_API_KEY_ENV": "COUNCIL_SHARED_KEY", "COUNCIL_SHARED_KEY": "sk-test",
        ])
        #expect(council == [])
    }

    static let documented = [
        "DISCORD_API_URL", "DISCORD_APPLICATION_ID", "DISCORD_BOT_TOKEN", "DISCORD_GATEWAY", "DISCORD_PUBLIC_KEY", "DISCORD_REACTION",
        "HTTP_ADMIN_TOKEN", "HTTP_HOST", "HTTP_IDLE_TIMEOUT", "HTTP_MAX_CONNECTIONS", "HTTP_OUTBOUND_CONNECTIONS", "HTTP_PORT", "HTTP_READ_TIMEOUT",
        "LOG_LEVEL", "MATRIX_ACCESS_TOKEN", "MATRIX_ACCESS_TOKEN_FILE", "MATRIX_ALLOWED_SERVERS", "MATRIX_HOMESERVER_URL", "MATRIX_REACTION",
        "MATRIX_SYNC_TIMEOUT", "MATTERMOST_BOT_TOKEN", "MATTERMOST_COMMAND_TOKENS", "MATTERMOST_REACTION", "MATTERMOST_URL", "MATTERMOST_WEBSOCKET",
        "RHEA_API_CLOCK_SKEW", "RHEA_API_DEVELOPMENT", "RHEA_API_ENABLED", "RHEA_API_JWT_SECRET", "RHEA_API_KEYS_FILE",
        "RHEA_API_MAX_TOKEN_LIFETIME", "RHEA_API_PER_DAY", "RHEA_API_PER_MINUTE", "RUNS_BUSY_DEPTH", "RUNS_MAX_IN_FLIGHT", "SLACK_API_URL",
        "SLACK_APP_TOKEN", "SLACK_BOT_TOKEN", "SLACK_REACTION", "SLACK_SIGNING_SECRET", "SLACK_TEAM_ID", "STORE_PATH", "STORE_URL",
        "STORE_URL_FILE", "TELEGRAM_API_URL", "TELEGRAM_BOT_TOKEN", "TELEGRAM_INLINE_DEADLINE", "TELEGRAM_MODE", "TELEGRAM_POLL",
        "TELEGRAM_POLL_TIMEOUT", "TELEGRAM_REACTION", "TELEGRAM_WEBHOOK_SECRET", "TRIBUNAL_API_KEY", "TRIBUNAL_BACKEND",
        "TRIBUNAL_DEVELOPMENT_MODE", "TRIBUNAL_TIMEOUTS_QUICK", "TRIBUNAL_TOKEN", "TRIBUNAL_URL",
    ]
}
