public import RelayCore
public import RelayHTTP
public import RelayPlatform

/// A post as the adapter reads it (REST answers and websocket `posted` events alike). Every member
/// is read leniently: a post without the ids a handler needs is left alone there, not unreadable.
public struct MattermostPost: Sendable, Hashable, Decodable {
    public var id: String
    public var userID: String
    public var channelID: String
    /// The thread's first post, when this one is a reply; empty otherwise.
    public var rootID: String
    public var message: String
    /// Empty for a person's post; `system_…` for the server's own.
    public var type: String
    public var createAt: Int64
    /// Posted by an integration (a bot or a webhook): never answered, so two bots cannot loop.
    public var fromIntegration: Bool
    /// The files attached to it (`metadata.files`), as far as a voice note needs them.
    public var files: [MattermostFile]

    private enum CodingKeys: String, CodingKey {
        case id, message, type, props, metadata
        case userID = "user_id"
        case channelID = "channel_id"
        case rootID = "root_id"
        case createAt = "create_at"
    }

    private enum PropsKeys: String, CodingKey {
        case fromBot = "from_bot"
        case fromWebhook = "from_webhook"
    }

    private enum MetadataKeys: String, CodingKey {
        case files
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = container.lenient(String.self, .id) ?? ""
        userID = container.lenient(String.self, .userID) ?? ""
        channelID = container.lenient(String.self, .channelID) ?? ""
        rootID = container.lenient(String.self, .rootID) ?? ""
        message = container.lenient(String.self, .message) ?? ""
        type = container.lenient(String.self, .type) ?? ""
        createAt = container.lenient(Int64.self, .createAt) ?? 0
        // `from_bot` is a string ("true") in posts an integration makes, a Boolean in some versions.
        let props = try? container.nestedContainer(keyedBy: PropsKeys.self, forKey: .props)
        fromIntegration =
            props?.lenient(String.self, .fromBot) == "true" || props?.lenient(String.self, .fromWebhook) == "true"
            || props?.lenient(Bool.self, .fromBot) == true
        let metadata = try? container.nestedContainer(keyedBy: MetadataKeys.self, forKey: .metadata)
        files = (metadata?.lenient([Lenient<MattermostFile>].self, .files) ?? []).compactMap(\.value)
    }

    /// Its first audio attachment, as a clip of `origin`. The declared size comes from the
    /// server: only a sane one is kept. Mattermost declares no duration.
    public func voice(origin: VoiceClip.Origin) -> VoiceClip? {
        guard let file = files.first(where: { $0.mimeType.lowercased().hasPrefix("audio/") }) else { return nil }
        let size = UntrustedNumber.checked(file.size, in: 0...(4 << 30), source: "mattermost", field: "size")
        return VoiceClip(file: file.id, mimeType: file.mimeType, byteSize: size, origin: origin)
    }

    /// The thread to answer in: this post's thread, or a new one under it.
    public var threadRoot: String { rootID.isEmpty ? id : rootID }
}

/// A file attached to a post (`FileInfo`): its id, which `GET /files/{id}` serves to the bot
/// token, and what the server says of it. One without an id does not decode (and is left out).
public struct MattermostFile: Sendable, Hashable, Decodable {
    public var id: String
    public var mimeType: String
    public var size: Int?

    private enum CodingKeys: String, CodingKey {
        case id, size
        case mimeType = "mime_type"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        guard !id.isEmpty else { throw DecodingError.valueNotFound(String.self, .init(codingPath: [CodingKeys.id], debugDescription: "empty")) }
        mimeType = container.lenient(String.self, .mimeType) ?? ""
        size = container.lenient(Int.self, .size)
    }

    /// A Mattermost id: 26 characters of `[a-z0-9]`, so it is one plain path segment.
    public static func isID(_ id: String) -> Bool {
        id.utf8.count == 26 && id.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) }
    }
}

/// `{"id": …}`: what a created post, a team or the bot's user answers with, of which the id is read.
struct MattermostIdentified: Decodable {
    var id: String
}

/// `GET /users/username/{name}`, as far as it is read.
struct MattermostNamedUser: Decodable {
    var id: String
    var username: String?
    var isBot: Bool?

    enum CodingKeys: String, CodingKey {
        case id, username
        case isBot = "is_bot"
    }
}

/// `GET /users/me`.
struct MattermostMe: Decodable {
    var id: String
    var username: String?
}

/// A team member or a user, for its `roles` (a space-separated list).
struct MattermostRoles: Decodable {
    var roles: String?
}

/// `GET /channels/{id}`: its team (empty for a direct or group message).
struct MattermostChannel: Decodable {
    var teamID: String?

    enum CodingKeys: String, CodingKey {
        case teamID = "team_id"
    }
}

/// `GET /posts/{id}/thread`: the posts by id (in no order).
struct MattermostPostList: Decodable {
    var posts: [String: MattermostPost]?
}

