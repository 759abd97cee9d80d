import Foundation
import Hummingbird
public import Logging
import RelayCore
import RelayHTTP
import RelayPipeline
public import RelayPlatform
import ServiceLifecycle
import Synchronization

/// Mattermost, as the server composes it: reads the `mattermost.*` section, and when connected
/// serves `/mattermost/commands` (with command tokens), holds the websocket under the
/// `mattermost.websocket` lease (with the bot), delivers the outbox through REST v4 and
/// `response_url`s, and reads threads for the relay.
public struct MattermostPlatform: ChatPlatform {
    public static let name = "mattermost"
    /// Where Mattermost POSTs slash commands, under the relay's public URL.
    public static let commandsPath = "/mattermost/commands"
    public static let secretVariables = ["MATTERMOST_COMMAND_TOKENS", "MATTERMOST_BOT_TOKEN"]
    public static let deployVariables = [
        DeployVariable("MATTERMOST_COMMAND_TOKENS", example: "deploytestcommandtoken0001,deploytestcommandtoken0002"),
        DeployVariable("MATTERMOST_BOT_TOKEN", example: "deploytestbottoken00000001"),
    ]
    /// `MATTERMOST_URL` has no default (every server is someone's own), but a test of the deploy
    /// files points it at a closed port like the other platforms' API URLs.
    public static let apiURLVariables = ["MATTERMOST_URL"]

    public let configuration: MattermostConfiguration
    /// The settings given while Mattermost stays off, for its status.
    let given: [String]

    public init(configuration: MattermostConfiguration) {
        self.configuration = configuration
        self.given = []
    }

    /// Tokens from the environment or files, never from the YAML itself.
    public init(configuration values: ConfigValues) throws {
        var mattermost = MattermostConfiguration(serverURL: try values.url("mattermost.url"))
        if let list = try values.secret("mattermost.commandTokens", fileKey: "mattermost.commandTokensFile") {
            let tokens = list.split(whereSeparator: { $0 == "," || $0.isWhitespace }).map(String.init)
            guard tokens.allSatisfy(MattermostToken.looksValid) else {
                throw ConfigurationError(
                    "MATTERMOST_COMMAND_TOKENS (mattermost.commandTokens) must be the slash commands' tokens, separated by commas (8–128 printable characters each, no quotes)."
                )
            }
            mattermost.commandTokens = tokens.map(MattermostToken.init)
        }
        if let token = try values.secret("mattermost.botToken", fileKey: "mattermost.botTokenFile") {
            guard MattermostToken.looksValid(token) else {
                throw ConfigurationError(
                    "MATTERMOST_BOT_TOKEN (mattermost.botToken) must be the bot account's access token (8–128 printable characters, no spaces).")
            }
            mattermost.botToken = MattermostToken(token)
        }
        if mattermost.botToken != nil, mattermost.serverURL == nil {
            throw ConfigurationError(
                "MATTERMOST_BOT_TOKEN is set, so MATTERMOST_URL (mattermost.url) must be too: the server's address, e.g. https://chat.example.com.")
        }
        // A command's answer goes only to its server's `/hooks/commands/`: without the server's
        // address no command could be answered.
        if !mattermost.commandTokens.isEmpty, mattermost.serverURL == nil {
            throw ConfigurationError(
                "MATTERMOST_COMMAND_TOKENS is set, so MATTERMOST_URL (mattermost.url) must be too: the server's Site URL, e.g. https://chat.example.com. Commands are answered only at their response_url on that server."
            )
        }
        if let reaction = values.string("mattermost.reaction") {
            mattermost.tribunalReaction = reaction.trimmingCharacters(in: CharacterSet(charactersIn: ":"))
        }
        if let websocket = try values.bool("mattermost.websocket") { mattermost.websocket = websocket }
        self.configuration = mattermost
        self.given = values.given(["mattermost.url", "mattermost.websocket"])
    }

