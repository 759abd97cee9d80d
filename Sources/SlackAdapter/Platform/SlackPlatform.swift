import Foundation
import Hummingbird
public import Logging
import RelayCore
import RelayHTTP
import RelayPipeline
public import RelayPlatform
import ServiceLifecycle

/// Slack, as the server composes it: reads the `slack.*` section, and when connected serves
/// `/slack/*` over HTTP (with a signing secret), runs Socket Mode (with an app token), delivers
/// the outbox through the Web API and `response_url`s, and answers the relay's questions about
/// admins and threads.
public struct SlackPlatform: ChatPlatform {
    public static let name = SlackEventMapping.platform
    public static let secretVariables = ["SLACK_SIGNING_SECRET", "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN"]
    public static let deployVariables = [
        DeployVariable("SLACK_SIGNING_SECRET", example: "0123456789abcdef0123456789abcdef"),
        DeployVariable("SLACK_BOT_TOKEN", example: "xoxb-deploy-test-token"),
        DeployVariable("SLACK_APP_TOKEN", example: "xapp-deploy-test-token"),
    ]
    public static let apiURLVariables = ["SLACK_API_URL", "SLACK_FILES_URL"]

    public let configuration: SlackConfiguration
    /// The settings given while Slack stays off, for its status.
    let given: [String]

    public init(configuration: SlackConfiguration) {
        self.configuration = configuration
        self.given = []
    }

    /// Secrets from the environment or files, never from the YAML itself.
    public init(configuration values: ConfigValues) throws {
        var slack = SlackConfiguration(
            signingSecret: try values.secret("slack.signingSecret", fileKey: "slack.signingSecretFile"),
            botToken: try values.secret("slack.botToken", fileKey: "slack.botTokenFile"),
            appToken: try values.secret("slack.appToken", fileKey: "slack.appTokenFile"),
            apiURL: try values.url("slack.apiURL") ?? SlackConfiguration.defaultAPIURL)
        slack.teamID = values.string("slack.teamID")
        slack.filesURL = try values.url("slack.filesURL") ?? SlackConfiguration.defaultFilesURL
        if let reaction = values.string("slack.reaction") {
            slack.tribunalReaction = reaction.trimmingCharacters(in: CharacterSet(charactersIn: ":"))
        }
        if let secret = slack.signingSecret, let problem = Self.signingSecretProblem(secret) {
            throw ConfigurationError(
                "SLACK_SIGNING_SECRET (slack.signingSecret) \(problem) Copy the Signing Secret from your app's Basic Information page at api.slack.com/apps."
            )
        }
        if let token = slack.botToken, !token.hasPrefix("xoxb-") {
            throw ConfigurationError("SLACK_BOT_TOKEN (slack.botToken) must be a bot token starting with `xoxb-`.")
        }
        if let token = slack.appToken, !token.hasPrefix("xapp-") {
            throw ConfigurationError("SLACK_APP_TOKEN (slack.appToken) must be an app-level token starting with `xapp-` (Socket Mode).")
        }
        self.configuration = slack
        self.given = values.given(["slack.botToken", "slack.botTokenFile", "slack.teamID", "slack.apiURL"])
    }

