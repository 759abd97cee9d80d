public import RelayCore

/// A workspace member `FakeSlackWebAPI` answers `users.info` about (see `seed(_:)`).
public struct FakeSlackUser: Sendable, Hashable {
    public var id: String
    public var teamID: String
    /// The handle.
    public var name: String
    public var isAdmin: Bool
    public var isOwner: Bool
    public var isPrimaryOwner: Bool
    public var isBot: Bool

    public init(
        id: String, teamID: String = "T0FAKE", name: String? = nil, isAdmin: Bool = false, isOwner: Bool = false,
        isPrimaryOwner: Bool = false, isBot: Bool = false
    ) {
        self.id = id
        self.teamID = teamID
        self.name = name ?? id.lowercased()
        self.isAdmin = isAdmin
        self.isOwner = isOwner
        self.isPrimaryOwner = isPrimaryOwner
        self.isBot = isBot
    }

    /// A member without any workspace role.
    public static func member(_ id: String, teamID: String = "T0FAKE") -> FakeSlackUser {
        FakeSlackUser(id: id, teamID: teamID)
    }

    /// A workspace admin.
    public static func admin(_ id: String, teamID: String = "T0FAKE") -> FakeSlackUser {
        FakeSlackUser(id: id, teamID: teamID, isAdmin: true)
    }

    /// A workspace owner who is not flagged an admin.
    public static func owner(_ id: String, teamID: String = "T0FAKE") -> FakeSlackUser {
        FakeSlackUser(id: id, teamID: teamID, isOwner: true)
    }

    /// The primary owner, flagged only so.
    public static func primaryOwner(_ id: String, teamID: String = "T0FAKE") -> FakeSlackUser {
        FakeSlackUser(id: id, teamID: teamID, isPrimaryOwner: true)
    }

    /// The user object as `users.info` sends it: the role flags, a profile and the fields
    /// clients commonly read.
    public var json: JSONValue {
        let displayName = JSONValue.string(name)
        let realName = JSONValue.string(name.prefix(1).uppercased() + name.dropFirst())
        return [
            "id": .string(id), "team_id": .string(teamID), "name": displayName, "deleted": false, "color": "9f69e7",
            "real_name": realName, "tz": "Europe/Paris", "tz_label": "Central European Time", "tz_offset": 3600,
            "profile": [
                "title": "", "phone": "", "skype": "", "real_name": realName, "real_name_normalized": realName,
                "display_name": displayName, "display_name_normalized": displayName, "fields": nil, "status_text": "",
                "status_emoji": "", "status_expiration": 0, "avatar_hash": "g0a1b2c3d4e5",
                "image_24": "https://secure.gravatar.com/avatar/0a1b2c3d4e5.jpg?s=24",
                "image_72": "https://secure.gravatar.com/avatar/0a1b2c3d4e5.jpg?s=72", "team": .string(teamID),
            ],
            "is_admin": .bool(isAdmin), "is_owner": .bool(isOwner), "is_primary_owner": .bool(isPrimaryOwner),
            "is_restricted": false, "is_ultra_restricted": false, "is_bot": .bool(isBot), "is_app_user": false,
            "updated": 1_700_000_000, "is_email_confirmed": true, "who_can_share_contact_card": "EVERYONE",
        ]
    }
}
