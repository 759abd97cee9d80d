import Foundation
public import Logging
import NIOSSL
import RelayCore
import RelayPipeline
public import RelayPlatform
import ServiceLifecycle

/// XMPP, as the server composes it: reads the `xmpp.*` section, and when set keeps one session
/// with the server (on the replica that holds `xmpp.connection`), takes commands said in its
/// rooms and one to one, and delivers the outbox there.
public struct XMPPPlatform: ChatPlatform {
    public static let name = "xmpp"
    public static let secretVariables = ["XMPP_PASSWORD"]
    public static var deployVariables: [DeployVariable] {
        [
            DeployVariable("XMPP_JID", example: "rhea@example.org"), DeployVariable("XMPP_ROOMS", example: "team@conference.example.org"),
            DeployVariable("XMPP_SERVER", example: "127.0.0.1:9"),
        ]
            + secretVariables.map { DeployVariable($0) }
    }
    public static let registrationHelp =
        "no registration needed: make the account XMPP_JID on your server; the relay signs in and joins XMPP_ROOMS when it starts."
    /// The lease of the one session; its holder also sends the replies.
    static let connectionLease = "xmpp.connection"

    public let configuration: XMPPConfiguration
    let given: [String]

    public init(configuration: XMPPConfiguration) {
        self.configuration = configuration
        self.given = []
    }

    /// The password from the environment or a file, never from the YAML itself.
    public init(configuration values: ConfigValues) throws {
        var xmpp = XMPPConfiguration()
        if let text = values.string("xmpp.jid") {
            guard let jid = JID(text), jid.local != nil else {
                throw ConfigurationError("XMPP_JID (xmpp.jid) must be an account's address, name@domain (a /resource is allowed), got `\(text)`.")
            }
            xmpp.jid = jid.description
        }
        xmpp.password = try values.secret("xmpp.password", fileKey: "xmpp.passwordFile")
        if let rooms = values.strings("xmpp.rooms") {
            let names = rooms.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            for name in names {
                guard let room = JID(name), room.local != nil, room.resource == nil else {
                    throw ConfigurationError(
                        "XMPP_ROOMS (xmpp.rooms) names `\(name)`, not a room: each is a bare room address, room@conference.example.org (no /nick).")
                }
            }
            xmpp.rooms = names.compactMap { JID($0)?.description }
        }
        if let nick = values.string("xmpp.nick") {
            guard !nick.isEmpty, nick.count <= 64, !nick.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw ConfigurationError("XMPP_NICK (xmpp.nick) must be a room nick of 1 to 64 characters with no control character.")
            }
            xmpp.nick = nick
        }
        if let text = values.string("xmpp.server") {
            guard let server = XMPPServer(text) else {
                throw ConfigurationError(
                    "XMPP_SERVER (xmpp.server) must be host:port (STARTTLS, 5222 by default) or xmpps://host:port (direct TLS), got `\(text)`.")
            }
            xmpp.server = server
        }
        if let path = values.string("xmpp.caFile") {
            do {
                _ = try NIOSSLCertificate.fromPEMFile(path)
            } catch {
                throw ConfigurationError("XMPP_CA_FILE (xmpp.caFile) names \(path), which is not a readable PEM file of certificates.")
            }
            xmpp.caFile = path
        }
        if let corrections = try values.bool("xmpp.roomCorrections") { xmpp.roomCorrections = corrections }
        if let dns = values.string("xmpp.dnsServer") {
            guard Self.nameserver(dns) != nil else {
                throw ConfigurationError("XMPP_DNS_SERVER (xmpp.dnsServer) must be an IPv4 address and a port, 127.0.0.1:53, got `\(dns)`.")
            }
            xmpp.dnsServer = dns
        }
        self.configuration = xmpp
        self.given =
            values.given(["xmpp.jid", "xmpp.rooms", "xmpp.server", "xmpp.caFile", "xmpp.nick"]) + (xmpp.password != nil ? ["XMPP_PASSWORD_FILE"] : [])
    }

    public var status: PlatformStatus {
        guard let jid = configuration.jid, configuration.password != nil else {
            let missing = [configuration.jid == nil ? "XMPP_JID" : nil, configuration.password == nil ? "XMPP_PASSWORD_FILE" : nil].compactMap { $0 }
            return .off(given: given, missing: missing.joined(separator: " and "))
        }
        if configuration.rooms.isEmpty { return .on(jid, but: "XMPP_ROOMS is empty: only one-to-one chats reach the relay") }
        return .on("\(jid), \(configuration.rooms.count) room\(configuration.rooms.count == 1 ? "" : "s")")
    }

    /// Nothing: XMPP hands over no URL.
    public var callbackRule: CallbackRule { .nothing }

    public func connect(_ context: PlatformContext) throws -> any PlatformConnection {
        guard let text = configuration.jid, let jid = JID(text), let password = configuration.password else {
            throw ConfigurationError("XMPP is off: set XMPP_JID and XMPP_PASSWORD_FILE.")
        }
        var settings = TLSConfiguration.makeClientConfiguration()
        if let caFile = configuration.caFile { settings.additionalTrustRoots = [.file(caFile)] }
        let tls = try NIOSSLContext(configuration: settings)
        return XMPPConnection(
            configuration: configuration, server: configuration.server, jid: jid, password: password, tls: tls, link: XMPPLink(clock: context.clock),
            clock: context.clock, lease: context.connectionLease(Self.connectionLease), credentials: context.credentials, logger: context.logger)
    }

    public func register(_ request: RegistrationRequest, logger: Logger) async throws -> [String] {
        [
            "XMPP needs no registration: the relay signs in as \(configuration.jid ?? "XMPP_JID") and joins \(configuration.rooms.joined(separator: ", ")) when it starts; commands are typed !help."
        ]
    }

    /// `a.b.c.d:port` as a nameserver's address; nil for anything else.
    static func nameserver(_ text: String) -> (host: String, port: Int)? {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let port = Int(parts[1]), (1...65_535).contains(port) else { return nil }
        let octets = parts[0].split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets.allSatisfy({ Int($0).map { (0...255).contains($0) } ?? false }) else { return nil }
        return (String(parts[0]), port)
    }

    /// Nil: checking would mean a second session as the bot; the session reports a refused
    /// password itself (`/readyz`, XMPP_PASSWORD_FILE).
    public func checkCredentials(logger: Logger) async -> CredentialCheck? { nil }
}

/// A connected XMPP: its link, and what it adds to the server.
struct XMPPConnection: PlatformConnection {
    let configuration: XMPPConfiguration
    /// Nil: found by the JID's domain's SRV records.
    let server: XMPPServer?
    let jid: JID
    let password: String
    let tls: NIOSSLContext
    let link: XMPPLink
    let clock: any RelayClock
    let lease: ConnectionLease
    let credentials: CredentialReporter
    let logger: Logger

    var sender: any ReplySender { Deliverer(XMPPDelivery(link: link, logger: logger), logger: logger) }

    func services(inbox: any RelayInbox) -> [any Service] {
        var client = XMPPClient(
            server: server, jid: jid.bare, password: password, nick: configuration.nick ?? jid.local ?? "rhea", rooms: configuration.rooms, tls: tls,
            link: link, inbound: XMPPInbound(inbox: inbox, roomCorrections: configuration.roomCorrections, logger: logger), clock: clock,
            credentials: credentials, logger: logger)
        if let resource = jid.resource { client.resource = resource }
        client.lookup.nameserver = configuration.dnsServer.flatMap(XMPPPlatform.nameserver)
        let session = client
        return [lease.service { grant in await session.run(grant) }]
    }
}