    public var status: PlatformStatus {
        let parts = [
            configuration.commandsEnabled ? "slash commands at \(Self.commandsPath)" : nil,
            configuration.botEnabled ? (configuration.websocket ? "bot + websocket" : "bot, no websocket here") : nil,
        ].compactMap { $0 }
        switch (configuration.commandsEnabled, configuration.botEnabled) {
        case (false, false):
            return .off(
                given: given,
                missing: given.contains("MATTERMOST_URL")
                    ? "MATTERMOST_COMMAND_TOKENS (slash commands) and/or MATTERMOST_BOT_TOKEN (the bot)"
                    : "MATTERMOST_URL with MATTERMOST_COMMAND_TOKENS (slash commands) and/or MATTERMOST_BOT_TOKEN (the bot)")
        case (true, false):
            return .on(
                parts.joined(separator: " + "),
                but: "MATTERMOST_BOT_TOKEN is not set: answers go only through response_url, and mentions and reactions are not heard")
        default:
            return .on(parts.joined(separator: " + "))
        }
    }

    /// A slash command's `response_url`, only on `MATTERMOST_URL`'s origin under
    /// `/hooks/commands/` (`MattermostConfiguration.responseURLRule`).
    public var callbackRule: CallbackRule { configuration.responseURLRule }

    public func connect(_ context: PlatformContext) throws -> any PlatformConnection {
        guard configuration.isEnabled else {
            throw ConfigurationError("Mattermost is off: set MATTERMOST_COMMAND_TOKENS, or MATTERMOST_URL and MATTERMOST_BOT_TOKEN.")
        }
        let api = MattermostClient(transport: context.transport, serverURL: configuration.serverURL, botToken: configuration.botToken, logger: context.logger)
        // Response URLs are sealed under a key from the tokens (or the relay's secret), which every restart has again.
        let secret = configuration.botToken?.secret ?? configuration.commandTokens.first?.secret ?? context.relaySecret
        return MattermostConnection(
            configuration: configuration, api: api, box: OutboxSecretBox(secret: secret, purpose: Self.name), clock: context.clock,
            lease: context.connectionLease("mattermost.websocket"), credentials: context.credentials, logger: context.logger)
    }

    /// `register mattermost --url URL --team T`: with the bot (`MATTERMOST_URL`,
    /// `MATTERMOST_BOT_TOKEN`, a token allowed to manage slash commands) creates the commands in
    /// team T (an id, or the name in the team's URL) and prints their tokens; without, prints what
    /// to create under Integrations → Slash Commands.
    public static let registrationHelp =
        "needs --url https://your.server; with MATTERMOST_URL, MATTERMOST_BOT_TOKEN and --team creates the slash command, else prints how to make it by hand."

    /// The bot token, by `GET /users/me`. A slash command's token is never shown to Mattermost:
    /// it is checked on each command.
    public func checkCredentials(logger: Logger) async -> CredentialCheck? {
        guard configuration.botToken != nil else { return nil }
        return await CredentialCheck.asking { transport in
            do throws(MattermostAPIError) {
                let me = try await MattermostClient(transport: transport, serverURL: configuration.serverURL, botToken: configuration.botToken, logger: logger)
                    .me()
                return .accepted("MATTERMOST_BOT_TOKEN is @\(me.username)'s")
            } catch {
                return error.credentialCheck("MATTERMOST_BOT_TOKEN", fix: "Make a new token for the bot account (Integrations → Bot Accounts).")
            }
        }
    }

    public func register(_ request: RegistrationRequest, logger: Logger) async throws -> [String] {
        guard let url = request.publicURL else {
            throw ConfigurationError("--url is required for \(Self.name): the relay's public base URL, e.g. https://relay.example.com.")
        }
        guard url.lowercased().hasPrefix("https://"), URL(string: url)?.host != nil else {
            throw ConfigurationError("--url must be an https:// URL (a slash command's token travels in every request, so only over TLS), got `\(url)`.")
        }
        let commandURL = (url.hasSuffix("/") ? String(url.dropLast()) : url) + Self.commandsPath
        guard configuration.botEnabled, let team = request.scope else {
            return Self.manualInstructions(commandURL: commandURL, missingTeam: configuration.botEnabled && request.scope == nil)
        }
        return try await HTTPTransport.withOwnClient { transport in
            let api = MattermostClient(transport: transport, serverURL: configuration.serverURL, botToken: configuration.botToken, logger: logger)
            return try await Self.register(api: api, team: team, commandURL: commandURL)
        }
    }

