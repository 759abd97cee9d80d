/// What the Matrix adapter needs, read from configuration and the environment at start.
///
/// The relay is an ordinary Matrix user (a bot account) on a homeserver, reached over the
/// client-server API with the account's access token: `/sync` long polling brings what it is
/// sent, and it answers with `m.notice` messages. The token lives only in memory, as a
/// `MatrixToken`, which never prints.
public struct MatrixConfiguration: Sendable, Hashable {
    /// The reaction that runs a tribunal on the message it is put on.
    public static let defaultReaction = "🔍"

    /// `MATRIX_HOMESERVER_URL`: the homeserver's client-server base, without a trailing slash
    /// (`https://matrix.example.org`).
    public var homeserverURL: String?
    /// `MATRIX_ACCESS_TOKEN` (or `MATRIX_ACCESS_TOKEN_FILE`): the bot account's token.
    public var accessToken: MatrixToken?
    /// `MATRIX_ALLOWED_SERVERS`: invitations are accepted only from users of these servers; empty:
    /// from anyone.
    public var allowedServers: [String]
    /// The reaction (a Unicode emoji) that runs a tribunal.
    public var tribunalReaction: String
    /// How long one `/sync` waits for events before answering empty.
    public var syncTimeout: Duration

    public init(
        homeserverURL: String? = nil, accessToken: MatrixToken? = nil, allowedServers: [String] = [],
        tribunalReaction: String = MatrixConfiguration.defaultReaction, syncTimeout: Duration = .seconds(30)
    ) {
        var base = homeserverURL
        while base?.hasSuffix("/") == true { base?.removeLast() }
        self.homeserverURL = base
        self.accessToken = accessToken
        self.allowedServers = allowedServers.map { $0.lowercased() }
        self.tribunalReaction = tribunalReaction
        self.syncTimeout = syncTimeout
    }

    public var isEnabled: Bool { homeserverURL != nil && accessToken != nil }

    /// Whether an invitation from `inviter` may be accepted.
    func acceptsInvite(from inviter: String?) -> Bool {
        guard !allowedServers.isEmpty else { return true }
        guard let inviter, let server = MatrixID.server(of: inviter) else { return false }
        return allowedServers.contains(server.lowercased())
    }
}
