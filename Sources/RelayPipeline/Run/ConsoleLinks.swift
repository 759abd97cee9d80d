public import struct Foundation.Date

/// One person's admin access to one team's web console (docs/console.md): what a sign-in link
/// and the session it opens stand for.
public struct ConsoleGrant: Sendable, Hashable, Codable {
    public var platform: String
    public var team: String
    /// The platform's id of the person, or the operator's name for a link made on the command line.
    public var user: String
    public var userName: String

    public init(platform: String, team: String, user: String, userName: String) {
        self.platform = platform
        self.team = team
        self.user = user
        self.userName = userName
    }
}

/// A one-time sign-in link and when it stops working.
public struct ConsoleLink: Sendable, Hashable {
    public var url: String
    public var expiresAt: Date

    public init(url: String, expiresAt: Date) {
        self.url = url
        self.expiresAt = expiresAt
    }
}

/// Makes one-time sign-in links to a team's console (RelayConsole's `ConsoleTokens`); the relay
/// has one only when the operator turned the console on.
public protocol ConsoleLinkMaker: Sendable {
    func link(for grant: ConsoleGrant, now: Date) async throws -> ConsoleLink
}
