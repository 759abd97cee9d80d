import Foundation
public import RelayCore
import Synchronization

/// The fake's state behind one lock, shared by its HTTP and websocket handlers.
final class FakeMattermostLocked: Sendable {
    private let mutex: Mutex<FakeMattermostState>

    init(_ state: FakeMattermostState) {
        mutex = Mutex(state)
    }

    func withLock<T: Sendable, E: Error>(_ body: (inout FakeMattermostState) throws(E) -> T) throws(E) -> T {
        try mutex.withLock { (state: inout FakeMattermostState) throws(E) -> T in try body(&state) }
    }
}

/// A post the fake Mattermost holds, with every text it has had.
public struct FakeMattermostPost: Sendable, Hashable {
    public var id: String
    public var channelID: String
    public var rootID: String
    public var userID: String
    /// The current message (after patches).
    public var message: String
    /// Every message it had, the first one first (a patched progress post has several).
    public var history: [String]
    /// Set for an ephemeral post: the one user who sees it.
    public var ephemeralFor: String?
    /// How it was made: `POST /posts`, `POST /posts/ephemeral`, `response_url`, or `user` (a
    /// person's post, made by the test).
    public var via: String
    public var createAt: Int64
    /// The `FileInfo`s of its attachments, as `metadata.files` shows them.
    public var files: [JSONValue] = []

    /// As REST v4 answers a post (the `Post` schema).
    public var json: JSONValue {
        [
            "id": .string(id), "create_at": .int(Int(createAt)), "update_at": .int(Int(createAt)), "edit_at": 0, "delete_at": 0,
            "user_id": .string(userID), "channel_id": .string(channelID), "root_id": .string(rootID), "original_id": "",
            "message": .string(message), "type": "", "props": [:], "hashtags": "", "pending_post_id": "",
            "file_ids": .array(files.compactMap { $0["id"] }), "metadata": files.isEmpty ? [:] : ["files": .array(files)],
        ]
    }
}

/// A slash command created through `POST /api/v4/commands`.
public struct FakeMattermostCommand: Sendable, Hashable {
    public var id: String
    public var token: String
    public var body: JSONValue
}

/// What the fake Mattermost keeps; every rule of the routes lives here, so it is tested as a value.
struct FakeMattermostState: Sendable {
    /// Access tokens by user id, and usernames.
    var tokens: [String: String] = [:]
    var usernames: [String: String] = [:]
    var posts: [String: FakeMattermostPost] = [:]
    /// Uploaded files by id: their bytes and `FileInfo`, served by `GET /files/{id}`.
    var files: [String: (bytes: [UInt8], info: JSONValue)] = [:]
    /// Channels by id: their team ("" for a direct message).
    var channels: [String: String] = [:]
    var teams: [String: String] = [:]
    /// Users with `team_admin` in every team.
    var teamAdmins: Set<String> = []
    /// Channels where the bot may not post (403).
    var forbidden: Set<String> = []
    /// Whether `POST /posts/ephemeral` is allowed (it needs `create_post_ephemeral`, by default
    /// a system admin's); false answers 403.
    var ephemeralAllowed = true
    /// `response_url`s: hook id → (channel, user, uses, issued).
    var hooks: [String: (channel: String, user: String, uses: Int, issued: Date)] = [:]
    var commands: [FakeMattermostCommand] = []
    /// How many of the next API calls answer 429 `limit exceeded`, and the reset they announce.
    var rateLimitNext = 0
    var rateLimitReset = 1
    var clock: Int64 = 1_700_000_000_000
    /// `pending_post_id`s of posts made through `POST /posts`: the post and when, as the
    /// server's `seenPendingPostIdsCache` keeps them (30 s).
    var pendingPosts: [String: (post: String, at: Date)] = [:]
    static let pendingPostLifetime: TimeInterval = 30
    var serial = 0

    static let maxRunes = 16_383
    static let hookUses = 5
    static let hookLifetime: TimeInterval = 30 * 60

    /// A 26-character id as Mattermost makes them, from `prefix` and a counter.
    mutating func newID(_ prefix: String) -> String {
        serial += 1
        let digits = String(serial)
        let filler = String(repeating: "0", count: max(0, 26 - prefix.count - digits.count))
        return String((prefix + filler + digits).prefix(26))
    }

    mutating func tick() -> Int64 {
        clock += 1
        return clock
    }

    /// The user a bearer token belongs to.
    func user(bearer header: String?) -> String? {
        guard let header, header.lowercased().hasPrefix("bearer ") else { return nil }
        let token = String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        return tokens.first { $0.value == token }?.key
    }

