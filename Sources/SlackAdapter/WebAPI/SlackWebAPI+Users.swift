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
        let profile = try answer.decode(SlackUsersInfoAnswer.self, method: method).user
        guard !profile.id.isEmpty else { throw .malformed(endpoint: method, reason: "field `user.id` is null or empty") }
        return SlackUserInfo(
            id: profile.id, teamID: profile.teamID, name: profile.name, isAdmin: profile.isAdmin ?? false, isOwner: profile.isOwner ?? false,
            isPrimaryOwner: profile.isPrimaryOwner ?? false, isBot: profile.isBot ?? false, isDeleted: profile.deleted ?? false)
    }
}

/// `users.info`'s answer: `{"user": {…}}`. Slack leaves flags out rather than sending false for
/// some accounts (bots, guests): each is optional and absent reads as false.
struct SlackUsersInfoAnswer: Decodable {
    struct User: Decodable {
        var id: String
        var teamID: String?
        var name: String?
        var isAdmin: Bool?
        var isOwner: Bool?
        var isPrimaryOwner: Bool?
        var isBot: Bool?
        var deleted: Bool?

        enum CodingKeys: String, CodingKey {
            case id, name, deleted
            case teamID = "team_id"
            case isAdmin = "is_admin"
            case isOwner = "is_owner"
            case isPrimaryOwner = "is_primary_owner"
            case isBot = "is_bot"
        }
    }

    var user: User
}
