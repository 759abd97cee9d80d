import Foundation

/// What the IRC adapter needs, read from configuration and the environment at start.
///
/// One connection to one server (`IRC_SERVER`), as `IRC_NICK`, in the channels `IRC_CHANNELS`;
/// a password (`IRC_PASSWORD_FILE`, or `IRC_PASSWORD`) goes by SASL PLAIN where the server offers
/// it, else as the server password (PASS). TLS (`ircs://`) through NIOSSL, trusting the system's
/// roots and `IRC_CA_FILE`'s; plain text (`irc://`) only to a loopback host, so a password never
/// crosses a network in the clear.
public struct IRCConfiguration: Sendable, Hashable {
    /// Lines of one reply a channel is shown; the rest goes to the asker privately. Six hold a
    /// fact-check's verdict with its reasons and its agreement line.
    public static let defaultChannelLines = 6

    public var server: IRCServer?
    public var nick: String?
    public var password: String?
    public var channels: [String]
    /// `IRC_CA_FILE`: a PEM file of certificates to trust besides the system's.
    public var caFile: String?
    /// `IRC_CHANNEL_LINES`: lines of one reply shown in a channel (1–20).
    public var channelLines: Int
    /// `IRC_LINES_PER_SECOND`: the pace a server exempting the bot from flood limits allows
    /// (`IRCPacer`); 1 by default, under ngIRCd's and Solanum's limits.
    public var linesPerSecond: Double = 1

    public init(
        server: IRCServer? = nil, nick: String? = nil, password: String? = nil, channels: [String] = [], caFile: String? = nil,
        channelLines: Int = IRCConfiguration.defaultChannelLines
    ) {
        self.server = server
        self.nick = nick
        self.password = password
        self.channels = channels
        self.caFile = caFile
        self.channelLines = channelLines
    }

    public var isEnabled: Bool { server != nil && nick != nil }

    /// A nick as RFC 2812 §2.3.1 spells one: a letter or one of `[]\`_^{|}`, then those, digits
    /// and `-`; 30 characters at most (servers cut longer ones, or refuse them).
    public static func isValidNick(_ nick: String) -> Bool {
        guard let first = nick.first, nick.count <= 30, !first.isNumber, first != "-" else { return false }
        return nick.allSatisfy(IRCText.isNickCharacter)
    }

    /// A channel name: `#`, `&`, `+` or `!` first, then no space, comma, BEL or control
    /// character; 50 characters at most.
    public static func isValidChannel(_ channel: String) -> Bool {
        guard let first = channel.first, "#&+!".contains(first), channel.count >= 2, channel.count <= 50 else { return false }
        return !channel.unicodeScalars.contains { $0 == " " || $0 == "," || $0 == ":" || $0.value < 0x20 || $0.value == 0x7F }
    }
}

/// `ircs://host:6697` or `irc://host:6667`: where the relay connects.
public struct IRCServer: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var usesTLS: Bool

    public init(host: String, port: Int, usesTLS: Bool) {
        self.host = host
        self.port = port
        self.usesTLS = usesTLS
    }

    /// Reads `ircs://host[:port]` (6697 by default) or `irc://host[:port]` (6667); nil for
    /// anything else.
    public init?(_ text: String) {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty,
            url.path.isEmpty || url.path == "/", url.query == nil, url.user == nil
        else { return nil }
        switch scheme {
        case "ircs": self.init(host: host, port: url.port ?? 6697, usesTLS: true)
        case "irc": self.init(host: host, port: url.port ?? 6667, usesTLS: false)
        default: return nil
        }
        guard (1...65_535).contains(port) else { return nil }
    }

    /// `localhost`, `127.x.x.x` or `::1`: a connection that never leaves the machine.
    public var isLoopback: Bool {
        let lowered = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return lowered == "localhost" || lowered == "::1" || lowered.hasPrefix("127.")
    }

    public var description: String { "\(usesTLS ? "ircs" : "irc")://\(host):\(port)" }
}
