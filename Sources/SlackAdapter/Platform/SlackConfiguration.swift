public import RelayPlatform

/// What the Slack adapter needs, read from configuration and the environment at start.
///
/// HTTP mode needs the signing secret; Socket Mode the app-level token (`xapp-…`); both need
/// the bot token (`xoxb-…`) to post with `chat.postMessage`. Secrets live only in memory.
public struct SlackConfiguration: Sendable, Hashable {
    /// Slack's Web API, used unless `SLACK_API_URL` names another (a fake in tests and benchmarks).
    public static let defaultAPIURL = "https://slack.com/api"

    /// `SLACK_SIGNING_SECRET`: verifies HTTP requests (slash commands, events, interactivity).
    public var signingSecret: String?
    /// `SLACK_BOT_TOKEN`: `chat.postMessage`, `chat.update`, `chat.postEphemeral`.
    public var botToken: String?
    /// `SLACK_APP_TOKEN`: opens Socket Mode connections (`apps.connections.open`).
    public var appToken: String?
    /// `SLACK_API_URL`: the Web API base, without a trailing slash.
    public var apiURL: String
    /// The reaction (name without colons) that runs a tribunal on the message it is put on.
    public var tribunalReaction: String
    /// `SLACK_TEAM_ID`: the workspace that installed the app, the tenant. Optional: without it the
    /// tenant is read from each payload (events: `authorizations`; buttons: `team.id`; slash
    /// commands: `team_id`). With it, every payload belongs to it, and a user of any other
    /// workspace is a guest.
    public var teamID: String?
    /// Where Slack serves private files (`slack.filesURL`): the only host audio files are
    /// downloaded from, with the bot token, whatever URL an event names.
    public var filesURL: String = SlackConfiguration.defaultFilesURL
    public static let defaultFilesURL = "https://files.slack.com"

    public init(
        signingSecret: String? = nil, botToken: String? = nil, appToken: String? = nil,
        apiURL: String = SlackConfiguration.defaultAPIURL, tribunalReaction: String = "mag"
    ) {
        self.signingSecret = signingSecret
        self.botToken = botToken
        self.appToken = appToken
        self.apiURL = apiURL.hasSuffix("/") ? String(apiURL.dropLast()) : apiURL
        self.tribunalReaction = tribunalReaction
    }

    /// Slack's hook host: every `response_url` Slack issues is on it (`/commands/…` for a slash
    /// command, `/actions/…` for a button).
    public static let hooksURL = "https://hooks.slack.com"

    /// Where a `response_url` may be (`responseURLRule(apiURL:)`).
    public var responseURLRule: CallbackRule { Self.responseURLRule(apiURL: apiURL) }

    /// `https://hooks.slack.com` under `/commands/` and `/actions/`; with an `apiURL` other than
    /// Slack's own (a fake's in tests and benchmarks, which issues response URLs of its own),
    /// also anywhere on that URL's origin, which the operator chose as they chose where the bot
    /// token goes. Anyone who can sign a request can write any address there.
    public static func responseURLRule(apiURL: String) -> CallbackRule {
        var places = ["/commands/", "/actions/"].compactMap { CallbackRule.Place(hooksURL, pathPrefix: $0) }
        var base = apiURL
        while base.hasSuffix("/") { base.removeLast() }
        if base != defaultAPIURL, let configured = CallbackRule.Place(base, pathPrefix: "/", underBasePath: false) { places.append(configured) }
        return CallbackRule(places)
    }

    /// Slash commands, events and buttons over HTTP (`/slack/*` routes).
    public var httpModeEnabled: Bool { signingSecret != nil }
    /// Events over a websocket, no public URL needed.
    public var socketModeEnabled: Bool { appToken != nil }
    public var isEnabled: Bool { httpModeEnabled || socketModeEnabled }
}
