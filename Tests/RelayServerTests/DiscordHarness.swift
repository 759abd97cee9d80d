import DiscordAdapter
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import RelayCore
import RelayServer
import RelayTestSupport
import RelayTribunal
import Testing

/// The fakes a relay talks to for Discord: its REST API, its gateway, and the Rhea Tribunal,
/// real servers on 127.0.0.1, plus the SQLite file of the relay's inbox and outbox.
struct DiscordFakes {
    let discord: FakeDiscordAPI
    let gateway: FakeDiscordGateway
    let tribunal: FakeRheaTribunal
    let database: TemporaryDatabase
    /// The application's key pair: the relay is configured with its public half.
    let signer = FakeDiscordSigner()

    static let adminToken = "discord-admin-token-0123456789abcdef"

    static func with<T>(_ body: (DiscordFakes) async throws -> T) async throws -> T {
        try await TemporaryDatabase.with { database in
            try await withFakeRheaTribunal { tribunal in
                try await withFakeDiscordAPI { discord in
                    let gateway = try await FakeDiscordGateway.start()
                    discord.attach(gateway: gateway)
                    do {
                        let result = try await body(DiscordFakes(discord: discord, gateway: gateway, tribunal: tribunal, database: database))
                        await gateway.stop()
                        return result
                    } catch {
                        await gateway.stop()
                        throw error
                    }
                }
            }
        }
    }

    /// A relay configured as `serve` would be, pointed at the fakes, with fast timings; the
    /// gateway connection only when asked for.
    func configuration(gateway: Bool = false, botToken: Bool = true) -> AppConfiguration {
        var configuration = AppConfiguration(storePath: database.path)
        configuration.tribunal.baseURL = tribunal.url
        configuration.tribunal.token = FakeRheaTribunal.defaultToken
        configuration.tribunal.timeouts = .init(quick: .seconds(30), dialog: .seconds(30), tribunal: .seconds(30), health: .seconds(1))
        configuration.tribunal.retry = RetryPolicy(attempts: 2, baseDelay: .milliseconds(10), maxDelay: .milliseconds(20))
        var discord = DiscordConfiguration(
            publicKey: signer.publicKeyHex, botToken: botToken ? DiscordToken(self.discord.botToken) : nil, applicationID: FakeDiscordAPI.applicationID,
            apiURL: self.discord.apiURL, gateway: gateway)
        discord.cdnURL = self.discord.cdnURL
        discord.gatewayTimings = DiscordGatewayClient.Configuration(
            backoff: Backoff(initial: .milliseconds(20), maximum: .milliseconds(100)), identifySpacing: .milliseconds(20), closeTimeout: .milliseconds(200))
        configuration.platforms = [DiscordPlatform(configuration: discord)]
        configuration.delivery = SlackFakes.fastDelivery
        configuration.shutdownGrace = .seconds(1)
        configuration.http.idleTimeout = HarnessTimings.idleTimeout
        configuration.http.adminToken = Self.adminToken
        return configuration
    }

    /// Builds the relay as `serve` does and runs it on a loopback port while `body` talks to it.
    func withRelay<T: Sendable>(
        _ configuration: AppConfiguration, clock: (any RelayClock)? = nil, _ body: @escaping @Sendable (DiscordRelay) async throws -> T
    ) async throws -> T {
        var logger = Logger(label: "test.discord-e2e")
        logger.logLevel = .warning
        let app: RelayApplication.App
        if let clock {
            let runtime = try await RelayRuntime.start(configuration, logger: logger)
            app = try RelayApplication.build(
                .init(
                    configuration: configuration, store: runtime.store, backend: runtime.tribunal, platforms: configuration.platforms,
                    transport: runtime.transport, clock: clock, registry: TestMetrics.registry, logger: logger, close: { await runtime.shutdown() }))
        } else {
            app = try await RelayApplication.build(configuration: configuration, registry: TestMetrics.registry, logger: logger)
        }
        let fakes = self
        return try await app.test(.live) { client in
            try await body(DiscordRelay(client: client, fakes: fakes, clock: clock ?? SystemClock()))
        }
    }
}

/// A running relay and the fakes around it, with interactions signed as Discord signs them.
struct DiscordRelay: Sendable {
    let client: any TestClientProtocol
    let fakes: DiscordFakes
    let clock: any RelayClock

    var discord: FakeDiscordAPI { fakes.discord }
    var gateway: FakeDiscordGateway { fakes.gateway }
    var tribunal: FakeRheaTribunal { fakes.tribunal }

    enum Signing: Sendable {
        case valid
        /// With the right key, `seconds` ago.
        case aged(seconds: Int)
        /// With another key.
        case forged
        /// No signature header.
        case missing
        /// A valid signature of other bytes than those sent.
        case ofOtherBody
    }

    /// POSTs `interaction` to `/discord/interactions`, signed as asked.
    func interact(_ interaction: JSONValue, signing: Signing = .valid) async throws -> HarnessResponse {
        try await interact(body: String(decoding: interaction.encoded(), as: UTF8.self), signing: signing)
    }

    /// POSTs `body`, bytes as they are (JSON escaped another way, a body past a cap), signed as asked.
    func interact(body: String, signing: Signing = .valid) async throws -> HarnessResponse {
        let now = Int(clock.now.timeIntervalSince1970)
        var timestamp = String(now)
        var signature: String?
        switch signing {
        case .valid: signature = fakes.signer.signature(body: body, timestamp: timestamp)
        case .aged(let seconds):
            timestamp = String(now - seconds)
            signature = fakes.signer.signature(body: body, timestamp: timestamp)
        case .forged: signature = FakeDiscordSigner().signature(body: body, timestamp: timestamp)
        case .missing: signature = nil
        case .ofOtherBody: signature = fakes.signer.signature(body: body + " ", timestamp: timestamp)
        }
        var headers: HTTPFields = [.contentType: "application/json", DiscordHeaders.timestamp: timestamp]
        if let signature { headers[DiscordHeaders.signature] = signature }
        return try await client.patientExecute(uri: "/discord/interactions", method: .post, headers: headers, body: ByteBuffer(string: body))
    }

    /// Waits until no run is in flight and the outbox is empty (see `RelayUnderTest.settled`).
    func settled() async throws { try await waitUntilIdle(client, adminToken: DiscordFakes.adminToken) }
}

extension HarnessResponse {
    var json: JSONValue? { JSONValue.parse(body.readableBytesView) }
}
