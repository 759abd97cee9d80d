/// The team admins' web console (docs/console.md): off unless the operator turns it on and says
/// where people's browsers reach the relay.
public struct ConsoleSettings: Sendable, Hashable {
    /// `console.enabled` (`CONSOLE_ENABLED`).
    public var enabled = false
    /// `publicURL` (`PUBLIC_URL`): the relay's base address as a browser reaches it
    /// (`https://relay.example.com`, or under a path), without a query; sign-in links are made
    /// under it.
    public var publicURL: String?
    /// `console.sessionMinutes` (`CONSOLE_SESSION_MINUTES`): how long a sign-in lasts.
    public var sessionLifetime: Duration = .seconds(60 * 60)
    /// How long a sign-in link works (once).
    public static let linkLifetime: Duration = .seconds(10 * 60)
    /// The longest session the operator may configure: a day.
    public static let sessionMinutes: ClosedRange<Int> = 5...1_440

    public init(enabled: Bool = false, publicURL: String? = nil, sessionLifetime: Duration = .seconds(60 * 60)) {
        self.enabled = enabled
        self.publicURL = publicURL.map(Self.withoutTrailingSlash)
        self.sessionLifetime = sessionLifetime
    }

    /// Served, and `/admin console` makes links: both settings are there.
    public var isOn: Bool { enabled && publicURL != nil }

    /// Where the console's pages are: `<publicURL>/console/`.
    public var consoleURL: String { (publicURL ?? "") + "/console/" }

    /// Whether the session cookie may go without `Secure`: only when the public address is plain
    /// HTTP on this machine (a browser would not send a `Secure` cookie there). Anywhere else
    /// the console is reached over HTTPS, and its cookie is never sent otherwise.
    public var isLoopback: Bool {
        guard let url = publicURL, url.lowercased().hasPrefix("http://") else { return false }
        let rest = url.dropFirst("http://".count)
        let host = rest.prefix { $0 != "/" }
        let name = host.hasPrefix("[") ? String(host.prefix { $0 != "]" }) + "]" : String(host.prefix { $0 != ":" })
        return ["localhost", "127.0.0.1", "[::1]"].contains(name.lowercased())
    }

    /// Why `url` cannot be the public address, or nil when it can.
    public static func problem(withPublicURL url: String) -> String? {
        let lower = url.lowercased()
        guard lower.hasPrefix("https://") || lower.hasPrefix("http://") else {
            return "publicURL (PUBLIC_URL) must start with https:// (or http:// on this machine), got `\(url)`."
        }
        guard !url.contains("?"), !url.contains("#"), !url.contains(where: \.isWhitespace) else {
            return "publicURL (PUBLIC_URL) is a base address without a query, a fragment or spaces, got `\(url)`."
        }
        let host = url.split(separator: "/", omittingEmptySubsequences: false).dropFirst(2).first ?? ""
        guard !host.isEmpty else { return "publicURL (PUBLIC_URL) names no host, got `\(url)`." }
        guard lower.hasPrefix("https://") || ConsoleSettings(publicURL: url).isLoopback else {
            return
                "publicURL (PUBLIC_URL) must be https:// (the console's cookie is sent over HTTPS only); http:// is for this machine alone (localhost, 127.0.0.1), got `\(url)`."
        }
        return nil
    }

    public static func withoutTrailingSlash(_ url: String) -> String {
        var url = url
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }
}
