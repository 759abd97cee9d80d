import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import RelayCore
import RelayPipeline
import RelayServer
import RelayTestSupport
import RelayTribunal
import Testing
import XMPPAdapter

/// What a relay talks to for XMPP: a real Prosody of the test's own (with the relay's account
/// and a person's, `ada`), the fake Rhea Tribunal, and the SQLite file of the relay's store.
/// People on the server are `XMPPHuman`s.
struct XMPPFakes {
    let server: ProsodyTestServer
    let tribunal: FakeRheaTribunal
    let database: TemporaryDatabase

    static let room = "team@conference.localhost"
    static let nick = "rhea"
    static let botJID = "rhea@localhost"
    static let botPassword = "rhea-password-0123"
    static let adaPassword = "ada-password-0123"
    static let adminToken = "xmpp-admin-token-0123456789abcdef"

    static func with<T>(_ body: (XMPPFakes) async throws -> T) async throws -> T {
        try await ProsodyTestServer.with { server in
            try await server.register("rhea", password: botPassword)
            try await server.register("ada", password: adaPassword)
            return try await TemporaryDatabase.with { database in
                try await withFakeRheaTribunal { tribunal in
                    try await body(XMPPFakes(server: server, tribunal: tribunal, database: database))
                }
            }
        }
    }

    /// Retries that outlast a reconnect (2 s at first): a reply the server never confirmed is
    /// sent again on the next session.
    static let reconnectingDelivery = DeliveryPolicy(
        maxAttempts: 10, retry: RetryPolicy(attempts: 10, baseDelay: .milliseconds(500), maxDelay: .seconds(5)), lease: .seconds(30),
        pollInterval: .milliseconds(50), drainTimeout: .seconds(1))

    /// A relay configured as `serve` would be, on the server's STARTTLS port (or its direct TLS
    /// port).
    /// With `dns`, no server is given: the relay asks that nameserver for the domain's SRV records.
    func configuration(directTLS: Bool = false, roomCorrections: Bool = true, dns: FakeDNSServer? = nil) -> AppConfiguration {
        var configuration = AppConfiguration(storePath: database.path)
        configuration.tribunal.baseURL = tribunal.url
        configuration.tribunal.token = FakeRheaTribunal.defaultToken
        configuration.tribunal.timeouts = .init(quick: .seconds(60), dialog: .seconds(60), tribunal: .seconds(60), health: .seconds(1))
        configuration.tribunal.retry = RetryPolicy(attempts: 2, baseDelay: .milliseconds(10), maxDelay: .milliseconds(20))
        var xmpp = XMPPConfiguration(
            jid: Self.botJID, password: Self.botPassword, rooms: [Self.room],
            server: XMPPServer(host: "127.0.0.1", port: directTLS ? server.tlsPort : server.port, directTLS: directTLS))
        xmpp.caFile = server.caFile
        xmpp.roomCorrections = roomCorrections
        if let dns {
            xmpp.server = nil
            xmpp.dnsServer = "127.0.0.1:\(dns.port)"
        }
        configuration.platforms = [XMPPPlatform(configuration: xmpp)]
        configuration.delivery = Self.reconnectingDelivery
        configuration.shutdownGrace = .seconds(1)
        configuration.http.idleTimeout = HarnessTimings.idleTimeout
        configuration.http.adminToken = Self.adminToken
        return configuration
    }

    /// Builds the relay as `serve` does and runs it while `body` talks to the server.
    func withRelay<T: Sendable>(
        _ configuration: AppConfiguration, logger: Logger? = nil, _ body: @escaping @Sendable (XMPPRelay) async throws -> T
    ) async throws -> T {
        let logger =
            logger
            ?? {
                var quiet = Logger(label: "test.xmpp-e2e")
                quiet.logLevel = .warning
                return quiet
            }()
        let app = try await RelayApplication.build(configuration: configuration, registry: TestMetrics.registry, logger: logger)
        let fakes = self
        return try await app.test(.live) { client in try await body(XMPPRelay(client: client, fakes: fakes)) }
    }

    /// A person on the server: `ada` unless told.
    func human(
        _ user: String = "ada", nick: String? = nil, rooms: [String] = [XMPPFakes.room], corrections: Bool = true, plan: [XMPPHuman.Step],
        limit: Duration = .seconds(180)
    ) async throws -> XMPPHuman {
        try await XMPPHuman(
            on: server, user: user, password: user == "ada" ? Self.adaPassword : "\(user)-password-0123", nick: nick, rooms: rooms,
            corrections: corrections, plan: plan, limit: limit)
    }

    /// How many times the relay signed in (a reconnect signs in again).
    var signIns: Int {
        server.logTail(100_000).split(separator: "\n").filter { $0.contains("Authenticated as rhea@localhost") }.count
    }
}

/// A running relay on the server.
struct XMPPRelay: Sendable {
    let client: any TestClientProtocol
    let fakes: XMPPFakes

    var tribunal: FakeRheaTribunal { fakes.tribunal }

    /// Waits until no run is in flight and the outbox is empty: every reply sent and confirmed
    /// by the server.
    func settled() async throws { try await waitUntilIdle(client, adminToken: XMPPFakes.adminToken) }
}

extension [XMPPHuman.Record] {
    /// Messages from `sender` (a room nick, or a bare JID).
    func messages(from sender: String) -> [XMPPHuman.Record] { filter { $0.event == "message" && $0.sender == sender } }

    var summary: String { map { "\($0.event) \($0.type ?? "") \($0.sender ?? "") \($0.text ?? "") \($0.replace ?? "")" }.joined(separator: "\n") }
}
