public import RelayCore
public import RelayHTTP
public import RelayPlatform

/// The calls the adapter makes, each on `call`.
extension MatrixAPI {
    /// How much longer than its long-poll timeout a `/sync` may take to answer.
    static var syncGrace: Duration { .seconds(10) }

    /// `GET /account/whoami`: the bot's user id (`@relay:example.org`).
    public func whoami() async throws(MatrixAPIError) -> String {
        let user = try await call(MatrixRequest(.get, ["account", "whoami"], endpoint: "whoami")).decode(MatrixWhoami.self, endpoint: "whoami").userID
        guard MatrixID.isUser(user) else { throw .malformed(endpoint: "whoami", reason: "field `user_id` is not a user id") }
        return user
    }

    /// `GET /profile/{user}/displayname`: how clients show the bot (mention pills carry it); nil
    /// when it has none.
    public func displayName(of user: String) async throws(MatrixAPIError) -> String? {
        do throws(MatrixAPIError) {
            return try await call(MatrixRequest(.get, ["profile", user, "displayname"], endpoint: "displayname"))
                .decode(MatrixDisplayName.self, endpoint: "displayname").displayName
        } catch {
            if case .refused(endpoint: _, let refusal) = error, refusal.status == 404 { return nil }
            throw error
        }
    }

    /// `GET /profile/{user}`: whether the homeserver knows the user (404: it does not).
    public func userExists(_ user: String) async throws(MatrixAPIError) -> Bool {
        do throws(MatrixAPIError) {
            _ = try await call(MatrixRequest(.get, ["profile", user], endpoint: "profile"))
            return true
        } catch {
            if case .refused(endpoint: _, let refusal) = error, refusal.status == 404 { return false }
            throw error
        }
    }

    /// `GET /sync`: waits up to `timeout` for events after `since` (nil: the first sync, which
    /// answers at once with the current state).
    func sync(since: String?, timeout: Duration, filter: String) async throws(MatrixAPIError) -> MatrixSyncResponse {
        var query = ["timeout": String(Int(timeout.seconds * 1000)), "filter": filter]
        if let since { query["since"] = since }
        return try await call(MatrixRequest(.get, ["sync"], query: query, endpoint: "sync", timeout: timeout + Self.syncGrace))
            .decode(MatrixSyncResponse.self, endpoint: "sync")
    }

    /// `POST /join/{room}`: accepts an invitation.
    public func join(room: String) async throws(MatrixAPIError) {
        _ = try await call(MatrixRequest(.post, ["join", room], body: [:], endpoint: "join"))
    }

    /// `POST /rooms/{room}/leave`: declines an invitation or leaves.
    public func leave(room: String) async throws(MatrixAPIError) {
        _ = try await call(MatrixRequest(.post, ["rooms", room, "leave"], body: [:], endpoint: "leave"))
    }

    /// `PUT /rooms/{room}/send/{type}/{txnId}`: the event's id. The homeserver keeps the
    /// transaction id per access token: the same id again returns the same event, never a second.
    public func send(room: String, type: String, transaction: String, content: JSONValue) async throws(MatrixAPIError) -> String {
        let answer = try await call(MatrixRequest(.put, ["rooms", room, "send", type, transaction], body: content, endpoint: "send"))
        let id = try answer.decode(MatrixSent.self, endpoint: "send").eventID
        guard !id.isEmpty else { throw .malformed(endpoint: "send", reason: "field `event_id` is null or empty") }
        return id
    }

    /// `PUT /rooms/{room}/typing/{user}`: "typing…" while the models work, or off.
    public func typing(room: String, user: String, on: Bool, timeout: Duration = .seconds(30)) async throws(MatrixAPIError) {
        let body: JSONValue = on ? ["typing": true, "timeout": .int(Int(timeout.seconds * 1000))] : ["typing": false]
        _ = try await call(MatrixRequest(.put, ["rooms", room, "typing", user], body: body, endpoint: "typing"))
    }

    /// `GET /rooms/{room}/event/{id}`: one event, as the bot may see it.
    public func event(room: String, id: String) async throws(MatrixAPIError) -> MatrixEvent {
        try await call(MatrixRequest(.get, ["rooms", room, "event", id], endpoint: "event")).decode(MatrixEvent.self, endpoint: "event")
    }

