import Foundation
import Hummingbird
public import Logging
import RelayCore
import RelayHTTP
import RelayPipeline
public import RelayPlatform
import ServiceLifecycle

/// Matrix, as the server composes it: reads the `matrix.*` section, and when connected syncs with
/// the homeserver (`/sync` long polling, one replica at a time under the `matrix.sync` lease) and
/// delivers the outbox as `m.notice` messages, each sent under a transaction id made from its
/// outbox entry, so a send repeated after a crash is the same message.
public struct MatrixPlatform: ChatPlatform {
    public static let name = "matrix"
    public static let secretVariables = ["MATRIX_ACCESS_TOKEN"]
    /// The homeserver's URL goes with the token: a token is only good on its own homeserver.
    public static let deployVariables = [DeployVariable("MATRIX_ACCESS_TOKEN"), DeployVariable("MATRIX_HOMESERVER_URL", example: "https://matrix.example.org")]
    public static let apiURLVariables = ["MATRIX_HOMESERVER_URL"]

    public let configuration: MatrixConfiguration
    /// The settings given while Matrix stays off, for its status.
    let given: [String]

    public init(configuration: MatrixConfiguration) {
        self.configuration = configuration
        self.given = []
    }

    /// The token from the environment or a file, never from the YAML itself.
    public init(configuration values: ConfigValues) throws {
        var matrix = MatrixConfiguration(
            homeserverURL: try values.url("matrix.homeserverURL"),
            accessToken: try values.secret("matrix.accessToken", fileKey: "matrix.accessTokenFile").map(MatrixToken.init))
        if matrix.accessToken != nil, matrix.homeserverURL == nil {
            throw ConfigurationError("MATRIX_ACCESS_TOKEN is set but MATRIX_HOMESERVER_URL (matrix.homeserverURL) is not: say which homeserver the bot is on.")
        }
        if let token = matrix.accessToken, !token.secret.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F }) {
            throw ConfigurationError("MATRIX_ACCESS_TOKEN (matrix.accessToken) must be one word of printable ASCII, as the homeserver issued it.")
        }
        if let servers = values.strings("matrix.allowedServers") {
            matrix.allowedServers = servers.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        }
        if let reaction = values.string("matrix.reaction") { matrix.tribunalReaction = reaction }
        if let timeout = try values.seconds("matrix.syncTimeout") {
            guard timeout >= .seconds(1), timeout <= .seconds(60) else {
                throw ConfigurationError("MATRIX_SYNC_TIMEOUT (matrix.syncTimeout) must be 1–60 seconds.")
            }
            matrix.syncTimeout = timeout
        }
        self.configuration = matrix
        self.given = values.given(["matrix.homeserverURL", "matrix.allowedServers", "matrix.syncTimeout"])
    }

    /// Nothing: Matrix hands over no URL to answer at. Answers go to `MATRIX_HOMESERVER_URL`,
    /// and media (`mxc://server/id`, checked strictly) is fetched through it.
    public var callbackRule: CallbackRule { .nothing }

    public var status: PlatformStatus {
        guard configuration.isEnabled else {
            return .off(
                given: given,
                missing: given.contains("MATRIX_HOMESERVER_URL")
                    ? "MATRIX_ACCESS_TOKEN (the bot account's)" : "MATRIX_HOMESERVER_URL and MATRIX_ACCESS_TOKEN (the bot account's)")
        }
        return .on("/sync")
    }

    public func connect(_ context: PlatformContext) throws -> any PlatformConnection {
        guard let url = configuration.homeserverURL, let token = configuration.accessToken else {
            throw ConfigurationError("Matrix is off: set MATRIX_HOMESERVER_URL and MATRIX_ACCESS_TOKEN.")
        }
        let api = MatrixClient(transport: context.transport, homeserverURL: url, token: token, logger: context.logger)
        let identity = MatrixIdentity(api: api, logger: context.logger)
        return MatrixConnection(
            configuration: configuration, api: api, identity: identity, rooms: MatrixDirectRooms(api: api, identity: identity), clock: context.clock,
            lease: context.connectionLease("matrix.sync"), credentials: context.credentials, logger: context.logger)
    }

    /// Matrix has no command registry: checks the token (`whoami`) and says how to invite the bot.
    public static let registrationHelp =
        "needs MATRIX_HOMESERVER_URL and MATRIX_ACCESS_TOKEN (the bot account's); checks the token and says whom to invite (Matrix has no command list)."

    /// The access token, by `whoami`.
    public func checkCredentials(logger: Logger) async -> CredentialCheck? {
        guard let url = configuration.homeserverURL, let token = configuration.accessToken else { return nil }
        return await CredentialCheck.asking { transport in
            do throws(MatrixAPIError) {
                let user = try await MatrixClient(transport: transport, homeserverURL: url, token: token, logger: logger).whoami()
                return .accepted("MATRIX_ACCESS_TOKEN is \(user)'s")
            } catch {
                return error.credentialCheck("MATRIX_ACCESS_TOKEN", fix: "Log the bot account in again and copy its access token.")
            }
        }
    }

    public func register(_ request: RegistrationRequest, logger: Logger) async throws -> [String] {
        guard let url = configuration.homeserverURL, let token = configuration.accessToken else {
            throw ConfigurationError("register matrix needs MATRIX_HOMESERVER_URL and MATRIX_ACCESS_TOKEN (the bot account's).")
        }
        let user: String
        do {
            user = try await HTTPTransport.withOwnClient { transport in
                try await MatrixClient(transport: transport, homeserverURL: url, token: token, logger: logger).whoami()
            }
        } catch let error as MatrixAPIError {
            throw error.registrationFailure(refused: "the homeserver refused the token")
        }
        return [
            "The access token is \(user)'s; Matrix has no command list to register.",
            "Invite \(user) to a room; it joins by itself. Commands start with \(BangCommands.prefix) (\(BangCommands.prefix)help).",
        ]
    }
}

/// A connected Matrix: its client, and what it adds to the server.
struct MatrixConnection: PlatformConnection {
    let configuration: MatrixConfiguration
    let api: any MatrixAPI
    let identity: MatrixIdentity
    let rooms: MatrixDirectRooms
    let clock: any RelayClock
    /// Who syncs among the replicas.
    let lease: ConnectionLease
    let credentials: CredentialReporter
    let logger: Logger

    var sender: any ReplySender { Deliverer(MatrixDelivery(api: api, identity: identity, rooms: rooms), logger: logger) }

    var reader: (any ConversationReader)? { MatrixConversationReader(api: api, logger: logger) }

    func services(inbox: any RelayInbox) -> [any Service] {
        let inbound = MatrixInbound(
            inbox: inbox, api: api, identity: identity, encryption: MatrixEncryptedRooms(api: api, logger: logger), configuration: configuration,
            logger: logger)
        let syncer = MatrixSyncer(
            api: api, inbound: inbound, identity: identity, timeout: configuration.syncTimeout, clock: clock, credentials: credentials, logger: logger)
        return [lease.service { grant in await syncer.run(grant) }]
    }
}
