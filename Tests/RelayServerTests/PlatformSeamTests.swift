import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import RelayCore
import RelayHTTP
import RelayPlatform
import RelayServer
import RelayStore
import RelayTestSupport
import SlackAdapter
import Testing

/// The platform seam: a platform the server has never heard of plugs into `serve` by being
/// added to the list, and a command sent to it runs end to end through the real server,
/// dispatcher and outbox.
@Suite("The platform seam")
struct PlatformSeamTests {
    static let token = "seam-token"
    static let adminToken = "seam-admin-token-0123456789"
    static let logger = {
        var logger = Logger(label: "test.seam")
        logger.logLevel = .warning
        return logger
    }()

    /// `serve` as the CLI builds it: configuration from the environment with the platform list,
    /// then `RelayApplication.build(configuration:…)`.
    @Test func aPlatformAddedToTheListRunsACommandThroughTheRealServer() async throws {
        try await TemporaryDatabase.with { db in
            let environment = [
                "STORE_PATH": db.path, "TESTHOOK_TOKEN": Self.token, "TRIBUNAL_URL": "http://127.0.0.1:1", "HTTP_ADMIN_TOKEN": Self.adminToken,
            ]
            let configuration = try await ConfigurationLoader.load(
                file: nil, environment: environment, platforms: [SlackPlatform.self, WebhookTestPlatform.self])
            #expect(configuration.platformStatus["testhook"] == "on (webhook)")
            #expect(configuration.platformStatus["slack"]?.hasPrefix("off:") == true)
            let platform = try #require(configuration.platforms.compactMap { $0 as? WebhookTestPlatform }.first)

            let app = try await RelayApplication.build(configuration: configuration, registry: TestMetrics.registry, logger: Self.logger)
            try await app.test(.live) { client in
                try await client.execute(uri: "/readyz", method: .get, headers: [.authorization: "Bearer \(Self.adminToken)"]) { response in
                    let body = JSONValue.parse(response.body.readableBytesView)
                    #expect(body?["platforms"]?["testhook"]?.stringValue == "on (webhook)")
                }
                // /help needs no backend: the reply comes from the relay itself.
                try await send(client, ["id": "m1", "channel": "C1", "user": "U1", "text": "/help"]) { #expect($0 == .accepted) }
                let reply = try #require(await platform.sent.next("C1"))
                #expect(reply.text.contains("/translate"))
                #expect(!reply.isProgress)
            }
        }
    }

    /// Built from made dependencies: an in-process backend and a manual clock.
    @Test func aPlatformRunsAModelCommandWithMadeDependencies() async throws {
        try await TemporaryDatabase.with { db in
            let store = try await SQLiteStore.open(path: db.path)
            let http = HTTPTransport.makeClient()
            let platform = WebhookTestPlatform(token: Self.token)
            var configuration = AppConfiguration(storePath: db.path)
            configuration.http.port = 0
            configuration.http.adminToken = Self.adminToken
            let app = try RelayApplication.build(
                .init(
                    configuration: configuration, store: store, backend: ScriptedTribunal(), platforms: [platform],
                    transport: HTTPTransport(client: http), registry: TestMetrics.registry, logger: Self.logger,
                    close: {
                        try? await store.close()
                        try? await http.shutdown()
                    }))
            try await app.test(.live) { client in
                try await client.execute(uri: "/readyz", method: .get, headers: [.authorization: "Bearer \(Self.adminToken)"]) { response in
                    #expect(JSONValue.parse(response.body.readableBytesView)?["platforms"]?["testhook"]?.stringValue == "on (webhook)")
                }
                // Refused before anything runs, as a forged platform request would be.
                try await send(client, ["id": "x", "channel": "C2", "user": "U1", "text": "/fix teh"], token: "wrong") { #expect($0 == .unauthorized) }
                try await send(client, ["id": "m2", "channel": "C2", "user": "U1", "text": "/fix teh cat"]) { #expect($0 == .accepted) }
                // The platform retries the same message: answered once.
                try await send(client, ["id": "m2", "channel": "C2", "user": "U1", "text": "/fix teh cat"]) { #expect($0 == .accepted) }
                try await send(client, ["id": "m3", "channel": "C2", "user": "U1", "text": "/translate fr hello"]) { #expect($0 == .accepted) }
                let first = try #require(await platform.sent.next("C2"))
                #expect(first.text.contains("[grammar@cheap] teh cat"))
                let second = try #require(await platform.sent.next("C2"))
                #expect(second.text.contains("[translate:fr@cheap] hello"))
            }
            #expect(platform.sent.records("C2").count == 2)
        }
    }

    /// `rhea-relay register` as the CLI runs it: configuration from the environment with the
    /// platform list, then `registerPlatform(named:with:among:logger:)` on what was configured.
    @Test func aPlatformAddedToTheListRegistersThroughTheCLIsPath() async throws {
        let platforms: [any ChatPlatform.Type] = [SlackPlatform.self, WebhookTestPlatform.self]
        let on = try await ConfigurationLoader.load(
            file: nil, environment: ["STORE_PATH": ":memory:", "TESTHOOK_TOKEN": Self.token], platforms: platforms)
        let lines = try await registerPlatform(
            named: "TestHook", with: RegistrationRequest(publicURL: "https://relay.example.com", scope: "ignored"), among: on.platforms,
            logger: Self.logger)
        #expect(lines == ["POST https://relay.example.com/testhook/messages", "Authorization: Bearer $TESTHOOK_TOKEN"])

        let noURL = await Self.message { try await registerPlatform(named: "testhook", with: RegistrationRequest(), among: on.platforms, logger: Self.logger) }
        #expect(noURL == "--url is required for testhook: the relay's public base URL.")
        let unknown = await Self.message {
            try await registerPlatform(named: "myspace", with: RegistrationRequest(), among: on.platforms, logger: Self.logger)
        }
        #expect(unknown == "unknown platform `myspace`; known: slack, testhook.")

        let off = try await ConfigurationLoader.load(file: nil, environment: ["STORE_PATH": ":memory:"], platforms: platforms)
        let needsToken = await Self.message {
            try await registerPlatform(
                named: "testhook", with: RegistrationRequest(publicURL: "https://relay.example.com"), among: off.platforms, logger: Self.logger)
        }
        #expect(needsToken == "register testhook needs TESTHOOK_TOKEN.")
    }

    /// The `ConfigurationError` message `body` throws, which the CLI prints after `rhea-relay: `.
    private static func message(_ body: () async throws -> [String]) async -> String? {
        do {
            _ = try await body()
            return nil
        } catch {
            return (error as? ConfigurationError)?.message
        }
    }

    private func send(
        _ client: some TestClientProtocol, _ message: [String: String], token: String = Self.token,
        _ check: @escaping @Sendable (HTTPResponse.Status) -> Void
    ) async throws {
        let body = JSONValue.object(message.mapValues { .string($0) }).encoded()
        try await client.execute(
            uri: "/testhook/messages", method: .post, headers: [.authorization: "Bearer \(token)", .contentType: "application/json"],
            body: ByteBuffer(bytes: body)
        ) { response in check(response.status) }
    }
}
