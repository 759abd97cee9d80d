import AsyncHTTPClient
import Foundation
import Hummingbird
public import Logging
import RelayCore
public import RelayHTTP
import RelayPipeline
public import RelayPlatform
import ServiceLifecycle

/// Discord, as the server composes it: reads the `discord.*` section, and when connected serves
/// `/discord/interactions` (with the public key), holds the gateway (with the bot token, unless
/// `discord.gateway` is false), and delivers the outbox through interaction webhooks and the bot
/// token.
public struct DiscordPlatform: ChatPlatform {
    public static let name = "discord"
    public static let secretVariables = ["DISCORD_BOT_TOKEN"]
    public static let deployVariables = [
        // RFC 8032's first test key: a real Ed25519 point, as the public key is checked to be.
        DeployVariable("DISCORD_PUBLIC_KEY", example: "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"),
        DeployVariable("DISCORD_BOT_TOKEN"), DeployVariable("DISCORD_APPLICATION_ID", example: "123456789012345678"),
    ]
    public static let apiURLVariables = ["DISCORD_API_URL", "DISCORD_CDN_URL"]

    public let configuration: DiscordConfiguration
    /// The settings given while Discord stays off, for its status.
    let given: [String]

    public init(configuration: DiscordConfiguration) {
        self.configuration = configuration
        self.given = []
    }

    /// The bot token from the environment or a file, never from the YAML itself; the public key
    /// (not a secret) checked to be a usable Ed25519 key.
    public init(configuration values: ConfigValues) throws {
        var discord = DiscordConfiguration(
            publicKey: values.string("discord.publicKey"),
            botToken: try values.secret("discord.botToken", fileKey: "discord.botTokenFile").map(DiscordToken.init),
            applicationID: values.string("discord.applicationID"), apiURL: try values.url("discord.apiURL") ?? DiscordConfiguration.defaultAPIURL)
        discord.cdnURL = try values.url("discord.cdnURL") ?? DiscordConfiguration.defaultCDNURL
        if let key = discord.publicKey {
            do throws(DiscordPublicKeyError) {
                _ = try DiscordRequestVerifier(publicKeyHex: key)
            } catch {
                throw ConfigurationError("DISCORD_PUBLIC_KEY (discord.publicKey): \(error.description).")
            }
        }
        if let id = discord.applicationID, !DiscordSnowflake.isValid(id) {
            throw ConfigurationError("DISCORD_APPLICATION_ID (discord.applicationID) must be the application's numeric id, got `\(id)`.")
        }
        if let token = discord.botToken, token.secret.isEmpty || token.secret.contains(where: \.isWhitespace) {
            throw ConfigurationError("DISCORD_BOT_TOKEN (discord.botToken) must be one word: the Bot token from the Developer Portal.")
        }
        if let reaction = values.string("discord.reaction") { discord.tribunalReaction = reaction.trimmingCharacters(in: CharacterSet(charactersIn: ": ")) }
        if let gateway = try values.bool("discord.gateway") { discord.gateway = gateway }
        self.configuration = discord
        self.given = values.given(["discord.applicationID", "discord.apiURL", "discord.gateway"])
    }

    /// Nothing: Discord hands over an interaction token, not a URL. Answers go to
    /// `DISCORD_API_URL`'s `/webhooks/{application}/{token}`, the token checked to be a plain
    /// path segment (`DiscordRESTClient.makeRequest`).
    public var callbackRule: CallbackRule { .nothing }

    public var status: PlatformStatus {
        let modes = [configuration.interactionsEnabled ? "interactions" : nil, configuration.gatewayEnabled ? "gateway" : nil].compactMap { $0 }
        guard configuration.isEnabled else {
            if configuration.botToken != nil {
                var status = PlatformStatus.off(
                    "the gateway is switched off (DISCORD_GATEWAY=false) and DISCORD_PUBLIC_KEY is not set: set it to take slash commands")
                status.isHalfConfigured = true
                return status
            }
            return .off(
                given: given, missing: "DISCORD_PUBLIC_KEY (slash commands) and DISCORD_BOT_TOKEN (mentions, DMs, reactions, posts after 15 minutes)")
        }
        if configuration.botToken == nil {
            return .on(
                modes.joined(separator: " + "),
                but:
                    "DISCORD_BOT_TOKEN is not set: answers go only through interactions (15 minutes), so mentions, DMs and reactions are not seen"
            )
        }
        return .on(modes.joined(separator: " + "))
    }

    public func connect(_ context: PlatformContext) throws -> any PlatformConnection {
        guard configuration.isEnabled else {
            throw ConfigurationError("Discord is off: set DISCORD_PUBLIC_KEY or DISCORD_BOT_TOKEN.")
        }
        let verifier: DiscordRequestVerifier?
        do throws(DiscordPublicKeyError) {
            verifier = try configuration.publicKey.map { key throws(DiscordPublicKeyError) in
                try DiscordRequestVerifier(publicKeyHex: key, now: { [clock = context.clock] in clock.now })
            }
        } catch {
            throw ConfigurationError("DISCORD_PUBLIC_KEY (discord.publicKey): \(error.description).")
        }
        let api = DiscordRESTClient(
            transport: context.transport, apiURL: configuration.apiURL, botToken: configuration.botToken, clock: context.clock, logger: context.logger)
        return DiscordConnection(
            configuration: configuration, api: api, verifier: verifier,
            box: OutboxSecretBox(secret: configuration.botToken?.secret ?? context.relaySecret, purpose: "discord"), clock: context.clock,
            lease: context.connectionLease("discord.gateway"), credentials: context.credentials, logger: context.logger)
    }

