import Foundation
import Hummingbird
public import Logging
import RelayCore
import RelayHTTP
import RelayPipeline
public import RelayPlatform

/// Microsoft Teams, as the server composes it: reads the `teams.*` section, and when connected
/// serves `/teams/messages` (the Bot Framework's messaging endpoint, each request's token
/// verified) and delivers the outbox through the Bot Connector of each activity's `serviceUrl`.
public struct TeamsPlatform: ChatPlatform {
    public static let name = "teams"
    public static let secretVariables = ["TEAMS_APP_PASSWORD"]
    public static let deployVariables = [
        DeployVariable("TEAMS_APP_ID", example: "00000000-0000-4000-8000-00000000d3b1"),
        DeployVariable("TEAMS_APP_PASSWORD"),
    ]
    /// A deploy-file test points them at a closed port, so nothing leaves the machine.
    public static let apiURLVariables = ["TEAMS_OPENID_METADATA_URL", "TEAMS_TOKEN_URL"]
    public static let registrationHelp =
        "writes the app package an admin uploads to Teams (rhea-teams-app.zip, or --out FILE): the manifest with TEAMS_APP_ID, the commands, the message action and icons."

    public let configuration: TeamsConfiguration
    /// The settings given while Teams stays off, for its status.
    let given: [String]

    public init(configuration: TeamsConfiguration) {
        self.configuration = configuration
        self.given = []
    }

    /// The password from the environment or a file, never from the YAML itself.
    public init(configuration values: ConfigValues) throws {
        let appID = values.string("teams.appID")
        if let appID, !TeamsConfiguration.looksLikeGUID(appID) {
            throw ConfigurationError("TEAMS_APP_ID (teams.appID) must be the bot's Microsoft app id, a GUID such as 00000000-0000-0000-0000-000000000000.")
        }
        let tenantID = values.string("teams.tenantID")
        if let tenantID, !TeamsConfiguration.looksLikeGUID(tenantID) {
            throw ConfigurationError("TEAMS_TENANT_ID (teams.tenantID) must be the tenant's id, a GUID; leave it unset for a multi-tenant bot.")
        }
        let password = try values.secret("teams.appPassword", fileKey: "teams.appPasswordFile")
        if let password, password.utf8.count > 1024 || password.contains(where: \.isNewline) {
            throw ConfigurationError("TEAMS_APP_PASSWORD (teams.appPassword) must be the app's client secret, on one line.")
        }
        let metadata = try values.url("teams.openidMetadataURL")
        let tokenURL = try values.url("teams.tokenURL")
        self.configuration = TeamsConfiguration(
            appID: appID, appPassword: password.map(TeamsSecret.init), tenantID: tenantID, openIDMetadataURL: metadata, tokenURL: tokenURL)
        self.given =
            values.given(["teams.appID", "teams.tenantID"])
            + (password != nil ? ["TEAMS_APP_PASSWORD"] : [])
    }

    public var status: PlatformStatus {
        guard configuration.isEnabled else {
            let missing = [configuration.appID == nil ? "TEAMS_APP_ID" : nil, configuration.appPassword == nil ? "TEAMS_APP_PASSWORD" : nil]
            return .off(given: given, missing: missing.compactMap { $0 }.joined(separator: " and "))
        }
        return .on("activities at \(TeamsRoutes.path)\(configuration.tenantID == nil ? "" : ", single-tenant")")
    }

    /// Teams names a `serviceUrl` in each activity, and the relay answers there only when the
    /// Bot Connector's signed token names the same one (`serviceurl`), over https: a signed
    /// claim decides, not a list of places, so no unsigned URL is ever called.
    public var callbackRule: CallbackRule { .nothing }

    public func connect(_ context: PlatformContext) throws -> any PlatformConnection {
        guard configuration.isEnabled, let appID = configuration.appID else {
            throw ConfigurationError("Teams is off: set TEAMS_APP_ID and TEAMS_APP_PASSWORD.")
        }
        let tokens = TeamsBotTokens.renewing(configuration: configuration, transport: context.transport, clock: context.clock)
        let connector = TeamsConnector(
            transport: context.transport, tokens: tokens, credentials: context.credentials, clock: context.clock, logger: context.logger)
        let keys = TeamsSigningKeys.published(metadataURL: configuration.openIDMetadataURL, transport: context.transport, clock: context.clock)
        return TeamsConnection(
            validator: TeamsTokenValidator(appID: appID, keys: keys, clock: context.clock), connector: connector, logger: context.logger)
    }

    /// The app's id and password, by asking the token endpoint for a token (the only way
    /// Microsoft answers whether they hold).
    public func checkCredentials(logger: Logger) async -> CredentialCheck? {
        guard configuration.isEnabled else { return nil }
        return await CredentialCheck.asking { transport in
            switch await TeamsBotTokens.grant(configuration: configuration, transport: transport, now: Date()) {
            case .success: return .accepted("TEAMS_APP_ID and TEAMS_APP_PASSWORD get a Bot Connector token")
            case .failure(let error):
                return error.credentialCheck(
                    "TEAMS_APP_PASSWORD", fix: "Make a new client secret for the app (Azure portal → the bot's app registration → Certificates & secrets).")
            }
        }
    }

    public func register(_ request: RegistrationRequest, logger: Logger) async throws -> [String] {
        try TeamsAppPackage.register(configuration: configuration, request: request)
    }
}

/// A connected Teams: the messaging endpoint and the outbox's deliverer.
struct TeamsConnection: PlatformConnection {
    let validator: TeamsTokenValidator
    let connector: TeamsConnector
    let logger: Logger

    var sender: any ReplySender {
        Deliverer(TeamsDelivery(connector: connector, logger: logger), logger: logger)
    }

    func addRoutes(to router: Router<BasicRequestContext>, inbox: any RelayInbox) {
        TeamsRoutes(validator: validator, inbound: TeamsInbound(inbox: inbox, logger: logger), logger: logger).add(to: router)
    }
}
