import Foundation
public import Logging
import NIOSSL
import RelayCore
import RelayPipeline
public import RelayPlatform
import ServiceLifecycle

/// IRC, as the server composes it: reads the `irc.*` section, and when connected keeps one
/// connection to the server (on the replica that holds `irc.connection`), takes commands said in
/// its channels and in private, and delivers the outbox there.
public struct IRCPlatform: ChatPlatform {
    public static let name = "irc"
    public static let secretVariables = ["IRC_PASSWORD"]
    public static var deployVariables: [DeployVariable] {
        [
            DeployVariable("IRC_SERVER", example: "ircs://127.0.0.1:9"), DeployVariable("IRC_NICK", example: "Rhea"),
            DeployVariable("IRC_CHANNELS", example: "#rhea"),
        ]
            + secretVariables.map { DeployVariable($0) }
    }
    public static let registrationHelp = "no registration needed: the relay joins IRC_CHANNELS on IRC_SERVER as IRC_NICK when it starts."
    /// The lease of the one connection; its holder also sends the replies.
    static let connectionLease = "irc.connection"

    public let configuration: IRCConfiguration
    let given: [String]

    public init(configuration: IRCConfiguration) {
        self.configuration = configuration
        self.given = []
    }

    /// The password from the environment or a file, never from the YAML itself.
    public init(configuration values: ConfigValues) throws {
        var irc = IRCConfiguration()
        if let text = values.string("irc.server") {
            guard let server = IRCServer(text) else {
                throw ConfigurationError("IRC_SERVER (irc.server) must be ircs://host:port (TLS, 6697 by default) or irc://host:port, got `\(text)`.")
            }
            guard server.usesTLS || server.isLoopback else {
                throw ConfigurationError(
                    "IRC_SERVER (irc.server) is irc://\(server.host), plain text across a network: use ircs://\(server.host):6697 (plain irc:// is for a server on this machine only)."
                )
            }
            irc.server = server
        }
        if let nick = values.string("irc.nick") {
            guard IRCConfiguration.isValidNick(nick) else {
                throw ConfigurationError(
                    "IRC_NICK (irc.nick) must be an IRC nick: a letter first, then letters, digits and [ ] \\ ` _ ^ { | } -, 30 at most; got `\(nick)`.")
            }
            irc.nick = nick
        }
        irc.password = try values.secret("irc.password", fileKey: "irc.passwordFile")
        if let channels = values.strings("irc.channels") {
            let names = channels.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            for name in names where !IRCConfiguration.isValidChannel(name) {
                throw ConfigurationError(
                    "IRC_CHANNELS (irc.channels) names `\(name)`, not a channel: each starts with # (or &, +, !) and has no space or comma.")
            }
            irc.channels = names
        }
        if let path = values.string("irc.caFile") {
            do {
                _ = try NIOSSLCertificate.fromPEMFile(path)
            } catch {
                throw ConfigurationError("IRC_CA_FILE (irc.caFile) names \(path), which is not a readable PEM file of certificates.")
            }
            irc.caFile = path
        }
        if let lines = try values.int("irc.channelLines", in: 1...20) { irc.channelLines = lines }
        if let rate = values.string("irc.linesPerSecond") {
            guard let value = Double(rate), value >= 0.1, value <= 1_000 else {
                throw ConfigurationError(
                    "IRC_LINES_PER_SECOND (irc.linesPerSecond) must be a number from 0.1 to 1000, got `\(rate)`; leave it unset unless the server exempts the bot from flood limits."
                )
            }
            irc.linesPerSecond = value
        }
        if irc.server != nil, irc.password != nil, irc.server?.usesTLS == false, irc.server?.isLoopback == false {
            throw ConfigurationError("IRC_PASSWORD_FILE is set but IRC_SERVER is plain text: use ircs://.")
        }
        self.configuration = irc
        self.given = values.given(["irc.server", "irc.nick", "irc.channels", "irc.caFile"]) + (irc.password != nil ? ["IRC_PASSWORD_FILE"] : [])
    }

    public var status: PlatformStatus {
        guard let server = configuration.server, configuration.nick != nil else {
            let missing = [configuration.server == nil ? "IRC_SERVER" : nil, configuration.nick == nil ? "IRC_NICK" : nil].compactMap { $0 }
            return .off(given: given, missing: missing.joined(separator: " and "))
        }
        if configuration.channels.isEmpty { return .on("\(server)", but: "IRC_CHANNELS is empty: only private messages reach the relay") }
        return .on("\(server), \(configuration.channels.count) channel\(configuration.channels.count == 1 ? "" : "s")")
    }

    /// Nothing: IRC hands over no URL.
    public var callbackRule: CallbackRule { .nothing }

    public func connect(_ context: PlatformContext) throws -> any PlatformConnection {
        guard let server = configuration.server, let nick = configuration.nick else { throw ConfigurationError("IRC is off: set IRC_SERVER and IRC_NICK.") }
        var tls: NIOSSLContext?
        if server.usesTLS {
            var settings = TLSConfiguration.makeClientConfiguration()
            if let caFile = configuration.caFile { settings.additionalTrustRoots = [.file(caFile)] }
            tls = try NIOSSLContext(configuration: settings)
        }
        let link = IRCLink(nick: nick, clock: context.clock)
        let pacer = IRCPacer(linesPerSecond: configuration.linesPerSecond)
        return IRCConnection(
            configuration: configuration, server: server, nick: nick, tls: tls, link: link, pacer: pacer, clock: context.clock,
            lease: context.connectionLease(Self.connectionLease), credentials: context.credentials, logger: context.logger)
    }

    public func register(_ request: RegistrationRequest, logger: Logger) async throws -> [String] {
        ["IRC needs no registration: the relay joins \(configuration.channels.joined(separator: ", ")) when it starts; commands are typed !help."]
    }

    /// Nil: asking the server would mean a second connection as the bot, which would take its
    /// nick from the running relay (or a fallback of it) for the time of the check; the
    /// connection reports a refused password itself (`/readyz`, IRC_PASSWORD_FILE).
    public func checkCredentials(logger: Logger) async -> CredentialCheck? { nil }
}

/// A connected IRC: its link, and what it adds to the server.
struct IRCConnection: PlatformConnection {
    let configuration: IRCConfiguration
    let server: IRCServer
    let nick: String
    let tls: NIOSSLContext?
    let link: IRCLink
    let pacer: IRCPacer
    let clock: any RelayClock
    let lease: ConnectionLease
    let credentials: CredentialReporter
    let logger: Logger

    var sender: any ReplySender {
        Deliverer(
            IRCDelivery(link: link, pacer: pacer, configuredNick: nick, channelLines: configuration.channelLines, logger: logger), logger: logger)
    }

    func services(inbox: any RelayInbox) -> [any Service] {
        let client = IRCClient(
            server: server, nick: nick, password: configuration.password, channels: configuration.channels, tls: tls, link: link, pacer: pacer,
            inbound: IRCInbound(inbox: inbox, logger: logger), clock: clock, credentials: credentials, logger: logger)
        return [lease.service { grant in await client.run(grant) }]
    }
}
