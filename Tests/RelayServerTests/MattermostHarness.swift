import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import MattermostAdapter
import RelayCore
import RelayServer
import RelayTestSupport
import RelayTribunal
import Testing

/// The fakes a relay talks to for Mattermost: the server (REST v4, response URLs, the
/// websocket) and the Rhea Tribunal, real servers on 127.0.0.1, plus the relay's SQLite file.
struct MattermostFakes {
    let mattermost: FakeMattermost
    let tribunal: FakeRheaTribunal
    let database: TemporaryDatabase

    static let adminToken = "mattermost-admin-token-0123456789abcdef"
    /// The slash commands' token the relay is configured with.
    static let commandToken = "commandtoken00000000000001"

    static func with<T>(_ body: (MattermostFakes) async throws -> T) async throws -> T {
        try await TemporaryDatabase.with { database in
            try await withFakeRheaTribunal { tribunal in
                try await withFakeMattermost { mattermost in
                    try await body(MattermostFakes(mattermost: mattermost, tribunal: tribunal, database: database))
                }
            }
        }
    }

    /// A relay configured as `serve` would be, pointed at the fakes: slash commands (with
    /// `MATTERMOST_URL`, the one origin their `response_url`s may be on), and with `bot` the bot
    /// (REST and the websocket).
    func configuration(bot: Bool = true, websocket: Bool = false) -> AppConfiguration {
        var configuration = AppConfiguration(storePath: database.path)
        configuration.tribunal.baseURL = tribunal.url
        configuration.tribunal.token = FakeRheaTribunal.defaultToken
        configuration.tribunal.timeouts = .init(quick: .seconds(10), dialog: .seconds(10), tribunal: .seconds(10), health: .seconds(1))
        configuration.tribunal.retry = RetryPolicy(attempts: 2, baseDelay: .milliseconds(10), maxDelay: .milliseconds(20))
        configuration.platforms = [
            MattermostPlatform(
                configuration: MattermostConfiguration(
                    commandTokens: [MattermostToken(Self.commandToken)], serverURL: mattermost.url,
                    botToken: bot ? MattermostToken(FakeMattermost.botToken) : nil, websocket: websocket))
        ]
        configuration.delivery = SlackFakes.fastDelivery
        configuration.shutdownGrace = .seconds(1)
        configuration.http.idleTimeout = HarnessTimings.idleTimeout
        configuration.http.adminToken = Self.adminToken
        return configuration
    }

    /// Builds the relay as `serve` does and runs it on a loopback port while `body` talks to it;
    /// `logger` (a `LogCapture`'s, say) receives the relay's log, else one at warning level.
    func withRelay<T: Sendable>(
        _ configuration: AppConfiguration, logger: Logger? = nil, _ body: @escaping @Sendable (MattermostRelay) async throws -> T
    ) async throws -> T {
        var quiet = Logger(label: "test.mattermost-e2e")
        quiet.logLevel = .warning
        let logger = logger ?? quiet
        let app = try await RelayApplication.build(configuration: configuration, registry: TestMetrics.registry, logger: logger)
        let fakes = self
        return try await app.test(.live) { client in
            try await body(MattermostRelay(client: client, fakes: fakes))
        }
    }
}

/// A running relay and the fakes around it.
struct MattermostRelay: Sendable {
    let client: any TestClientProtocol
    let fakes: MattermostFakes

    var mattermost: FakeMattermost { fakes.mattermost }
    var tribunal: FakeRheaTribunal { fakes.tribunal }

    /// A slash command as Mattermost POSTs it: the form, with the token in the `token` field and
    /// in `Authorization: Token …` (`header: false` leaves the header out; nil tokens leave
    /// both out).
    func slashCommand(
        _ command: String, text: String, channel: String, responseURL: String, triggerID: String = UUID().uuidString,
        token: String? = MattermostFakes.commandToken, header: Bool = true, user: String = FakeMattermost.alice
    ) async throws -> HarnessResponse {
        var fields = [
            ("channel_id", channel), ("channel_name", "town-square"), ("command", command), ("response_url", responseURL),
            ("team_domain", FakeMattermost.teamName), ("team_id", FakeMattermost.teamID), ("text", text), ("trigger_id", triggerID),
            ("user_id", user), ("user_name", "alice"),
        ]
        if let token { fields.append(("token", token)) }
        return try await post(form: Self.form(fields), token: header ? token : nil)
    }

    /// POSTs `form` to `/mattermost/commands`, with `Authorization: Token <token>` when given.
    func post(form: String, token: String?) async throws -> HarnessResponse {
        var headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded", .accept: "application/json"]
        if let token { headers[.authorization] = "Token \(token)" }
        return try await client.patientExecute(uri: "/mattermost/commands", method: .post, headers: headers, body: ByteBuffer(string: form))
    }

    /// As Mattermost encodes it: everything but ASCII's unreserved characters as `%XX` of its
    /// UTF-8 bytes (`日` is 9 bytes, `😀` 12).
    static func form(_ fields: [(String, String)]) -> String {
        let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        return fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? $0.1)" }.joined(separator: "&")
    }

    /// Waits until no run is in flight and the outbox is empty.
    func settled() async throws { try await waitUntilIdle(client, adminToken: MattermostFakes.adminToken) }

    /// The bot's posts in `channel` (ephemeral ones too), as a reader sees them (escapes undone).
    func botPosts(channel: String) -> [FakeMattermostPost] {
        mattermost.posts(channel: channel).filter { $0.via != "user" }.map { post in
            var shown = post
            shown.message = MattermostMarkdown.unescape(post.message)
            shown.history = post.history.map(MattermostMarkdown.unescape)
            return shown
        }
    }
}
