public import Foundation
import RelayConsole
public import RelayPipeline
import RelayPlatform

extension RelayApplication {
    /// A one-time sign-in link to a team's console made by the operator (`rhea-relay
    /// console-link`): signed as `serve` signs them (the same lasting secret beside the store, or
    /// derived from `STORE_URL`), for a person named `operator` — an operator's link is not
    /// bound to a chat account.
    public static func consoleLink(
        _ configuration: AppConfiguration, platform: String, team: String, operator name: String, now: Date = Date()
    ) async throws -> ConsoleLink {
        guard configuration.console.isOn else {
            throw ConfigurationError(
                "The console is off: set CONSOLE_ENABLED=1 and PUBLIC_URL (the relay's address as browsers reach it), as `serve` has them (docs/console.md)."
            )
        }
        let secret =
            try configuration.storeURL.map(RelaySecretFile.shared(for:))
            ?? RelaySecretFile.loadOrCreate(path: RelaySecretFile.path(forStore: configuration.storePath))
        let grant = ConsoleGrant(platform: platform, team: team, user: "operator:\(name)", userName: name)
        return try await ConsoleTokens(relaySecret: secret, settings: configuration.console).link(for: grant, now: now)
    }
}
