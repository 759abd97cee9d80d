import Foundation
import RelayCore
import RelayTestSupport
import RelayTestTags
import Testing

/// `rhea-relay register telegram` and Telegram's configuration, through the real binary against
/// the fake Bot API on 127.0.0.1.
@Suite("rhea-relay and Telegram", .serialized, .tags(.peers))
struct CLITelegramTests {
    static let secret = "cli-webhook_Secret-42"

    @Test func registerSendsTheCheckedInCommandsAndSetsTheWebhookWithItsSecret() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        try await withFakeTelegramBotAPI { telegram in
            let environment = ["TELEGRAM_BOT_TOKEN": telegram.token, "TELEGRAM_API_URL": telegram.url, "TELEGRAM_WEBHOOK_SECRET": Self.secret]
            let out = try await cli.run(["register", "telegram", "--webhook", "https://relay.example.com/telegram/webhook"], environment: environment)
            #expect(out.status == 0, "\(out.stderr)")
            #expect(out.stdout.contains("Registered the commands"))
            let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../bots/telegram/commands.json")
            let checkedIn = try #require(JSONValue.parse(Array(try Data(contentsOf: file))))
            #expect(telegram.commands() == checkedIn["commands"]?.arrayValue, "Telegram holds exactly the checked-in commands")
            let webhook = try #require(telegram.webhook)
            #expect(webhook.url == "https://relay.example.com/telegram/webhook")
            #expect(webhook.secretToken == Self.secret)
            #expect(Set(webhook.allowedUpdates ?? []) == ["message", "callback_query", "inline_query", "message_reaction"])
            #expect(!out.stdout.contains(telegram.token) && !out.stderr.contains(telegram.token), "the token is never printed")

            let plain = try await cli.run(["register", "telegram", "--webhook", "http://relay.example.com/telegram/webhook"], environment: environment)
            #expect(plain.status == 2)
            #expect(plain.stderr.contains("https://"))
        }
    }

    @Test func badTelegramConfigurationIsRefusedWithTheVariableNamed() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let token = "123456789:AAE_fake-token_for-tests"
        let noSecret = try await cli.run(["serve"], environment: ["TELEGRAM_BOT_TOKEN": token, "TELEGRAM_MODE": "webhook"])
        #expect(noSecret.status == 2)
        #expect(noSecret.stderr.contains("TELEGRAM_WEBHOOK_SECRET"), "\(noSecret.stderr)")
        let badToken = try await cli.run(["serve"], environment: ["TELEGRAM_BOT_TOKEN": "paste-your-token-here"])
        #expect(badToken.status == 2)
        #expect(badToken.stderr.contains("TELEGRAM_BOT_TOKEN"), "\(badToken.stderr)")
        #expect(!badToken.stderr.contains("paste-your-token-here"), "a secret is never printed, even a wrong one")
        let badMode = try await cli.run(["serve"], environment: ["TELEGRAM_BOT_TOKEN": token, "TELEGRAM_MODE": "carrier-pigeon"])
        #expect(badMode.status == 2)
        #expect(badMode.stderr.contains("TELEGRAM_MODE (telegram.mode) must be polling or webhook"))
        let badSecret = try await cli.run(
            ["serve"], environment: ["TELEGRAM_BOT_TOKEN": token, "TELEGRAM_MODE": "webhook", "TELEGRAM_WEBHOOK_SECRET": "has spaces!"])
        #expect(badSecret.status == 2)
        #expect(badSecret.stderr.contains("TELEGRAM_WEBHOOK_SECRET"))
    }
}
