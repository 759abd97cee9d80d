import DiscordAdapter
import Foundation
import MatrixAdapter
import MattermostAdapter
import RelayPlatform
import RelayServer
import RelayTestSupport
import RelayTribunal
import RheaAPI
import SlackAdapter
import TelegramAdapter
import Testing

/// Issue 28, point 4: a file the relay reads a credential from is its owner's alone, or start-up
/// stops naming the file and the command that fixes it.
@Suite("serve: secret files are their owner's alone")
struct SecretFileTests {
    static let platforms: [any ChatPlatform.Type] = [
        SlackPlatform.self, DiscordPlatform.self, TelegramPlatform.self, MatrixPlatform.self, MattermostPlatform.self,
    ]

    /// Every `…File` setting (each read through `ConfigValues.secret`) and the API keys file.
    static let fileVariables = [
        "TRIBUNAL_TOKEN_FILE", "TRIBUNAL_API_KEY_FILE", "STORE_URL_FILE", "HTTP_ADMIN_TOKEN_FILE", "RHEA_API_JWT_SECRET_FILE",
        "RHEA_API_KEYS_FILE", "SLACK_SIGNING_SECRET_FILE", "SLACK_BOT_TOKEN_FILE", "SLACK_APP_TOKEN_FILE", "DISCORD_BOT_TOKEN_FILE",
        "TELEGRAM_BOT_TOKEN_FILE", "TELEGRAM_WEBHOOK_SECRET_FILE", "MATRIX_ACCESS_TOKEN_FILE", "MATTERMOST_COMMAND_TOKENS_FILE",
        "MATTERMOST_BOT_TOKEN_FILE",
    ]

    func load(_ environment: [String: String]) async throws -> AppConfiguration {
        try await ConfigurationLoader.load(file: nil, environment: environment, platforms: Self.platforms)
    }

    @Test(arguments: [0o644, 0o666, 0o620, 0o602, 0o604, 0o660, 0o777])
    func aFileOthersCanReadOrGroupOrOthersCanWriteIsRefused(mode: Int) async throws {
        for variable in Self.fileVariables {
            let file = try SecretFileFixture("a-secret-value-of-at-least-32-characters\n", mode: mode)
            defer { file.remove() }
            let error = await #expect(throws: ConfigurationError.self) { _ = try await load([variable: file.path]) }
            let message = error?.message ?? ""
            #expect(message.contains("(\(variable)) names \(file.path), which can be"), "\(variable): \(message)")
            #expect(message.hasSuffix("chmod 600 \(file.path)"), "\(variable): \(message)")
            #expect(message.contains(String(format: "mode %04o", mode)), "\(message)")
            #expect(!message.contains("a-secret-value"), "the refusal never shows what the file holds")
        }
    }

    @Test func whatTheRefusalsSay() async throws {
        let writable = try SecretFileFixture("sha256:\(String(repeating: "ab", count: 32))\n", mode: 0o666, name: "keys")
        defer { writable.remove() }
        let readable = try SecretFileFixture("xoxb-token\n", mode: 0o644, name: "token")
        defer { readable.remove() }
        let byWrite = await #expect(throws: ConfigurationError.self) { _ = try await load(["RHEA_API_KEYS_FILE": writable.path]) }
        #expect(
            byWrite?.message
                == "api.keysFile (RHEA_API_KEYS_FILE) names \(writable.path), which can be written by group or others (mode 0666): whoever can change it can change what the relay trusts. Make it its owner's alone: chmod 600 \(writable.path)"
        )
        let byRead = await #expect(throws: ConfigurationError.self) { _ = try await load(["SLACK_BOT_TOKEN_FILE": readable.path]) }
        #expect(
            byRead?.message
                == "slack.botTokenFile (SLACK_BOT_TOKEN_FILE) names \(readable.path), which can be read by other users (mode 0644), and it holds a credential. Make it its owner's alone: chmod 600 \(readable.path)"
        )
    }

    /// The owner's alone, or read by the group too (a Kubernetes secret mounted 0440 with fsGroup).
    @Test(arguments: [0o600, 0o400, 0o640, 0o440])
    func aFileOnlyItsOwnerAndGroupCanReadIsAccepted(mode: Int) async throws {
        let keys = try SecretFileFixture("sha256:\(String(repeating: "ab", count: 32))\n", mode: mode, name: "keys")
        defer { keys.remove() }
        let token = try SecretFileFixture("a-tribunal-token\n", mode: mode, name: "token")
        defer { token.remove() }
        let configuration = try await load(["RHEA_API_KEYS_FILE": keys.path, "TRIBUNAL_TOKEN_FILE": token.path])
        #expect(configuration.api.keyDigests == [String(repeating: "ab", count: 32)])
        #expect(configuration.tribunal.token == "a-tribunal-token")
    }

    @Test func aMissingFileStillCannotBeRead() async throws {
        let error = await #expect(throws: ConfigurationError.self) { _ = try await load(["DISCORD_BOT_TOKEN_FILE": "/nonexistent/discord"]) }
        #expect(error?.message == "discord.botTokenFile (DISCORD_BOT_TOKEN_FILE) names /nonexistent/discord, which cannot be read.")
    }
}
