import ArgumentParser
import RelayPlatform
import RelayServer

/// `rhea-relay register PLATFORM --url URL`: prints what the platform needs to show the relay's
/// commands (Slack: the app manifest to paste), pointing at the relay's public URL.
struct RegisterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "register", abstract: "Print a platform's command registration (Slack: the app manifest) for your public URL.")

    @Argument(help: "The platform: \(chatPlatforms.map { $0.name }.joined(separator: ", ")).")
    var platform: String

    @Option(name: .long, help: "The relay's public base URL, e.g. https://relay.example.com.")
    var url: String

    @Option(name: .long, help: "YAML configuration file (environment variables override it).")
    var config: String?

    func run() async throws {
        guard url.lowercased().hasPrefix("https://") || url.lowercased().hasPrefix("http://") else {
            writeErr("rhea-relay: --url must be an http:// or https:// URL, got `\(url)`.")
            throw ExitCode(2)
        }
        let configuration = try await loadConfiguration(file: config)
        let names = chatPlatforms.map { $0.name }
        guard let chosen = configuration.platforms.first(where: { type(of: $0).name == platform.lowercased() }) else {
            writeErr("rhea-relay: unknown platform `\(platform)`; known: \(names.joined(separator: ", ")).")
            throw ExitCode(2)
        }
        guard let registration = chosen.commandRegistration(publicURL: url) else {
            writeErr("rhea-relay: \(platform) needs no command registration.")
            throw ExitCode(1)
        }
        writeOut(registration)
    }
}
