public import RelayCore
public import RelayHTTP
public import RelayPlatform

/// The calls the adapter makes, each on `call`.
extension MatrixAPI {
    /// How much longer than its long-poll timeout a `/sync` may take to answer.
    static var syncGrace: Duration { .seconds(10) }

    /// `GET /account/whoami`: the bot's user id (`@relay:example.org`).
    public func whoami() async throws(MatrixAPIError) -> String {
        let answer = try await call(MatrixRequest(.get, ["account", "whoami"], endpoint: "whoami"))
        guard let user = answer["user_id"]?.stringValue, MatrixID.isUser(user) else { throw .malformed(endpoint: "whoami", reason: "no user_id") }
        return user
    }

    /// `GET /profile/{user}/displayname`: how clients show the bot (mention pills carry it); nil
    /// when it has none.
    public func displayName(of user: String) async throws(MatrixAPIError) -> String? {
        do throws(MatrixAPIError) {
            return try await call(MatrixRequest(.get, ["profile", user, "displayname"], endpoint: "displayname"))["displayname"]?.stringValue
        } catch {
            if case .refused(endpoint: _, let refusal) = error, refusal.status == 404 { return nil }
            throw error
        }
    }

    /// `GET /sync`: waits up to `timeout` for events after `since` (nil: the first sync, which
    /// answers at once with the current state).
    public func sync(since: String?, timeout: Duration, filter: String) async throws(MatrixAPIError) -> JSONValue {
        var query = ["timeout": String(Int(timeout.seconds * 1000)), "filter": filter]
        if let since { query["since"] = since }
        return try await call(MatrixRequest(.get, ["sync"], query: query, endpoint: "sync", timeout: timeout + Self.syncGrace))
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
        guard let id = answer["event_id"]?.stringValue, !id.isEmpty else { throw .malformed(endpoint: "send", reason: "no event_id") }
        return id
    }

    /// `PUT /rooms/{room}/typing/{user}`: "typing…" while the models work, or off.
    public func typing(room: String, user: String, on: Bool, timeout: Duration = .seconds(30)) async throws(MatrixAPIError) {
        let body: JSONValue = on ? ["typing": true, "timeout": .int(Int(timeout.seconds * 1000))] : ["typing": false]
        _ = try await call(MatrixRequest(.put, ["rooms", room, "typing", user], body: body, endpoint: "typing"))
    }

    /// `GET /rooms/{room}/event/{id}`: one event, as the bot may see it.
    public func event(room: String, id: String) async throws(MatrixAPIError) -> JSONValue {
        try await call(MatrixRequest(.get, ["rooms", room, "event", id], endpoint: "event"))
    }

    /// `GET /rooms/{room}/relations/{root}/m.thread` (v1): the thread's events, oldest first, at
    /// most `limit` (the root is not among them).
    public func threadEvents(room: String, root: String, limit: Int) async throws(MatrixAPIError) -> [JSONValue] {
        let answer = try await call(
            MatrixRequest(
                .get, ["rooms", room, "relations", root, "m.thread"], query: ["dir": "f", "limit": String(max(1, min(limit, 200)))],
                endpoint: "relations", version: "v1"))
        guard let chunk = answer["chunk"]?.arrayValue else { throw .malformed(endpoint: "relations", reason: "no chunk") }
        return chunk
    }

    /// `GET /rooms/{room}/state/m.room.power_levels`: who may do what in the room.
    public func powerLevels(room: String) async throws(MatrixAPIError) -> JSONValue {
        try await call(MatrixRequest(.get, ["rooms", room, "state", "m.room.power_levels"], endpoint: "power_levels"))
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
        let answer = try await call(MatrixRequest(.get, ["rooms", room, "joined_members"], endpoint: "joined_members"))
        guard let joined = answer["joined"]?.objectValue else { throw .malformed(endpoint: "joined_members", reason: "no joined") }
        return joined.count
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
            JSONValue.parse(refused.body)?["errcode"]?.stringValue == "M_UNRECOGNIZED"
        else { return answer }
        return try await download(
            MatrixRequest(.get, Array(path.dropFirst()), endpoint: "media", timeout: timeout, version: "v3", api: "media"), maxBytes: maxBytes)
    }

    /// `GET /user/{me}/account_data/m.direct`: the bot's direct rooms, by the person they are with.
    public func directRooms(of me: String) async throws(MatrixAPIError) -> [String: [String]] {
        let answer: JSONValue
        do throws(MatrixAPIError) {
            answer = try await call(MatrixRequest(.get, ["user", me, "account_data", "m.direct"], endpoint: "account_data"))
        } catch {
            if case .refused(endpoint: _, let refusal) = error, refusal.status == 404 { return [:] }
            throw error
        }
        var rooms: [String: [String]] = [:]
        for (user, list) in answer.objectValue ?? [:] { rooms[user] = list.arrayValue?.compactMap(\.stringValue) ?? [] }
        return rooms
    }

    /// `PUT /user/{me}/account_data/m.direct`.
    public func setDirectRooms(_ rooms: [String: [String]], of me: String) async throws(MatrixAPIError) {
        let body = JSONValue.object(rooms.mapValues { .array($0.map(JSONValue.string)) })
        _ = try await call(MatrixRequest(.put, ["user", me, "account_data", "m.direct"], body: body, endpoint: "account_data"))
    }

    /// `POST /createRoom`: a direct room with `user`, who is invited; its id.
    public func createDirectRoom(with user: String) async throws(MatrixAPIError) -> String {
        let body: JSONValue = ["is_direct": true, "preset": "trusted_private_chat", "invite": [.string(user)]]
        let answer = try await call(MatrixRequest(.post, ["createRoom"], body: body, endpoint: "createRoom"))
        guard let room = answer["room_id"]?.stringValue, !room.isEmpty else { throw .malformed(endpoint: "createRoom", reason: "no room_id") }
        return room
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
