import Foundation

/// Where the relay may send the Bot Connector's calls (and its bot token): an activity's
/// `serviceUrl`, or the metadata's key-set address — https, or http only to a loopback host (a
/// test's fake connector). Anything else is refused before it is called.
enum TeamsServiceURL {
    static func isAllowed(_ url: String) -> Bool {
        guard let parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased(), let host = parts.host, !host.isEmpty,
            parts.user == nil, parts.password == nil
        else { return false }
        switch scheme {
        case "https": return true
        case "http": return isLoopback(host)
        default: return false
        }
    }

    static func isLoopback(_ host: String) -> Bool {
        let host = host.lowercased()
        if host == "localhost" || host == "::1" || host == "[::1]" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }

    /// `base` without its trailing slashes, then `path`: the connector's own URLs are written
    /// with one (`https://smba.trafficmanager.net/amer/`).
    static func join(_ base: String, _ path: String) -> String {
        var base = base
        while base.hasSuffix("/") { base.removeLast() }
        return base + path
    }
}
