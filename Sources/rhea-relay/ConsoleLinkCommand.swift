import ArgumentParser
import Foundation
import RelayPipeline
import RelayPlatform
import RelayServer

/// `rhea-relay console-link --team T`: the operator's one-time sign-in link to a team's console
/// (docs/console.md), as `/admin console` gives a team's admin in chat.
struct ConsoleLinkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "console-link",
        abstract: "Print a one-time sign-in link to a team's web console (valid 10 minutes, used once).")

    @Option(name: .long, help: "YAML configuration file (environment variables override it).")
    var config: String?

    @Option(name: .long, help: "The team's id on its platform (as `/admin` shows it).")
    var team: String

    @Option(name: .long, help: "The team's platform (slack, discord, …); needed unless one platform alone is on.")
    var platform: String?

    @Option(name: .customLong("as"), help: "The name the console shows for you.")
    var name: String = ProcessInfo.processInfo.environment["USER"] ?? "operator"

    func run() async throws {
        let configuration = try await loadConfiguration(file: config)
        let on = configuration.platforms.filter(\.status.isOn).map { type(of: $0).name }
        let chosen: String
        if let platform {
            let known = chatPlatforms.map { $0.name }
            guard known.contains(platform.lowercased()) else {
                throw ValidationError("--platform must be one of \(known.joined(separator: ", ")), got `\(platform)`.")
            }
            chosen = platform.lowercased()
        } else if on.count == 1 {
            chosen = on[0]
        } else {
            throw ValidationError(
                "Name the team's platform with --platform (\(on.isEmpty ? "no platform is on here" : "on here: " + on.joined(separator: ", "))): a team id means something only on its platform."
            )
        }
        do {
            let link = try await RelayApplication.consoleLink(configuration, platform: chosen, team: team, operator: name)
            writeOut(link.url)
        } catch {
            FileHandle.standardError.write(Data("rhea-relay: \(error)\n".utf8))
            throw ExitCode(2)
        }
    }
}
