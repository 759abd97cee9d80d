public import RelayPlatform

/// What the Mattermost adapter needs, read from configuration and the environment at start.
///
/// Two independent halves:
/// - **Slash commands** need the commands' tokens (`MATTERMOST_COMMAND_TOKENS`) and the server's
///   address (`MATTERMOST_URL`): Mattermost POSTs each command to `/mattermost/commands` with its
///   token, and the answer goes back through the command's `response_url`, only when that is on
///   the server's origin under `/hooks/commands/` (`responseURLRule`).
/// - **The bot** needs the server's address and a bot token (`MATTERMOST_URL`,
///   `MATTERMOST_BOT_TOKEN`): answers then go through REST v4 (threads, progress edited in
///   place, private answers as ephemeral posts), and the websocket brings mentions and
///   reactions.
///
/// Secrets live only in memory and never print (`MattermostToken`).
public struct MattermostConfiguration: Sendable, Hashable {
    /// The reaction (its name, without colons) that runs a tribunal on the post it is put on.
    public static let defaultReaction = "mag"

    /// `MATTERMOST_COMMAND_TOKENS`: one token per slash command (Mattermost makes one for each).
    public var commandTokens: [MattermostToken]
    /// `MATTERMOST_URL`: the server's base URL (`https://chat.example.com`), without a trailing
    /// slash; REST is under `/api/v4`, the websocket at `/api/v4/websocket`.
    public var serverURL: String?
    /// `MATTERMOST_BOT_TOKEN`: the bot account's access token.
    public var botToken: MattermostToken?
    /// The reaction that runs a tribunal.
    public var tribunalReaction: String
    /// `MATTERMOST_WEBSOCKET`: whether this process may hold the websocket (mentions, reactions).
    /// Of the replicas that may, only the holder of the `mattermost.websocket` lease does.
    public var websocket: Bool

    public init(
        commandTokens: [MattermostToken] = [], serverURL: String? = nil, botToken: MattermostToken? = nil,
        tribunalReaction: String = MattermostConfiguration.defaultReaction, websocket: Bool = true
    ) {
        self.commandTokens = commandTokens
        var base = serverURL
        while base?.hasSuffix("/") == true { base?.removeLast() }
        self.serverURL = base
        self.botToken = botToken
        self.tribunalReaction = tribunalReaction
        self.websocket = websocket
    }

    /// Where a slash command's `response_url` may be (`responseURLRule(serverURL:)`).
    public var responseURLRule: CallbackRule { Self.responseURLRule(serverURL: serverURL) }

    /// `serverURL`'s origin, under its path and `/hooks/commands/`: where Mattermost writes a
    /// command's `response_url` (its Site URL, then `/hooks/commands/{id}`). Nowhere without
    /// `serverURL`: anyone who holds a command's token can write any address in the form.
    public static func responseURLRule(serverURL: String?) -> CallbackRule {
        guard let serverURL, let hooks = CallbackRule.Place(serverURL, pathPrefix: "/hooks/commands/") else { return .nothing }
        return CallbackRule([hooks])
    }

    /// Slash commands are served (`/mattermost/commands`).
    public var commandsEnabled: Bool { !commandTokens.isEmpty }
    /// The bot can post through REST and listen on the websocket.
    public var botEnabled: Bool { serverURL != nil && botToken != nil }
    public var isEnabled: Bool { commandsEnabled || botEnabled }
}

/// A Mattermost token (a slash command's, or the bot's access token): never printed.
public struct MattermostToken: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    public let secret: String

    public init(_ secret: String) {
        self.secret = secret
    }

    /// Mattermost's tokens are 26 characters of `a-z0-9`; anything printable without spaces is
    /// accepted, so a test or an older server's token still works, but a pasted placeholder with
    /// spaces or a stray quote fails at start.
    public static func looksValid(_ secret: String) -> Bool {
        (8...128).contains(secret.utf8.count) && secret.utf8.allSatisfy { (0x21...0x7E).contains($0) && $0 != 0x22 && $0 != 0x27 && $0 != 0x2C }
    }

    public var description: String { "<mattermost token>" }
    public var debugDescription: String { description }
}
