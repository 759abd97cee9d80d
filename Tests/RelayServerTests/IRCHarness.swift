import Foundation
import Hummingbird
import HummingbirdTesting
import IRCAdapter
import Logging
import RelayCore
import RelayPipeline
import RelayServer
import RelayTestSupport
import RelayTribunal
import Testing

/// What a relay talks to for IRC: a real ngIRCd of the test's own, the fake Rhea Tribunal, and
/// the SQLite file of the relay's store. People on the server are `IRCHuman`s.
struct IRCFakes {
    let server: NgircdTestServer
    let tribunal: FakeRheaTribunal
    let database: TemporaryDatabase

    static let channel = "#rhea"
    static let nick = "Rhea"
    static let adminToken = "irc-admin-token-0123456789abcdef"

    static func with<T>(password: String? = nil, _ body: (IRCFakes) async throws -> T) async throws -> T {
        try await NgircdTestServer.with(password: password) { server in
            try await TemporaryDatabase.with { database in
                try await withFakeRheaTribunal { tribunal in
                    try await body(IRCFakes(server: server, tribunal: tribunal, database: database))
                }
            }
        }
    }

    /// Retries that outlast a reconnect (2 s at first): a reply the server never confirmed is
    /// sent again on the next connection.
    static let reconnectingDelivery = DeliveryPolicy(
        maxAttempts: 10, retry: RetryPolicy(attempts: 10, baseDelay: .milliseconds(500), maxDelay: .seconds(5)), lease: .seconds(30),
        pollInterval: .milliseconds(50), drainTimeout: .seconds(1))

    /// A relay configured as `serve` would be, on the server's plain port (or its TLS port).
    func configuration(tls: Bool = false, password: String? = nil, channelLines: Int = IRCConfiguration.defaultChannelLines) -> AppConfiguration {
        var configuration = AppConfiguration(storePath: database.path)
        configuration.tribunal.baseURL = tribunal.url
        configuration.tribunal.token = FakeRheaTribunal.defaultToken
        configuration.tribunal.timeouts = .init(quick: .seconds(60), dialog: .seconds(60), tribunal: .seconds(60), health: .seconds(1))
        configuration.tribunal.retry = RetryPolicy(attempts: 2, baseDelay: .milliseconds(10), maxDelay: .milliseconds(20))
        let address = tls ? IRCServer(host: "localhost", port: server.tlsPort, usesTLS: true) : IRCServer(host: "127.0.0.1", port: server.port, usesTLS: false)
        configuration.platforms = [
            IRCPlatform(
                configuration: IRCConfiguration(
                    server: address, nick: Self.nick, password: password, channels: [Self.channel], caFile: tls ? server.caFile : nil,
                    channelLines: channelLines))
        ]
        configuration.delivery = Self.reconnectingDelivery
        configuration.shutdownGrace = .seconds(1)
        configuration.http.idleTimeout = HarnessTimings.idleTimeout
        configuration.http.adminToken = Self.adminToken
        return configuration
    }

    /// Builds the relay as `serve` does and runs it while `body` talks to the server.
    func withRelay<T: Sendable>(
        _ configuration: AppConfiguration, logger: Logger? = nil, _ body: @escaping @Sendable (IRCRelay) async throws -> T
    ) async throws -> T {
        let logger =
            logger
            ?? {
                var quiet = Logger(label: "test.irc-e2e")
                quiet.logLevel = .warning
                return quiet
            }()
        let app = try await RelayApplication.build(configuration: configuration, registry: TestMetrics.registry, logger: logger)
        let fakes = self
        return try await app.test(.live) { client in try await body(IRCRelay(client: client, fakes: fakes)) }
    }

    /// How many times the relay registered with the server (a reconnect registers again).
    var registrations: Int {
        server.logs.split(separator: "\n").filter { $0.contains("User \"\(Self.nick)!") && $0.contains("\" registered") }.count
    }
}

/// A running relay on the server.
struct IRCRelay: Sendable {
    let client: any TestClientProtocol
    let fakes: IRCFakes

    var tribunal: FakeRheaTribunal { fakes.tribunal }

    /// Waits until no run is in flight and the outbox is empty: every reply sent and confirmed by
    /// the server.
    func settled() async throws { try await waitUntilIdle(client, adminToken: IRCFakes.adminToken) }
}

extension IRCHuman.Record {
    /// The line as the server relayed it to others, with the relay's prefix (`:Rhea!~rhea@127.0.0.1
    /// PRIVMSG #rhea :…` and CR LF): what must fit in 512 bytes.
    var relayedBytes: Int {
        ":\(from ?? "")!~rhea@127.0.0.1 PRIVMSG \(target ?? "") :\(text ?? "")\r\n".utf8.count
    }
}
