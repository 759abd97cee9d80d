import Logging
import RelayPlatform
import ServiceLifecycle

/// At start, asks each platform that is on whether it takes the relay's credentials (the check
/// `rhea-relay doctor` makes), so that a wrong token is in `/readyz` and the log at once, not at
/// the first reply that fails to send: a platform reached only by webhook (Slack over HTTP,
/// Telegram's webhook, Mattermost's slash commands) would otherwise not find out until a user
/// waits in vain. A platform that cannot be asked (no connection) is not reported: that says
/// nothing of the credentials. Then it waits for the shutdown, as a service must.
struct CredentialStartCheck: Service, CustomStringConvertible {
    let platforms: [(platform: any ChatPlatform, reporter: CredentialReporter)]
    let logger: Logger

    /// What ServiceLifecycle logs of it (at debug): the platforms' names, never their
    /// configurations, which hold tokens.
    var description: String { "CredentialStartCheck(\(platforms.map { type(of: $0.platform).name }.joined(separator: ", ")))" }

    func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            for (platform, reporter) in platforms {
                group.addTask {
                    switch await platform.checkCredentials(logger: logger) {
                    case .accepted(let whose)?:
                        logger.info("\(type(of: platform).name): credentials taken: \(whose)")
                    case .refused(let why, let credential)?: reporter.refused(credential, reason: why)
                    case .unanswered(let why)?: logger.notice("\(type(of: platform).name): credentials not checked at start: \(why)")
                    case nil: break
                    }
                }
            }
        }
        try? await gracefulShutdown()
    }
}