    /// Replaces the application's commands with `DiscordCommands.payload()` (`PUT
    /// /applications/{app}/commands`, or the guild's, which shows at once); how many Discord
    /// now has. Needs the bot token and the application id.
    public func registerCommands(guildID: String?, transport: HTTPTransport, logger: Logger) async throws -> Int {
        var missing: [String] = []
        if configuration.botToken == nil { missing.append("DISCORD_BOT_TOKEN (the Bot token: Developer Portal › Bot › Reset Token)") }
        if configuration.applicationID == nil { missing.append("DISCORD_APPLICATION_ID (Developer Portal › General Information › Application ID)") }
        guard missing.isEmpty, let application = configuration.applicationID else {
            throw ConfigurationError("register discord needs " + missing.joined(separator: " and ") + ".")
        }
        if let guildID, !DiscordSnowflake.isValid(guildID) {
            throw ConfigurationError("--guild must be a server's numeric id (right-click the server › Copy Server ID), got `\(guildID)`.")
        }
        let api = DiscordRESTClient(transport: transport, apiURL: configuration.apiURL, botToken: configuration.botToken, logger: logger)
        do throws(DiscordAPIError) {
            return try await api.overwriteCommands(applicationID: application, guildID: guildID, commands: DiscordCommands.payload())
        } catch {
            throw error.registrationFailure(refused: "Discord refused the commands")
        }
    }

    /// Replaces the application's commands with the relay's (`registerCommands`): in the server
    /// `request.scope` names (`--guild`), where they show at once, else globally. Needs the bot
    /// token and the application id.
    public static let registrationHelp =
        "needs DISCORD_APPLICATION_ID and DISCORD_BOT_TOKEN; sends the slash commands to Discord, globally or with --guild ID in one server (shown at once)."

    /// The bot token, by `GET /users/@me`. The public key is never shown to Discord: it checks
    /// each interaction's signature.
    public func checkCredentials(logger: Logger) async -> CredentialCheck? {
        guard configuration.botToken != nil else { return nil }
        return await CredentialCheck.asking { transport in
            do throws(DiscordAPIError) {
                let name = try await DiscordRESTClient(transport: transport, apiURL: configuration.apiURL, botToken: configuration.botToken, logger: logger)
                    .currentUser()
                return .accepted("DISCORD_BOT_TOKEN is \(name)'s")
            } catch {
                return error.credentialCheck("DISCORD_BOT_TOKEN", fix: "Reset the token on the application's Bot page and copy it again.")
            }
        }
    }

    public func register(_ request: RegistrationRequest, logger: Logger) async throws -> [String] {
        let count = try await registerCommands(guildID: request.scope, logger: logger)
        return [
            "Registered \(count) Discord commands "
                + (request.scope.map { "in server \($0) (they show at once)." } ?? "globally (they may take up to an hour to show).")
        ]
    }

    /// `registerCommands` on a transport of its own, shut down after.
    public func registerCommands(guildID: String?, logger: Logger) async throws -> Int {
        try await HTTPTransport.withOwnClient { transport in
            try await registerCommands(guildID: guildID, transport: transport, logger: logger)
        }
    }
}

/// A connected Discord: its clients, and what it adds to the server.
struct DiscordConnection: PlatformConnection {
    let configuration: DiscordConfiguration
    let api: DiscordRESTClient
    let verifier: DiscordRequestVerifier?
    let box: DiscordSecretBox
    let clock: any RelayClock
    /// Who holds the gateway among the replicas.
    let lease: ConnectionLease
    let credentials: CredentialReporter
    let logger: Logger

    var sender: any ReplySender {
        Deliverer(DiscordDelivery(api: api, canPost: configuration.botToken != nil, box: box, clock: clock), logger: logger)
    }

    /// Asks whether a member manages the server, and fetches voice messages' audio from the CDN
    /// (`DiscordConversationReader`).
    var reader: (any ConversationReader)? {
        DiscordConversationReader(api: api, transport: api.transport, cdnURL: configuration.cdnURL, logger: logger)
    }

    func inbound(_ inbox: any RelayInbox) -> DiscordInbound {
        DiscordInbound(inbox: inbox, api: api, box: box, configuration: configuration, clock: clock, logger: logger)
    }

    func addRoutes(to router: Router<BasicRequestContext>, inbox: any RelayInbox) {
        guard let verifier else { return }
        DiscordInteractionRoutes(verifier: verifier, inbound: inbound(inbox), logger: logger).add(to: router)
    }

    /// The gateway, while this replica holds its lease: it resumes the session the last holder
    /// saved, keeps saving where it is, and at shutdown leaves the session to the next holder.
    /// Without a store to keep it in, shutting down ends the session (the bot goes offline).
    func services(inbox: any RelayInbox) -> [any Service] {
        guard configuration.gatewayEnabled, let token = configuration.botToken else { return [] }
        let inbound = inbound(inbox)
        let (api, timings, clock, credentials, logger) = (api, configuration.gatewayTimings, clock, credentials, logger)
        return [
            lease.service { grant in
                let client = DiscordGatewayClient(
                    token: token, api: api, configuration: timings, clock: clock, resuming: grant.state.flatMap(GatewayResumeState.init(saved:)),
                    saveResume: { state in _ = await grant.saveState(state?.saved ?? "") }, credentials: credentials, logger: logger
                ) { dispatch, botUserID in
                    await inbound.dispatch(dispatch, botUserID: botUserID)
                }
                try await withGracefulShutdownHandler {
                    try await client.run()
                } onGracefulShutdown: {
                    client.stop(keepingSession: grant.isShared)
                }
            }
        ]
    }
}