    /// `GET /rooms/{room}/relations/{root}/m.thread` (v1): the thread's events, oldest first, at
    /// most `limit` (the root is not among them).
    public func threadEvents(room: String, root: String, limit: Int) async throws(MatrixAPIError) -> [MatrixEvent] {
        let answer = try await call(
            MatrixRequest(
                .get, ["rooms", room, "relations", root, "m.thread"], query: ["dir": "f", "limit": String(max(1, min(limit, 200)))],
                endpoint: "relations", version: "v1"))
        return try answer.decode(MatrixRelations.self, endpoint: "relations").chunk.compactMap(\.value)
    }

    /// `GET /rooms/{room}/state/m.room.power_levels`: who may do what in the room.
    public func powerLevels(room: String) async throws(MatrixAPIError) -> MatrixPowerLevels {
        try await call(MatrixRequest(.get, ["rooms", room, "state", "m.room.power_levels"], endpoint: "power_levels"))
            .decode(MatrixPowerLevels.self, endpoint: "power_levels")
    }

    /// `GET /rooms/{room}/state/m.room.create?format=event`: the room's creators — the create
    /// event's sender and its `additional_creators` (room version 12), who hold the highest power
    /// there whatever `m.room.power_levels` says.
    public func roomCreators(room: String) async throws(MatrixAPIError) -> Set<String> {
        let create = try await call(MatrixRequest(.get, ["rooms", room, "state", "m.room.create"], query: ["format": "event"], endpoint: "state"))
            .decode(MatrixCreateEvent.self, endpoint: "state")
        return Set([create.sender] + (create.content.additionalCreators ?? []))
    }

    /// Whether the room is end-to-end encrypted (it has an `m.room.encryption` state event).
    public func isEncrypted(room: String) async throws(MatrixAPIError) -> Bool {
        do throws(MatrixAPIError) {
            _ = try await call(MatrixRequest(.get, ["rooms", room, "state", "m.room.encryption"], endpoint: "state"))
            return true
        } catch {
            if case .refused(endpoint: _, let refusal) = error, refusal.status == 404 { return false }
            throw error
        }
    }

    /// `GET /rooms/{room}/joined_members`: how many have joined the room (the bot among them).
    public func joinedMemberCount(room: String) async throws(MatrixAPIError) -> Int {
        try await call(MatrixRequest(.get, ["rooms", room, "joined_members"], endpoint: "joined_members"))
            .decode(MatrixJoinedMembers.self, endpoint: "joined_members").joined.count
    }

    /// The bytes of `media`, streamed from the configured homeserver (never from the server the
    /// URI names: that one is only a path segment, which the homeserver resolves), at most
    /// `maxBytes`. Asks the authenticated endpoint (`GET /_matrix/client/v1/media/download/…`,
    /// spec v1.11, with the bot's token); a homeserver that does not know it (404 or 405
    /// `M_UNRECOGNIZED`) is asked at `/_matrix/media/v3/download/…` instead.
    public func media(_ media: MatrixContentURI, maxBytes: Int, timeout: Duration) async throws(MatrixAPIError) -> HTTPTransport.Download {
        let path = ["media", "download", media.server, media.mediaID]
        let answer = try await download(MatrixRequest(.get, path, endpoint: "media", timeout: timeout, version: "v1"), maxBytes: maxBytes)
        guard case .complete(let refused) = answer, refused.status == 404 || refused.status == 405,
            MatrixErrorBody.read(refused.body)?.errcode == "M_UNRECOGNIZED"
        else { return answer }
        return try await download(
            MatrixRequest(.get, Array(path.dropFirst()), endpoint: "media", timeout: timeout, version: "v3", api: "media"), maxBytes: maxBytes)
    }

    /// `GET /user/{me}/account_data/m.direct`: the bot's direct rooms, by the person they are with.
    public func directRooms(of me: String) async throws(MatrixAPIError) -> [String: [String]] {
        let answer: MatrixAnswer
        do throws(MatrixAPIError) {
            answer = try await call(MatrixRequest(.get, ["user", me, "account_data", "m.direct"], endpoint: "account_data"))
        } catch {
            if case .refused(endpoint: _, let refusal) = error, refusal.status == 404 { return [:] }
            throw error
        }
        // Another client may have written anything here: a person's list that is no list of
        // room ids reads as empty, the others are kept.
        let lists = try answer.decode([String: Lenient<[Lenient<String>]>].self, endpoint: "account_data")
        return lists.mapValues { ($0.value ?? []).compactMap(\.value) }
    }