    /// What is wrong with a signing secret's shape, or nil. Slack's are 32 lower-case hex digits;
    /// letters beyond `f` are let through, since Slack's own signing example uses
    /// `8f742231b10e8888abcd99yyyzzz85a5`. A token pasted in its place is named as such, because
    /// every request would then be refused as forged with nothing to say why.
    static func signingSecretProblem(_ secret: String) -> String? {
        if secret.hasPrefix("xox") || secret.hasPrefix("xapp-") {
            return "holds a token (`\(secret.prefix(5))…`), not the signing secret."
        }
        if secret != secret.trimmingCharacters(in: .whitespacesAndNewlines) {
            return "has spaces or a line break around it."
        }
        guard secret.utf8.count == 32, secret.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) }) else {
            return
                "must be 32 lower-case letters and digits, like Slack's signing secrets; this one has \(secret.count) characters\(secret.count == 32 ? " and others than those" : "")."
        }
        return nil
    }

    public var status: PlatformStatus {
        let modes = [configuration.httpModeEnabled ? "HTTP" : nil, configuration.socketModeEnabled ? "Socket Mode" : nil].compactMap { $0 }
        switch (configuration.isEnabled, configuration.botToken != nil) {
        case (false, _):
            return .off(
                given: given,
                missing: given.contains("SLACK_BOT_TOKEN") || given.contains("SLACK_BOT_TOKEN_FILE")
                    ? "SLACK_SIGNING_SECRET (HTTP mode) or SLACK_APP_TOKEN (Socket Mode)"
                    : "SLACK_SIGNING_SECRET (HTTP mode) or SLACK_APP_TOKEN (Socket Mode), and SLACK_BOT_TOKEN")
        case (true, false):
            return .on(
                modes.joined(separator: " + "),
                but: "SLACK_BOT_TOKEN is not set: replies go only through response_url, so mentions, DMs and reactions cannot be answered")
        case (true, true):
            return .on(modes.joined(separator: " + "))
        }
    }

    /// A slash command's or button's `response_url`, only on Slack's hook host, or on the
    /// configured `SLACK_API_URL`'s origin when that is not Slack's (`SlackConfiguration.responseURLRule`).
    public var callbackRule: CallbackRule { configuration.responseURLRule }

    /// The app manifest to paste at api.slack.com, pointing at `request.publicURL` (`--url`),
    /// which must be given: Slack is told where to send requests, not asked. Needs no credential.
    public static let registrationHelp =
        "needs --url https://your.server (the relay's public base URL); prints the app manifest to paste at api.slack.com/apps. Serving then needs SLACK_SIGNING_SECRET and SLACK_BOT_TOKEN (or SLACK_APP_TOKEN for Socket Mode)."

    /// The bot token, by `auth.test`. The signing secret and the app token are never shown to
    /// Slack on their own: the first is checked on each request, the second when Socket Mode
    /// opens its connection.
    public func checkCredentials(logger: Logger) async -> CredentialCheck? {
        guard configuration.botToken != nil else { return nil }
        return await CredentialCheck.asking { transport in
            do throws(SlackAPIError) {
                let (user, team) = try await SlackWebClient(transport: transport, configuration: configuration, logger: logger).authTest()
                return .accepted("SLACK_BOT_TOKEN is \(user)'s, in \(team)")
            } catch {
                return error.credentialCheck("SLACK_BOT_TOKEN", fix: "Copy the Bot User OAuth Token again from the app's OAuth & Permissions page.")
            }
        }
    }

    public func register(_ request: RegistrationRequest, logger: Logger) async throws -> [String] {
        guard let url = request.publicURL else {
            throw ConfigurationError("--url is required for \(Self.name): the relay's public base URL, e.g. https://relay.example.com.")
        }
        // Slack sends slash commands and events only to https URLs.
        guard url.lowercased().hasPrefix("https://"), URL(string: url)?.host != nil else {
            throw ConfigurationError("--url must be an https:// URL (Slack sends requests only over HTTPS), got `\(url)`.")
        }
        return [SlackManifest.yaml(publicURL: url)]
    }

    public func connect(_ context: PlatformContext) throws -> any PlatformConnection {
        // Any Slack secret keys the box that seals response URLs in the outbox.
        guard let secret = configuration.signingSecret ?? configuration.appToken ?? configuration.botToken else {
            throw ConfigurationError("Slack is off: set SLACK_SIGNING_SECRET or SLACK_APP_TOKEN.")
        }
        let api = SlackWebClient(transport: context.transport, configuration: configuration, logger: context.logger)
        // Admins and threads are read with the bot token; without one the relay asks nothing.
        let reader =
            configuration.botToken == nil
            ? nil : SlackConversationReader(api: api, logger: context.logger, filesURL: configuration.filesURL)
        return SlackConnection(
            configuration: configuration, api: api, box: SlackSecretBox(secret: secret), reader: reader, clock: context.clock,
            lease: context.connectionLease("slack.socket-mode"), credentials: context.credentials, logger: context.logger)
    }
}

/// A connected Slack: its clients, and what it adds to the server.
struct SlackConnection: PlatformConnection {
    let configuration: SlackConfiguration
    let api: SlackWebClient
    let box: SlackSecretBox
    let reader: (any ConversationReader)?
    let clock: any RelayClock
    /// Who holds Socket Mode among the replicas.
    let lease: ConnectionLease
    let credentials: CredentialReporter
    let logger: Logger

    var sender: any ReplySender {
        Deliverer(SlackDelivery(api: api, canPost: configuration.botToken != nil, box: box, clock: clock), logger: logger)
    }

    func inbound(_ inbox: any RelayInbox) -> SlackInbound {
        SlackInbound(inbox: inbox, api: api, box: box, configuration: configuration, clock: clock, logger: logger)
    }

    func addRoutes(to router: Router<BasicRequestContext>, inbox: any RelayInbox) {
        guard let signingSecret = configuration.signingSecret else { return }
        SlackHTTPRoutes(verifier: SlackRequestVerifier(signingSecret: signingSecret), inbound: inbound(inbox)).add(to: router)
    }

    /// Socket Mode, while this replica holds its lease. Slack gives each event to one of an
    /// app's connections, so several replicas would not answer twice; the lease keeps the
    /// connections on one replica all the same, as the other platforms' are, and keeps a
    /// deployment within Slack's limit of ten connections per app however many replicas run.
    func services(inbox: any RelayInbox) -> [any Service] {
        guard let appToken = configuration.appToken else { return [] }
        let handler = SlackSocketModeHandler(inbound: inbound(inbox), logger: logger)
        let (api, clock, credentials, logger) = (api, clock, credentials, logger)
        return [
            lease.service { _ in
                // A client stays stopped once stopped: each grant gets a new one.
                let client = SocketModeClient(appToken: appToken, web: api, clock: clock, credentials: credentials, logger: logger) { envelope in
                    await handler.handle(envelope)
                }
                try await SocketModeService(client: client).run()
            }
        ]
    }
}

/// Slack Socket Mode as a service: connects at start, closes its sockets at shutdown.
struct SocketModeService: Service {
    let client: SocketModeClient

    func run() async throws {
        try await withGracefulShutdownHandler {
            try await client.run()
        } onGracefulShutdown: {
            client.stop()
        }
    }
}
