import RelayCore

/// The operator's own list of team admins (`ADMIN_USERS`): `platform:team:user` entries, comma
/// separated; `platform:*:user` is an admin of every team on that platform.
///
/// Teams' and users' ids may hold colons themselves (a Matrix room `mx:!abc:example.org`, a user
/// `@ann:example.org`, a Teams user `29:1abc`), so an entry is never split further than its
/// platform: an event matches when the entry is exactly its `platform:team:user`, or
/// `platform:*:user`. `/admin` shows each person the entry that names them.
public struct OperatorAdmins: Sendable, Hashable {
    /// Every entry, as written.
    public private(set) var entries: Set<String>

    public init() { entries = [] }

    /// Reads `ADMIN_USERS`. Every entry needs a platform `platforms` holds, then a team and a
    /// user; what is wrong is said entry by entry.
    public init(parsing list: String, platforms: Set<String>) throws(OperatorAdminsError) {
        var entries = Set<String>()
        for raw in list.split(separator: ",") {
            let entry = raw.trimmingWhitespace()
            guard !entry.isEmpty else { continue }
            let fields = entry.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            let platform = String(fields[0])
            guard platforms.contains(platform) else {
                throw OperatorAdminsError(
                    "`\(entry)`: unknown platform `\(platform)` (one of \(platforms.sorted().joined(separator: ", ")), then `:team:user`)")
            }
            // A team and a user after the platform, each not empty: at least `x:y`.
            let rest = fields.count > 1 ? fields[1] : ""
            guard let colon = rest.firstIndex(of: ":"), colon != rest.startIndex, rest.index(after: colon) != rest.endIndex else {
                throw OperatorAdminsError("`\(entry)`: give the team and the user after the platform, as `\(platform):TEAM:USER` (`/admin` shows yours)")
            }
            entries.insert(String(entry))
        }
        self.entries = entries
    }

    /// Whether the list names this user of this team.
    public func contains(platform: String, team: String, user: String) -> Bool {
        entries.contains(Self.entry(platform: platform, team: team, user: user)) || entries.contains("\(platform):*:\(user)")
    }

    /// The entry that names a user of a team.
    public static func entry(platform: String, team: String, user: String) -> String { "\(platform):\(team):\(user)" }
}

/// A malformed `ADMIN_USERS`.
public struct OperatorAdminsError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