    /// `PUT /user/{me}/account_data/m.direct`.
    public func setDirectRooms(_ rooms: [String: [String]], of me: String) async throws(MatrixAPIError) {
        let body = JSONValue.object(rooms.mapValues { .array($0.map(JSONValue.string)) })
        _ = try await call(MatrixRequest(.put, ["user", me, "account_data", "m.direct"], body: body, endpoint: "account_data"))
    }

    /// `POST /createRoom`: a direct room with `user`, who is invited; its id.
    public func createDirectRoom(with user: String) async throws(MatrixAPIError) -> String {
        let body: JSONValue = ["is_direct": true, "preset": "trusted_private_chat", "invite": [.string(user)]]
        let room = try await call(MatrixRequest(.post, ["createRoom"], body: body, endpoint: "createRoom"))
            .decode(MatrixCreatedRoom.self, endpoint: "createRoom").roomID
        guard !room.isEmpty else { throw .malformed(endpoint: "createRoom", reason: "field `room_id` is null or empty") }
        return room
    }
}

/// `GET /account/whoami`.
struct MatrixWhoami: Decodable {
    var userID: String

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
    }
}

/// `GET /profile/{user}/displayname`: absent or null when the user has none.
struct MatrixDisplayName: Decodable {
    var displayName: String?

    enum CodingKeys: String, CodingKey {
        case displayName = "displayname"
    }
}

/// `PUT /rooms/{room}/send/…`.
struct MatrixSent: Decodable {
    var eventID: String

    enum CodingKeys: String, CodingKey {
        case eventID = "event_id"
    }
}

/// `POST /createRoom`.
struct MatrixCreatedRoom: Decodable {
    var roomID: String

    enum CodingKeys: String, CodingKey {
        case roomID = "room_id"
    }
}

/// `GET /rooms/{room}/relations/…`: one page of events (one that is not an object is left out).
struct MatrixRelations: Decodable {
    var chunk: [Lenient<MatrixEvent>]
}

/// `GET /rooms/{room}/joined_members`: the members by user id (their profiles are not read).
struct MatrixJoinedMembers: Decodable {
    var joined: [String: JSONValue]
}

/// `m.room.create` as a whole event: who made the room, and who else it names as its creators.
struct MatrixCreateEvent: Decodable {
    struct Content: Decodable {
        var additionalCreators: [String]?

        enum CodingKeys: String, CodingKey {
            case additionalCreators = "additional_creators"
        }
    }
    var sender: String
    var content: Content
}

/// `m.room.power_levels`' content: each user's level, the default, and what changing the power
/// levels themselves needs. Levels are integers; one of another type reads as absent.
public struct MatrixPowerLevels: Sendable, Hashable, Decodable {
    public var users: [String: Int]
    public var usersDefault: Int?
    public var events: [String: Int]
    public var stateDefault: Int?

    private enum CodingKeys: String, CodingKey {
        case users, events
        case usersDefault = "users_default"
        case stateDefault = "state_default"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        users = (container.lenient([String: Lenient<Int>].self, .users) ?? [:]).compactMapValues(\.value)
        usersDefault = container.lenient(Int.self, .usersDefault)
        events = (container.lenient([String: Lenient<Int>].self, .events) ?? [:]).compactMapValues(\.value)
        stateDefault = container.lenient(Int.self, .stateDefault)
    }

    /// The power level from which a room's member counts as its admin for the relay: 50, a
    /// moderator's in every client's presets (docs/admin.md).
    public static let adminLevel = 50

    /// Whether `user` is one of the room's moderators or admins (`adminLevel` or more).
    public func administers(_ user: String) -> Bool {
        (users[user] ?? usersDefault ?? 0) >= Self.adminLevel
    }
}

/// Matrix identifiers, as the spec shapes them.
public enum MatrixID {
    /// `@localpart:server`.
    public static func isUser(_ id: String) -> Bool { id.hasPrefix("@") && id.contains(":") && id.utf8.count <= 255 }

    /// The server part of a user or room id (`example.org` of `@ada:example.org`).
    public static func server(of id: String) -> String? {
        guard let colon = id.firstIndex(of: ":") else { return nil }
        let server = id[id.index(after: colon)...]
        return server.isEmpty ? nil : String(server)
    }

    /// The localpart of a user id (`ada` of `@ada:example.org`).
    public static func localpart(of id: String) -> String {
        String(id.dropFirst().prefix { $0 != ":" })
    }
}
