import Foundation
import MattermostAdapter
import RelayPlatform
import RelayServer
import RelayTestSupport
import Testing

/// `mattermost.*` as `serve` reads it from the environment: what turns each half on, and a clear
/// error for what cannot work.
@Suite("Mattermost configuration")
struct MattermostConfigurationTests {
    static func mattermost(_ environment: [String: String]) async throws -> MattermostPlatform {
        let configuration = try await ConfigurationLoader.load(file: nil, environment: environment, platforms: [MattermostPlatform.self])
        return try #require(configuration.platforms.first as? MattermostPlatform)
    }

    @Test func tokensURLAndBotTurnBothHalvesOn() async throws {
        let platform = try await Self.mattermost([
            "MATTERMOST_COMMAND_TOKENS": "commandtoken00000000000001, commandtoken00000000000002",
            "MATTERMOST_URL": "https://chat.example.com/", "MATTERMOST_BOT_TOKEN": "bottoken000000000000000001",
        ])
        #expect(platform.configuration.commandTokens.map(\.secret) == ["commandtoken00000000000001", "commandtoken00000000000002"])
        #expect(platform.configuration.serverURL == "https://chat.example.com")
        #expect(platform.status.description == "on (slash commands at /mattermost/commands + bot + websocket)")
        #expect(!"\(platform.configuration)".contains("bottoken"), "tokens never print")
    }

    @Test func theCommandTokensMayComeFromAFile() async throws {
        let file = try SecretFileFixture("commandtoken00000000000003\n", name: "mm-tokens")
        defer { file.remove() }
        let platform = try await Self.mattermost(["MATTERMOST_COMMAND_TOKENS_FILE": file.path, "MATTERMOST_URL": "https://chat.example.com"])
        #expect(platform.configuration.commandTokens.map(\.secret) == ["commandtoken00000000000003"])
        #expect(platform.status.description.contains("response_url"), "\(platform.status)")
        #expect(platform.callbackRule.description == "https://chat.example.com/hooks/commands/…")
    }

    @Test func whatCannotWorkStopsStartUpSayingWhy() async throws {
        let withoutURL = await #expect(throws: ConfigurationError.self) {
            _ = try await Self.mattermost(["MATTERMOST_BOT_TOKEN": "bottoken000000000000000001"])
        }
        #expect(withoutURL?.message.contains("MATTERMOST_URL") == true)
        // Issue 47, point 2: a command is answered only on its server, so that must be known.
        let commandsWithoutURL = await #expect(throws: ConfigurationError.self) {
            _ = try await Self.mattermost(["MATTERMOST_COMMAND_TOKENS": "commandtoken00000000000001"])
        }
        #expect(commandsWithoutURL?.message.contains("MATTERMOST_URL") == true)
        let spaced = await #expect(throws: ConfigurationError.self) {
            _ = try await Self.mattermost(["MATTERMOST_COMMAND_TOKENS": "\"paste the token here\""])
        }
        #expect(spaced?.message.contains("MATTERMOST_COMMAND_TOKENS") == true)
        let off = try await Self.mattermost([:])
        #expect(!off.status.isOn)
        #expect(off.status.description.contains("MATTERMOST_COMMAND_TOKENS"))
    }
}