    static func register(api: any MattermostAPI, team: String, commandURL: String) async throws -> [String] {
        do throws(MattermostAPIError) {
            let teamID = Self.looksLikeID(team) ? team : try await api.teamID(named: team)
            var tokens: [String] = []
            for body in MattermostCommands.bodies(team: teamID, url: commandURL) { tokens.append(try await api.createCommand(body)) }
            return [
                "Created \(tokens.count) slash commands in team \(teamID): /" + MattermostCommands.triggers.joined(separator: ", /") + ".",
                "Give the relay their tokens (a secret):",
                "MATTERMOST_COMMAND_TOKENS=" + tokens.joined(separator: ","),
            ]
        } catch {
            throw error.registrationFailure(refused: "Mattermost refused")
        }
    }

    /// What to create by hand, one command per trigger.
    static func manualInstructions(commandURL: String, missingTeam: Bool) -> [String] {
        var lines = [
            missingTeam
                ? "Pass --team (the team's id or the name in its URL) to create the commands through the API; or create them by hand:"
                : "MATTERMOST_URL and MATTERMOST_BOT_TOKEN are not both set, so nothing was created. In Mattermost, Integrations → Slash Commands → Add, create:"
        ]
        for body in MattermostCommands.bodies(team: "", url: commandURL) {
            let trigger = body["trigger"]?.stringValue ?? ""
            let hint = body["auto_complete_hint"]?.stringValue ?? ""
            lines.append("  /\(trigger)  Request URL: \(commandURL)  Method: POST  Autocomplete: on, hint `\(hint)`")
        }
        lines.append("Then put every command's token in MATTERMOST_COMMAND_TOKENS, separated by commas.")
        return lines
    }

    /// Mattermost's ids are 26 characters of `a-z0-9`.
    static func looksLikeID(_ value: String) -> Bool {
        value.utf8.count == 26 && value.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) }
    }
}

/// A connected Mattermost: its client, and what it adds to the server.
struct MattermostConnection: PlatformConnection {
    let configuration: MattermostConfiguration
    let api: MattermostClient
    let box: OutboxSecretBox
    let clock: any RelayClock
    /// Who holds the websocket among the replicas.
    let lease: ConnectionLease
    let credentials: CredentialReporter
    let logger: Logger

    var sender: any ReplySender {
        Deliverer(MattermostDelivery(api: api, canPost: configuration.botEnabled, box: box, clock: clock), logger: logger)
    }

    var reader: (any ConversationReader)? {
        configuration.botEnabled ? MattermostConversationReader(api: api, logger: logger) : nil
    }

    func inbound(_ inbox: any RelayInbox) -> MattermostInbound {
        MattermostInbound(inbox: inbox, api: api, box: box, configuration: configuration, clock: clock, logger: logger)
    }

    func addRoutes(to router: Router<BasicRequestContext>, inbox: any RelayInbox) {
        guard configuration.commandsEnabled else { return }
        MattermostCommandRoutes(tokens: MattermostCommandTokens(configuration.commandTokens), inbound: inbound(inbox)).add(to: router)
    }

    /// The websocket, while this replica holds its lease: Mattermost sends every event to every
    /// connection of the bot, so two replicas connected would answer each mention twice.
    func services(inbox: any RelayInbox) -> [any Service] {
        guard configuration.websocket, let serverURL = configuration.serverURL, let token = configuration.botToken else { return [] }
        let client = MattermostSocketClient(
            url: MattermostSocketClient.socketURL(serverURL: serverURL), token: token, api: api, inbound: inbound(inbox), clock: clock,
            credentials: credentials, logger: logger)
        return [lease.service { _ in await client.run() }]
    }
}

