import AsyncHTTPClient
import Foundation
import GoogleChatAdapter
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import RelayCore
import RelayServer
import RelayTestSupport
import RelayTribunal
import Testing

/// The fakes a relay talks to for Google Chat: Google (certificates, the token endpoint, the
/// Chat API) and the Rhea Tribunal, real servers on 127.0.0.1, plus the relay's SQLite file.
struct GoogleChatFakes {
    let google: FakeGoogleChat
    let tribunal: FakeRheaTribunal
    let database: TemporaryDatabase

    static let adminToken = "google-chat-admin-token-0123456789"

    static func with<T>(_ body: (GoogleChatFakes) async throws -> T) async throws -> T {
        try await TemporaryDatabase.with { database in
            try await withFakeRheaTribunal { tribunal in
                try await withFakeGoogleChat { google in
                    try await body(GoogleChatFakes(google: google, tribunal: tribunal, database: database))
                }
            }
        }
    }

    /// A relay configured as `serve` would be, pointed at the fakes.
    func configuration() throws -> AppConfiguration {
        var configuration = AppConfiguration(storePath: database.path)
        configuration.tribunal.baseURL = tribunal.url
        configuration.tribunal.token = FakeRheaTribunal.defaultToken
        configuration.tribunal.timeouts = .init(quick: .seconds(10), dialog: .seconds(10), tribunal: .seconds(10), health: .seconds(1))
        configuration.tribunal.retry = RetryPolicy(attempts: 2, baseDelay: .milliseconds(10), maxDelay: .milliseconds(20))
        configuration.platforms = [
            GoogleChatPlatform(
                configuration: GoogleChatConfiguration(
                    audience: .projectNumber(FakeGoogleChat.projectNumber),
                    serviceAccount: try GoogleServiceAccount(json: google.serviceAccountJSON, variable: "test"), certsURL: google.chatCertsURL,
                    apiURL: google.apiURL, tokenURL: google.tokenURL))
        ]
        configuration.delivery = SlackFakes.fastDelivery
        configuration.shutdownGrace = .seconds(1)
        configuration.http.idleTimeout = HarnessTimings.idleTimeout
        configuration.http.adminToken = Self.adminToken
        return configuration
    }

    /// Builds the relay as `serve` does and runs it on a loopback port while `body` talks to it.
    func withRelay<T: Sendable>(
        _ configuration: AppConfiguration, logger: Logger? = nil, _ body: @escaping @Sendable (GoogleChatRelay) async throws -> T
    ) async throws -> T {
        var quiet = Logger(label: "test.google-chat-e2e")
        quiet.logLevel = .warning
        let app = try await RelayApplication.build(configuration: configuration, registry: TestMetrics.registry, logger: logger ?? quiet)
        let fakes = self
        return try await app.test(.live) { client in
            try await body(GoogleChatRelay(client: client, fakes: fakes))
        }
    }
}

/// A running relay and the fakes around it.
struct GoogleChatRelay: Sendable {
    let client: any TestClientProtocol
    let fakes: GoogleChatFakes

    var google: FakeGoogleChat { fakes.google }
    var tribunal: FakeRheaTribunal { fakes.tribunal }

    /// POSTs `event` to `/google-chat/events` as Google Chat does, signed, and shows what the
    /// relay answered in the space, as Google Chat would.
    ///
    /// The relay holds an event's request until its reply is ready (10 s at most,
    /// `GoogleChatEventAnswers.window`); on a loaded machine a 300 KB answer's request outlasted
    /// HummingbirdTesting's fixed 20 s, which Google's own 30 s would not have (`patientExecute`).
    @discardableResult
    func post(_ event: JSONValue) async throws -> HarnessResponse {
        let headers: HTTPFields = [.contentType: "application/json", .authorization: "Bearer \(google.chatToken())"]
        let response = try await client.patientExecute(uri: "/google-chat/events", method: .post, headers: headers, body: ByteBuffer(bytes: event.encoded()))
        if response.status == .ok, let answer = JSONValue.parse(response.body.readableBytesView) { google.answered(answer, to: event) }
        return response
    }

    /// Waits until no run is in flight and the outbox is empty.
    func settled() async throws { try await waitUntilIdle(client, adminToken: GoogleChatFakes.adminToken) }
}
