import ArgumentParser
import DiscordAdapter
import Logging
import RelayPlatform
import RelayServer
import TelegramAdapter

/// `rhea-relay register PLATFORM`: shows a platform the relay's commands. Slack (`--url URL`):
/// prints the app manifest to paste, pointing at the relay's public URL. Discord (`[--guild ID]`):
/// replaces the application's commands with the relay's, through Discord's API (a guild's show
/// at once; global ones within the hour), with DISCORD_BOT_TOKEN and DISCORD_APPLICATION_ID.
/// Telegram (`[--webhook URL]`): sends the command list (`setMyCommands`), and with `--webhook`
/// points the bot's updates at the relay (`setWebhook`, with TELEGRAM_WEBHOOK_SECRET).
struct RegisterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "register",
        abstract:
            "Register the relay's commands: print Slack's app manifest for your public URL, or send Discord or Telegram the command list.")

    @Argument(help: "The platform: \(chatPlatforms.map { $0.name }.joined(separator: ", ")).")
    var platform: String

    @Option(name: .long, help: "The relay's public base URL, e.g. https://relay.example.com (Slack).")
    var url: String?

    @Option(name: .long, help: "Discord: register in this server only (its id), where commands appear at once.")
    var guild: String?

    @Option(name: .long, help: "Telegram: the relay's webhook URL, e.g. https://relay.example.com/telegram/webhook (else it polls).")
    var webhook: String?

    @Option(name: .long, help: "YAML configuration file (environment variables override it).")
    var config: String?

    func run() async throws {
        let configuration = try await loadConfiguration(file: config)
        let names = chatPlatforms.map { $0.name }
        guard let chosen = configuration.platforms.first(where: { type(of: $0).name == platform.lowercased() }) else {
            writeErr("rhea-relay: unknown platform `\(platform)`; known: \(names.joined(separator: ", ")).")
            throw ExitCode(2)
        }
        if let discord = chosen as? DiscordPlatform {
            try await register(discord)
            return
        }
        if let telegram = chosen as? TelegramPlatform {
            try await register(telegram)
            return
        }
        guard let url else {
            writeErr("rhea-relay: --url is required for \(platform): the relay's public base URL, e.g. https://relay.example.com.")
            throw ExitCode(2)
        }
        guard url.lowercased().hasPrefix("https://") || url.lowercased().hasPrefix("http://") else {
            writeErr("rhea-relay: --url must be an http:// or https:// URL, got `\(url)`.")
            throw ExitCode(2)
        }
        guard let registration = chosen.commandRegistration(publicURL: url) else {
            writeErr("rhea-relay: \(platform) needs no command registration.")
            throw ExitCode(1)
        }
        writeOut(registration)
    }

    /// Bulk-overwrites Discord's command list and says where.
    private func register(_ discord: DiscordPlatform) async throws {
        let logger = Logger(label: "rhea-relay.register", factory: { _ in SwiftLogNoOpLogHandler() })
        do {
            let count = try await discord.registerCommands(guildID: guild, logger: logger)
            writeOut(
                "Registered \(count) Discord commands "
                    + (guild.map { "in server \($0) (they show at once)." } ?? "globally (they may take up to an hour to show)."))
        } catch let error as ConfigurationError {
            writeErr("rhea-relay: \(error.message)")
            throw ExitCode(2)
        }
    }

    /// Sends Telegram the command list, and the webhook when `--webhook` is given.
    private func register(_ telegram: TelegramPlatform) async throws {
        if let webhook, !webhook.lowercased().hasPrefix("https://") {
            writeErr("rhea-relay: --webhook must be an https:// URL (Telegram sends updates only over HTTPS), got `\(webhook)`.")
            throw ExitCode(2)
        }
        let logger = Logger(label: "rhea-relay.register", factory: { _ in SwiftLogNoOpLogHandler() })
        do {
            for line in try await telegram.register(webhookURL: webhook, logger: logger) { writeOut(line) }
        } catch let error as ConfigurationError {
            writeErr("rhea-relay: \(error.message)")
            throw ExitCode(2)
        }
    }
}