    /// A post by `user`, checked as `POST /posts` checks it.
    mutating func create(
        channel: String, message: String, rootID: String, user: String, ephemeralFor: String? = nil, via: String, fileIDs: [String] = []
    ) -> Result<FakeMattermostPost, FakeMattermostError> {
        guard !channel.isEmpty else { return .failure(.badRequest("api.post.create_post.channel_id.app_error", "Invalid channel_id")) }
        guard !message.isEmpty || !fileIDs.isEmpty else { return .failure(.badRequest("model.post.is_valid.msg.app_error", "Invalid message")) }
        guard message.unicodeScalars.count <= Self.maxRunes else {
            return .failure(.badRequest("model.post.is_valid.message_length.app_error", "Message is too long (over 16383 runes)"))
        }
        if via != "user", forbidden.contains(channel) {
            return .failure(.init(status: 403, id: "api.context.permissions.app_error", message: "You do not have the appropriate permissions."))
        }
        if !rootID.isEmpty, posts[rootID] == nil {
            return .failure(.badRequest("api.post.create_post.root_id.app_error", "Invalid RootId parameter"))
        }
        if channels[channel] == nil { channels[channel] = teams.values.first ?? "" }
        let post = FakeMattermostPost(
            id: newID("post"), channelID: channel, rootID: rootID, userID: user, message: message, history: [message], ephemeralFor: ephemeralFor,
            via: via, createAt: tick(), files: fileIDs.compactMap { files[$0]?.info })
        posts[post.id] = post
        return .success(post)
    }

    mutating func patch(_ id: String, message: String, user: String) -> Result<FakeMattermostPost, FakeMattermostError> {
        guard var post = posts[id], post.ephemeralFor == nil else { return .failure(.notFound("app.post.get.app_error", "Unable to get the post.")) }
        guard post.userID == user else {
            return .failure(.init(status: 403, id: "api.context.permissions.app_error", message: "You do not have the appropriate permissions."))
        }
        guard message.unicodeScalars.count <= Self.maxRunes else {
            return .failure(.badRequest("model.post.is_valid.message_length.app_error", "Message is too long (over 16383 runes)"))
        }
        post.message = message
        post.history.append(message)
        posts[id] = post
        return .success(post)
    }

    /// A `response_url` for a slash command typed by `user` in `channel`.
    mutating func issueHook(channel: String, user: String, now: Date) -> String {
        let id = newID("hook")
        hooks[id] = (channel, user, 0, now)
        return id
    }

    /// A POST to a `response_url`: at most 5 within 30 minutes, as `TryUse(hook.Id, 5)` allows.
    mutating func useHook(_ id: String, body: JSONValue?, now: Date, bot: String) -> Result<FakeMattermostPost, FakeMattermostError> {
        guard var hook = hooks[id] else { return .failure(.notFound("web.command_webhook.invalid.app_error", "Unable to find the webhook.")) }
        guard now.timeIntervalSince(hook.issued) <= Self.hookLifetime else {
            return .failure(.badRequest("web.command_webhook.expired.app_error", "The command webhook has expired."))
        }
        guard hook.uses < Self.hookUses else {
            return .failure(.badRequest("web.command_webhook.use.app_error", "The command webhook has been used too many times."))
        }
        guard let text = body?["text"]?.stringValue else {
            return .failure(.badRequest("web.command_webhook.parse.app_error", "Unable to parse incoming data"))
        }
        hook.uses += 1
        hooks[id] = hook
        let ephemeral = body?["response_type"]?.stringValue != "in_channel"
        return create(channel: hook.channel, message: text, rootID: "", user: bot, ephemeralFor: ephemeral ? hook.user : nil, via: "response_url")
    }

    /// `GET /posts/{id}/thread`: the root and its replies, as a `PostList`.
    func thread(of id: String) -> JSONValue? {
        guard let post = posts[id] else { return nil }
        let root = post.rootID.isEmpty ? post.id : post.rootID
        let members = posts.values.filter { ($0.id == root || $0.rootID == root) && $0.ephemeralFor == nil }.sorted { $0.createAt > $1.createAt }
        var byID: [String: JSONValue] = [:]
        for member in members { byID[member.id] = member.json }
        return ["order": .array(members.map { .string($0.id) }), "posts": .object(byID), "next_post_id": "", "prev_post_id": ""]
    }
}

/// An error the fake answers with, in Mattermost's shape (`AppError`).
struct FakeMattermostError: Error, Sendable {
    var status: Int
    var id: String
    var message: String

    static func badRequest(_ id: String, _ message: String) -> FakeMattermostError { .init(status: 400, id: id, message: message) }
    static func notFound(_ id: String, _ message: String) -> FakeMattermostError { .init(status: 404, id: id, message: message) }
    static let unauthorized = FakeMattermostError(
        status: 401, id: "api.context.session_expired.app_error", message: "Invalid or expired session, please login again.")

    /// `{"id","message","detailed_error","request_id","status_code","is_oauth"}`.
    func json(requestID: String) -> JSONValue {
        [
            "id": .string(id), "message": .string(message), "detailed_error": "", "request_id": .string(requestID), "status_code": .int(status),
            "is_oauth": false,
        ]
    }
}
