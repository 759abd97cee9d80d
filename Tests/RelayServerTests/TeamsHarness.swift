import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import RelayCore
import RelayServer
import RelayTestSupport
import RelayTribunal
import TeamsAdapter
import Testing

/// The fakes a relay talks to for Teams: the Bot Framework (OpenID metadata and keys, the token
/// endpoint, the Bot Connector) and the Rhea Tribunal, real servers on 127.0.0.1, plus the
/// relay's SQLite file.
struct TeamsFakes {
    let framework: FakeBotFramework
    let tribunal: FakeRheaTribunal
    let database: TemporaryDatabase

    static let adminToken = "teams-admin-token-0123456789abcdef"

    static func with<T>(_ body: (TeamsFakes) async throws -> T) async throws -> T {
        try await TemporaryDatabase.with { database in
            try await withFakeRheaTribunal { tribunal in
                try await withFakeBotFramework { framework in
                    try await body(TeamsFakes(framework: framework, tribunal: tribunal, database: database))
                }
            }
        }
    }

    /// A relay configured as `serve` would be, pointed at the fakes.
    func configuration() -> AppConfiguration {
        var configuration = AppConfiguration(storePath: database.path)
        configuration.tribunal.baseURL = tribunal.url
        configuration.tribunal.token = FakeRheaTribunal.defaultToken
        configuration.tribunal.timeouts = .init(quick: .seconds(10), dialog: .seconds(10), tribunal: .seconds(10), health: .seconds(1))
        configuration.tribunal.retry = RetryPolicy(attempts: 2, baseDelay: .milliseconds(10), maxDelay: .milliseconds(20))
        configuration.platforms = [
            TeamsPlatform(
                configuration: TeamsConfiguration(
                    appID: FakeBotFramework.appID, appPassword: TeamsSecret(FakeBotFramework.appPassword),
                    openIDMetadataURL: framework.openIDMetadataURL, tokenURL: framework.tokenURL))
        ]
        configuration.delivery = SlackFakes.fastDelivery
        configuration.shutdownGrace = .seconds(1)
        configuration.http.idleTimeout = HarnessTimings.idleTimeout
        configuration.http.adminToken = Self.adminToken
        return configuration
    }

    /// Builds the relay as `serve` does and runs it on a loopback port while `body` talks to it.
    func withRelay<T: Sendable>(
        _ configuration: AppConfiguration, logger: Logger? = nil, _ body: @escaping @Sendable (TeamsRelay) async throws -> T
    ) async throws -> T {
        var quiet = Logger(label: "test.teams-e2e")
        quiet.logLevel = .warning
        let app = try await RelayApplication.build(configuration: configuration, registry: TestMetrics.registry, logger: logger ?? quiet)
        let fakes = self
        return try await app.test(.live) { client in
            try await body(TeamsRelay(client: client, fakes: fakes))
        }
    }
}

/// A running relay and the fakes around it.
struct TeamsRelay: Sendable {
    let client: any TestClientProtocol
    let fakes: TeamsFakes

    var framework: FakeBotFramework { fakes.framework }
    var tribunal: FakeRheaTribunal { fakes.tribunal }

    static let alice = FakeBotFramework.alice

    /// `text` from Alice, mentioning the bot, in `conversation` (a channel thread).
    func message(_ text: String, conversation: String, id: String) -> JSONValue {
        framework.message(text, conversation: conversation, id: id)
    }

    /// POSTs `activity` to `/teams/messages` with a token for it.
    func post(_ activity: JSONValue) async throws -> HarnessResponse {
        let headers: HTTPFields = [.contentType: "application/json", .authorization: "Bearer \(framework.activityToken())"]
        return try await client.patientExecute(uri: "/teams/messages", method: .post, headers: headers, body: ByteBuffer(bytes: activity.encoded()))
    }

    /// Waits until no run is in flight and the outbox is empty.
    func settled() async throws { try await waitUntilIdle(client, adminToken: TeamsFakes.adminToken) }
}
