import RelayCore
public import RelayPlatform

/// The part of a `users.info` answer the relay reads: who the user is and what they may do in
/// the workspace.
public struct SlackUserInfo: Sendable, Hashable {
    public var id: String
    public var teamID: String?
    /// The handle (`name`), when Slack sends it.
    public var name: String?
    /// A workspace admin.
    public var isAdmin: Bool
    /// A workspace owner.
    public var isOwner: Bool
    /// The workspace's one primary owner.
    public var isPrimaryOwner: Bool
    public var isBot: Bool
    /// A deactivated account.
    public var isDeleted: Bool

    public init(
        id: String, teamID: String? = nil, name: String? = nil, isAdmin: Bool = false, isOwner: Bool = false,
        isPrimaryOwner: Bool = false, isBot: Bool = false, isDeleted: Bool = false
    ) {
        self.id = id
        self.teamID = teamID
        self.name = name
        self.isAdmin = isAdmin
        self.isOwner = isOwner
        self.isPrimaryOwner = isPrimaryOwner
        self.isBot = isBot
        self.isDeleted = isDeleted
    }

    /// Whether the user may change what applies to the whole workspace: an admin or an owner of
    /// any kind. All three flags are read, so the answer does not rest on how Slack combines
    /// them (whether every owner is also flagged an admin).
    public var administersWorkspace: Bool { isAdmin || isOwner || isPrimaryOwner }
}

extension SlackWebAPI {
    /// Reads one user's profile with `users.info` (a read method: the body is a form; the bot
    /// token needs the `users:read` scope).
    ///
    /// - Throws: `.refused` with `user_not_found` for an unknown user, as Slack answers.
    public func userInfo(user: String) async throws(SlackAPIError) -> SlackUserInfo {
        let method = "users.info"
        let answer = try await send(SlackWebRequest(.method(method), body: ["user": .string(user)], encoding: .form))
        guard let profile = answer["user"], let id = profile["id"]?.stringValue, !id.isEmpty else {
            throw .malformed(endpoint: method, reason: "no \"user\" in the answer")
        }
        // Slack leaves flags out rather than sending false for some accounts (bots, guests).
        func flag(_ key: String) -> Bool { profile[key]?.boolValue ?? false }
        return SlackUserInfo(
            id: id, teamID: profile["team_id"]?.stringValue, name: profile["name"]?.stringValue, isAdmin: flag("is_admin"),
            isOwner: flag("is_owner"), isPrimaryOwner: flag("is_primary_owner"), isBot: flag("is_bot"),
            isDeleted: flag("deleted"))
    }
}
