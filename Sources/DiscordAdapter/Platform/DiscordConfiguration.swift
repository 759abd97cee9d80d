/// What the Discord adapter needs, read from configuration and the environment at start.
///
/// The interactions endpoint (`POST /discord/interactions`: slash commands, buttons, the message
/// context menu) needs the application's public key; the gateway (mentions, DMs, the tribunal
/// reaction) and every post outside an interaction's 15 minutes need the bot token. Secrets
/// live only in memory, as `DiscordToken`s, which never print.
public struct DiscordConfiguration: Sendable, Hashable {
    /// Discord's REST API, used unless `DISCORD_API_URL` names another (a fake in tests).
    public static let defaultAPIURL = "https://discord.com/api/v10"
    /// The reaction that runs a tribunal on the message it is put on.
    public static let defaultReaction = "🔍"

    /// `DISCORD_PUBLIC_KEY`: verifies interaction requests (64 hex digits; not a secret).
    public var publicKey: String?
    /// `DISCORD_BOT_TOKEN`: the gateway, channel posts and reads, command registration.
    public var botToken: DiscordToken?
    /// `DISCORD_APPLICATION_ID`: command registration. Interactions carry their own.
    public var applicationID: String?
    /// `DISCORD_API_URL`: the REST base, without a trailing slash.
    public var apiURL: String
    /// The reaction (a Unicode emoji, or a custom emoji's name) that runs a tribunal.
    public var tribunalReaction: String
    /// `DISCORD_GATEWAY`: whether this process may hold the gateway connection (when a bot token
    /// is set). Several connections would answer every mention once each, so of the replicas
    /// that may, only the one holding the `discord.gateway` lease does; false: this one never does.
    public var gateway: Bool
    /// The gateway client's timings (tests shorten them).
    public var gatewayTimings = DiscordGatewayClient.Configuration()
    /// Where Discord serves attachments (`discord.cdnURL`): the only host voice messages are
    /// downloaded from, whatever URL a message names.
    public var cdnURL: String = DiscordConfiguration.defaultCDNURL
    public static let defaultCDNURL = "https://cdn.discordapp.com"

    public init(
        publicKey: String? = nil, botToken: DiscordToken? = nil, applicationID: String? = nil, apiURL: String = DiscordConfiguration.defaultAPIURL,
        tribunalReaction: String = DiscordConfiguration.defaultReaction, gateway: Bool = true
    ) {
        self.publicKey = publicKey
        self.botToken = botToken
        self.applicationID = applicationID
        var base = apiURL
        while base.hasSuffix("/") { base.removeLast() }
        self.apiURL = base
        self.tribunalReaction = tribunalReaction
        self.gateway = gateway
    }

    /// Interactions over HTTP (`/discord/interactions`).
    public var interactionsEnabled: Bool { publicKey != nil }
    /// Mentions, DMs and reactions over the gateway.
    public var gatewayEnabled: Bool { gateway && botToken != nil }
    public var isEnabled: Bool { interactionsEnabled || gatewayEnabled }
}
