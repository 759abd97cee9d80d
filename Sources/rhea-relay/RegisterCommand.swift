import ArgumentParser
import Logging
import RelayPlatform
import RelayServer

/// `rhea-relay register PLATFORM`: shows a platform the relay's commands, by the platform's own
/// `register` (`registerPlatform(named:with:among:logger:)`). The options are the same for every
/// platform; each reads those it needs and says when one is missing: a platform told where to
/// send requests takes `--url` (Slack prints its app manifest), one that registers commands
/// through its API may take `--guild` (Discord) or `--team` (Mattermost), one that can push updates `--webhook`
/// (Telegram), one that makes a file to upload `--out` (Teams).
struct RegisterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "register",
        abstract: "Show a platform the relay's commands: print what to paste (an app manifest for --url), or send them through its API.",
        discussion: chatPlatforms.map { "\($0.name): \($0.registrationHelp)" }.joined(separator: "\n\n"))

    @Argument(help: "The platform: \(chatPlatforms.map { $0.name }.joined(separator: ", ")).")
    var platform: String

    @Option(
        name: .long,
        help: "The relay's public base URL, e.g. https://relay.example.com, for a platform told where to send requests (Slack, Teams, Google Chat).")
    var url: String?

    @Option(name: .long, help: "Register in this one server only (its id), where commands appear at once (Discord).")
    var guild: String?

    @Option(name: .long, help: "Register in this one team (its id, or the name in its URL) (Mattermost). Same as --guild for Discord.")
    var team: String?

    @Option(
        name: .long,
        help: "The relay's webhook URL, e.g. https://relay.example.com/telegram/webhook, for a platform that can push updates (Telegram; else it polls).")
    var webhook: String?

    @Option(
        name: .long,
        help: "Where to write the file a registration makes (Teams: the app package, default rhea-teams-app.zip here; Google Chat: the slash commands list).")
    var out: String?

    @Option(name: .long, help: "YAML configuration file (environment variables override it).")
    var config: String?

    func run() async throws {
        if guild != nil, team != nil {
            writeErr("rhea-relay: pass --guild (Discord) or --team (Mattermost), not both: each names the one place to register in.")
            throw ExitCode(2)
        }
        let configuration = try await loadConfiguration(file: config)
        // --guild and --team are one concept, the one place to register in, named as each platform names it.
        let request = RegistrationRequest(publicURL: url, scope: guild ?? team, webhookURL: webhook, outputPath: out)
        let logger = Logger(label: "rhea-relay.register", factory: { _ in SwiftLogNoOpLogHandler() })
        do {
            let lines = try await registerPlatform(named: platform, with: request, among: configuration.platforms, logger: logger)
            for line in lines { writeOut(line) }
        } catch let error as ConfigurationError {
            writeErr("rhea-relay: \(error.message)")
            throw ExitCode(2)
        } catch let error as PlatformUnreachable {
            // Not the configuration's fault, as far as can be told: exit 1, as for a failed command.
            writeErr("rhea-relay: \(error.message)")
            throw ExitCode(1)
        }
    }
}
