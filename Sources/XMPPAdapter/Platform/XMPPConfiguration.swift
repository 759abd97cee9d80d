import Foundation

/// What the XMPP adapter needs, read from configuration and the environment at start.
///
/// One account (`XMPP_JID`, its password from `XMPP_PASSWORD_FILE` or `XMPP_PASSWORD`), the
/// rooms it joins (`XMPP_ROOMS`, bare room JIDs) as `XMPP_NICK` (the JID's local part by
/// default), on the server the domain's SRV records name, or where `XMPP_SERVER` says. TLS always — STARTTLS,
/// or direct TLS for `xmpps://host:port` — trusting the system's roots and `XMPP_CA_FILE`'s; a
/// server on this machine alone may be spoken to without it.
public struct XMPPConfiguration: Sendable, Hashable {
    public var jid: String?
    public var password: String?
    public var rooms: [String] = []
    public var nick: String?
    public var server: XMPPServer?
    /// `XMPP_CA_FILE`: a PEM file of certificates to trust besides the system's.
    public var caFile: String?
    /// `XMPP_ROOM_CORRECTIONS`: whether answers in rooms are shown as they are written and
    /// correct their placeholder (XEP-0308); on by default, as every maintained client reads
    /// corrections. Off, a room gets one final message per answer.
    public var roomCorrections = true
    /// `XMPP_DNS_SERVER`: a nameserver (`127.0.0.1:5353`) asked for the SRV records instead of
    /// the system's resolver (tests).
    public var dnsServer: String?

    public init(jid: String? = nil, password: String? = nil, rooms: [String] = [], nick: String? = nil, server: XMPPServer? = nil) {
        self.jid = jid
        self.password = password
        self.rooms = rooms
        self.nick = nick
        self.server = server
    }

    public var isEnabled: Bool { jid != nil && password != nil }
}

/// Where the relay connects: `host:port` (STARTTLS), or `xmpps://host:port` (direct TLS,
/// XEP-0368). Without one, where the JID's domain's SRV records say (`XMPPServerLookup`), else
/// the domain at 5222 (RFC 6120 §3.2.2's fallback).
public struct XMPPServer: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var directTLS: Bool

    public init(host: String, port: Int, directTLS: Bool) {
        self.host = host
        self.port = port
        self.directTLS = directTLS
    }

    /// Reads `host:port`, `xmpp://host:port` or `xmpps://host:port`; nil for anything else.
    public init?(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let withScheme = trimmed.contains("://") ? trimmed : "xmpp://" + trimmed
        guard let url = URL(string: withScheme), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty,
            url.path.isEmpty || url.path == "/", url.query == nil, url.user == nil
        else { return nil }
        switch scheme {
        case "xmpp": self.init(host: host, port: url.port ?? 5222, directTLS: false)
        case "xmpps": self.init(host: host, port: url.port ?? 5223, directTLS: true)
        default: return nil
        }
        guard (1...65_535).contains(port) else { return nil }
    }

    /// `localhost`, `127.x.x.x` or `::1`: a connection that never leaves the machine.
    public var isLoopback: Bool {
        let lowered = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return lowered == "localhost" || lowered == "::1" || lowered.hasPrefix("127.")
    }

    public var description: String { "\(directTLS ? "xmpps" : "xmpp")://\(host):\(port)" }
}