/// `POST /commands`: the token Mattermost made for the command.
struct MattermostCreatedCommand: Decodable {
    var token: String?
}

/// The bot account, from `GET /users/me`.
public struct MattermostUser: Sendable, Hashable {
    public var id: String
    public var username: String
}

extension MattermostAPI {
    /// `GET /users/username/{name}`: the user with that username, and whether a bot; nil when
    /// Mattermost has none (404).
    public func user(named name: String) async throws(MattermostAPIError) -> (id: String, username: String, isBot: Bool)? {
        let endpoint = "GET /users/username/{name}"
        // Usernames are lower-case letters, digits, `.`, `-` and `_` (Mattermost's own rule).
        guard (1...64).contains(name.utf8.count),
            name.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2E || $0 == 0x2D || $0 == 0x5F })
        else { return nil }
        do throws(MattermostAPIError) {
            let user = try await send(MattermostRequest(.api(method: "GET", path: "/users/username/\(name)", label: endpoint)))
                .decode(MattermostNamedUser.self, endpoint: endpoint)
            return (user.id, user.username ?? name, user.isBot ?? false)
        } catch {
            if case .refused(_, let refusal) = error, refusal.status == 404 { return nil }
            throw error
        }
    }

    /// `GET /users/me`: who the bot token belongs to.
    public func me() async throws(MattermostAPIError) -> MattermostUser {
        let endpoint = "GET /users/me"
        let me = try await send(MattermostRequest(.api(method: "GET", path: "/users/me", label: endpoint))).decode(MattermostMe.self, endpoint: endpoint)
        guard !me.id.isEmpty else { throw .malformed(endpoint: endpoint, reason: "field `id` is null or empty") }
        return MattermostUser(id: me.id, username: me.username ?? "")
    }

    /// `GET /files/{id}`: an attachment's bytes, streamed and cut off past `maxBytes`, from the
    /// configured server with the bot token. The id is checked to be a plain Mattermost id.
    public func file(id: String, maxBytes: Int, timeout: Duration) async throws(MattermostAPIError) -> HTTPTransport.Download {
        guard MattermostFile.isID(id) else { throw .invalidRequest(endpoint: "GET /files/{id}", reason: "not a Mattermost file id") }
        return try await download(MattermostRequest(.api(method: "GET", path: "/files/" + id, label: "GET /files/{id}")), maxBytes: maxBytes, timeout: timeout)
    }

    /// `POST /posts` (201): a post in `channel`, in the thread of `rootID` when given; its id.
    ///
    /// - Parameter pendingID: `pending_post_id`, which Mattermost remembers for 30 seconds
    ///   (`PendingPostIDsCacheTTL`): a create repeated with it within them answers the post the
    ///   first made and makes none, so a resend after a lost answer or a quick restart shows once.
    @discardableResult
    public func createPost(channel: String, message: String, rootID: String?, pendingID: String? = nil) async throws(MattermostAPIError) -> String {
        var body: [String: JSONValue] = ["channel_id": .string(channel), "message": .string(message)]
        if let rootID, !rootID.isEmpty { body["root_id"] = .string(rootID) }
        if let pendingID { body["pending_post_id"] = .string(pendingID) }
        let answer = try await send(MattermostRequest(.api(method: "POST", path: "/posts", label: "POST /posts"), body: .object(body)))
        return try Self.postID(answer, endpoint: "POST /posts")
    }

    /// `PUT /posts/{id}/patch`: replaces the message of a post the bot made.
    public func patchPost(id: String, message: String) async throws(MattermostAPIError) {
        let path = "/posts/\(try Self.segment(id, endpoint: "PUT /posts/{id}/patch"))/patch"
        _ = try await send(MattermostRequest(.api(method: "PUT", path: path, label: "PUT /posts/{id}/patch"), body: ["message": .string(message)]))
    }

    /// `POST /posts/ephemeral` (201): a post only `user` sees.
    public func createEphemeralPost(user: String, channel: String, message: String, rootID: String?) async throws(MattermostAPIError) {
        var post: [String: JSONValue] = ["channel_id": .string(channel), "message": .string(message)]
        if let rootID, !rootID.isEmpty { post["root_id"] = .string(rootID) }
        let body: JSONValue = ["user_id": .string(user), "post": .object(post)]
        _ = try await send(MattermostRequest(.api(method: "POST", path: "/posts/ephemeral", label: "POST /posts/ephemeral"), body: body))
    }

    /// `GET /posts/{id}`.
    public func post(id: String) async throws(MattermostAPIError) -> MattermostPost {
        let path = "/posts/\(try Self.segment(id, endpoint: "GET /posts/{id}"))"
        let post = try await send(MattermostRequest(.api(method: "GET", path: path, label: "GET /posts/{id}")))
            .decode(MattermostPost.self, endpoint: "GET /posts/{id}")
        guard !post.id.isEmpty else { throw .malformed(endpoint: "GET /posts/{id}", reason: "no post id") }
        return post
    }

    /// `GET /posts/{id}/thread`: the thread's posts, oldest first.
    public func thread(of id: String) async throws(MattermostAPIError) -> [MattermostPost] {
        let path = "/posts/\(try Self.segment(id, endpoint: "GET /posts/{id}/thread"))/thread"
        let list = try await send(MattermostRequest(.api(method: "GET", path: path, label: "GET /posts/{id}/thread")))
            .decode(MattermostPostList.self, endpoint: "GET /posts/{id}/thread")
        let posts = (list.posts ?? [:]).values
        return posts.sorted { ($0.createAt, $0.id) < ($1.createAt, $1.id) }
    }

    /// `GET /channels/{id}`: the team a channel belongs to; nil for a direct or group message.
    public func channelTeam(_ id: String) async throws(MattermostAPIError) -> String? {
        let path = "/channels/\(try Self.segment(id, endpoint: "GET /channels/{id}"))"
        let channel = try await send(MattermostRequest(.api(method: "GET", path: path, label: "GET /channels/{id}")))
            .decode(MattermostChannel.self, endpoint: "GET /channels/{id}")
        return channel.teamID.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// `GET /teams/{team}/members/{user}` and `GET /users/{user}`: whether the user administers
    /// the team (`team_admin`) or the whole server (`system_admin`).
    public func administers(team: String, user: String) async throws(MattermostAPIError) -> Bool {
        let memberLabel = "GET /teams/{id}/members/{id}"
        let memberPath = "/teams/\(try Self.segment(team, endpoint: memberLabel))/members/\(try Self.segment(user, endpoint: memberLabel))"
        let member = try await send(MattermostRequest(.api(method: "GET", path: memberPath, label: memberLabel)))
        if try Self.roles(member, endpoint: memberLabel).contains("team_admin") { return true }
        let userLabel = "GET /users/{id}"
        let userPath = "/users/\(try Self.segment(user, endpoint: userLabel))"
        return try Self.roles(try await send(MattermostRequest(.api(method: "GET", path: userPath, label: userLabel))), endpoint: userLabel)
            .contains("system_admin")
    }

    /// A member's or user's `roles`, a space-separated list.
    static func roles(_ answer: MattermostAnswer, endpoint: String) throws(MattermostAPIError) -> [Substring] {
        (try answer.decode(MattermostRoles.self, endpoint: endpoint).roles ?? "").split(separator: " ")
    }

    /// `POST /api/v4/commands` (201): a custom slash command; returns the token Mattermost made for it.
    public func createCommand(_ body: JSONValue) async throws(MattermostAPIError) -> String {
        let answer = try await send(MattermostRequest(.api(method: "POST", path: "/commands", label: "POST /commands"), body: body))
        guard let token = try answer.decode(MattermostCreatedCommand.self, endpoint: "POST /commands").token, !token.isEmpty else {
            throw .malformed(endpoint: "POST /commands", reason: "no token")
        }
        return token
    }

    /// `GET /teams/name/{name}`: a team's id from its name (the one in its URL).
    public func teamID(named name: String) async throws(MattermostAPIError) -> String {
        let path = "/teams/name/\(try Self.segment(name, endpoint: "GET /teams/name/{name}"))"
        let answer = try await send(MattermostRequest(.api(method: "GET", path: path, label: "GET /teams/name/{name}")))
        let id = try answer.decode(MattermostIdentified.self, endpoint: "GET /teams/name/{name}").id
        guard !id.isEmpty else { throw .malformed(endpoint: "GET /teams/name/{name}", reason: "no team id") }
        return id
    }

    /// POSTs a command response (`{"response_type","text"}`) to a slash command's `response_url`.
    public func respond(to responseURL: String, body: JSONValue) async throws(MattermostAPIError) {
        _ = try await send(MattermostRequest(.responseURL(responseURL), body: body))
    }

    static func postID(_ answer: MattermostAnswer, endpoint: String) throws(MattermostAPIError) -> String {
        let id = try answer.decode(MattermostIdentified.self, endpoint: endpoint).id
        guard !id.isEmpty else { throw .malformed(endpoint: endpoint, reason: "no post id") }
        return id
    }

    /// An id or name as one path segment: letters, digits, `-` and `_` only, so nothing from
    /// outside can reach another route.
    static func segment(_ value: String, endpoint: String) throws(MattermostAPIError) -> String {
        guard (1...64).contains(value.utf8.count),
            value.utf8.allSatisfy({ byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2D || byte == 0x5F
            })
        else { throw .invalidRequest(endpoint: endpoint, reason: "not a Mattermost id") }
        return value
    }
}