/// Reads threads for the relay (`/summarize` in a thread, a bare mention in one).
final class MattermostConversationReader: ConversationReader {
    let api: any MattermostAPI
    let logger: Logger
    /// The bot (`GET /users/me`), asked once: its posts and the posts that mention it are
    /// requests and answers, not the thread's content.
    private let bot = Mutex<MattermostUser?>(nil)

    init(api: any MattermostAPI, logger: Logger) {
        self.api = api
        self.logger = logger
    }

    /// A direct message's person administers their own tenant; in a team, its admins
    /// (`team_admin`) and the server's (`system_admin`) do. Asked only when a command changes
    /// team settings; false when Mattermost cannot be asked.
    var platformAdmins: String { "Mattermost system admins and the team's admins (in a direct message, its person)" }

    /// `@name` as Mattermost writes a mention: the user with that username.
    func user(mentioned mention: String, in event: Event) async -> MentionedUserLookup {
        let name = String(mention.drop { $0 == "@" }).lowercased()
        do throws(MattermostAPIError) {
            guard let user = try await api.user(named: name) else { return .nobody("Mattermost knows no user `\(mention)`.") }
            return user.isBot ? .bot(name: "@" + user.username) : .person(id: user.id, name: "@" + user.username)
        } catch {
            return .unavailable("Mattermost did not answer `GET /users/username/{name}` (\(error.reason))")
        }
    }

    func isAdmin(_ event: Event) async -> Bool? {
        if event.team.hasPrefix("dm:") { return true }
        do throws(MattermostAPIError) {
            return try await api.administers(team: event.team, user: event.user)
        } catch {
            logger.notice("mattermost: could not tell whether a user administers a team", metadata: ["reason": "\(error.reason)"])
            return nil
        }
    }

    /// The whole download of an audio attachment.
    static let downloadTimeout: Duration = .seconds(60)

    /// An audio attachment's bytes, from the configured server only (`GET /files/{id}` with the
    /// bot token), the id checked to be a plain Mattermost id first.
    func audio(_ clip: VoiceClip, maxBytes: Int) async throws(VoiceFetchError) -> [UInt8] {
        if let size = clip.byteSize, size > maxBytes { throw .tooLarge(limit: maxBytes, size: size) }
        let download: HTTPTransport.Download
        do throws(MattermostAPIError) {
            download = try await api.file(id: clip.file, maxBytes: maxBytes, timeout: Self.downloadTimeout)
        } catch {
            throw .unavailable(reason: error.reason)
        }
        return try download.voiceBytes(limit: maxBytes) { "GET /files/{id}: Mattermost answered HTTP \($0.status)" }
    }

    /// The audio attachment of the post a thread hangs from, for a mention later in the thread;
    /// nil when it has none or cannot be read.
    func threadVoice(_ event: Event) async -> VoiceClip? {
        guard let root = event.thread else { return nil }
        do throws(MattermostAPIError) {
            return try await api.post(id: root).voice(origin: .repliedTo)
        } catch {
            logger.notice("mattermost: could not read a thread's root for its audio", metadata: ["reason": "\(error.reason)"])
            return nil
        }
    }

    /// The thread's messages, oldest first, without the bot's posts and those that mention it
    /// (the one that asked among them); empty when it cannot be read.
    func threadMessages(_ event: Event, limit: Int) async -> [String] {
        guard let thread = event.thread, limit > 0 else { return [] }
        do throws(MattermostAPIError) {
            let bot = try await identity()
            let mention = "@" + bot.username.lowercased()
            let posts = try await api.thread(of: thread).filter { post in
                post.type.isEmpty && post.userID != bot.id && !post.message.isEmpty
                    && !post.message.lowercased().split(whereSeparator: \.isWhitespace).contains { $0.hasPrefix(mention) }
            }
            return posts.suffix(limit).map(\.message)
        } catch {
            logger.warning("mattermost: could not read a thread", metadata: ["reason": "\(error.reason)"])
            return []
        }
    }

    private func identity() async throws(MattermostAPIError) -> MattermostUser {
        if let known = bot.withLock({ $0 }) { return known }
        let user = try await api.me()
        bot.withLock { $0 = user }
        return user
    }
}
