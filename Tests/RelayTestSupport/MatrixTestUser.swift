import Foundation
import NIOHTTP1
public import RelayCore

/// A person on the test homeserver, driving rooms over the plain client-server API as a Matrix
/// client would: making rooms, inviting, sending messages, replies and reactions, and reading
/// what a room shows.
public struct MatrixTestUser: Sendable {
    public let server: SynapseTestServer
    /// `@ada-1a2b3c4d:localhost`.
    public let user: String
    /// The access token (what a bot is configured with: `MATRIX_ACCESS_TOKEN`).
    public let token: String

    /// Makes a room with `invite` invited; encrypted rooms announce `m.megolm.v1.aes-sha2`, as
    /// Element's do.
    public func createRoom(invite: [String], encrypted: Bool = false, direct: Bool = false) async throws -> String {
        var body: [String: JSONValue] = ["preset": "private_chat", "invite": .array(invite.map(JSONValue.string))]
        if direct { body["is_direct"] = true }
        if encrypted {
            body["initial_state"] = [["type": "m.room.encryption", "state_key": "", "content": ["algorithm": "m.megolm.v1.aes-sha2"]]]
        }
        let answer = try await call(.POST, "/createRoom", body: .object(body))
        guard let room = answer["room_id"]?.stringValue else { throw MatrixTestError("createRoom: no room_id") }
        return room
    }

    public func join(_ room: String) async throws {
        _ = try await call(.POST, "/join/\(Self.encode(room))", body: [:])
    }

    /// Sends an `m.text` message; its event id. `relatesTo` is put as `m.relates_to` (a reply,
    /// a thread); `mentions`, when given, as `m.mentions.user_ids`.
    @discardableResult
    public func send(
        _ body: String, in room: String, formatted: String? = nil, relatesTo: JSONValue? = nil, mentions: [String]? = nil, type: String = "m.text"
    ) async throws -> String {
        var content: [String: JSONValue] = ["msgtype": .string(type), "body": .string(body)]
        if let formatted {
            content["format"] = "org.matrix.custom.html"
            content["formatted_body"] = .string(formatted)
        }
        if let relatesTo { content["m.relates_to"] = relatesTo }
        if let mentions { content["m.mentions"] = ["user_ids": .array(mentions.map(JSONValue.string))] }
        return try await sendEvent("m.room.message", content: .object(content), in: room)
    }

    /// Uploads `bytes` to the homeserver's media repository (`POST /_matrix/media/v3/upload`),
    /// as a client does before it sends an attachment; the `mxc://` URI.
    public func upload(_ bytes: [UInt8], contentType: String = "audio/ogg", filename: String = "voice-message.ogg") async throws -> String {
        let answer = try await server.request(
            .POST, "/_matrix/media/v3/upload?filename=\(Self.encode(filename))", token: token, bytes: bytes, contentType: contentType)
        guard answer.status == 200, let uri = answer.json?["content_uri"]?.stringValue else {
            throw MatrixTestError("upload: HTTP \(answer.status) \(String(decoding: answer.body.prefix(300), as: UTF8.self))")
        }
        return uri
    }

    /// Sends an `m.audio` message of `url` (`mxc://…`) as Element sends a voice message: the
    /// file's name as `body`, `info` with its type, size and duration in milliseconds (each left
    /// out when nil), and the MSC3245 voice marker. A `caption` goes in `body`, with `filename`
    /// beside it (spec v1.10). `relatesTo` is put as `m.relates_to`.
    @discardableResult
    public func sendAudio(
        _ url: String, in room: String, mimeType: String? = "audio/ogg", size: Int? = nil, durationMS: Int? = 3000, caption: String? = nil,
        relatesTo: JSONValue? = nil
    ) async throws -> String {
        var info: [String: JSONValue] = [:]
        if let mimeType { info["mimetype"] = .string(mimeType) }
        if let size { info["size"] = .int(size) }
        if let durationMS { info["duration"] = .int(durationMS) }
        var content: [String: JSONValue] = [
            "msgtype": "m.audio", "body": .string(caption ?? "Voice message.ogg"), "url": .string(url), "info": .object(info),
            "org.matrix.msc3245.voice": [:], "org.matrix.msc1767.audio": ["duration": .int(durationMS ?? 0)],
        ]
        if caption != nil { content["filename"] = "Voice message.ogg" }
        if let relatesTo { content["m.relates_to"] = relatesTo }
        return try await sendEvent("m.room.message", content: .object(content), in: room)
    }

    /// A reaction (`m.annotation`) with `key` on `event`.
    @discardableResult
    public func react(_ key: String, to event: String, in room: String) async throws -> String {
        try await sendEvent("m.reaction", content: ["m.relates_to": ["rel_type": "m.annotation", "event_id": .string(event), "key": .string(key)]], in: room)
    }

    /// Redacts (deletes) `event`, as a client's "Remove" does: `PUT /rooms/{room}/redact/{event}/{txn}`.
    @discardableResult
    public func redact(_ event: String, in room: String) async throws -> String {
        let answer = try await call(.PUT, "/rooms/\(Self.encode(room))/redact/\(Self.encode(event))/\(UUID().uuidString)", body: [:])
        guard let id = answer["event_id"]?.stringValue else { throw MatrixTestError("redact: no event_id") }
        return id
    }

    public func sendEvent(_ type: String, content: JSONValue, in room: String) async throws -> String {
        let answer = try await call(.PUT, "/rooms/\(Self.encode(room))/send/\(type)/\(UUID().uuidString)", body: content)
        guard let id = answer["event_id"]?.stringValue else { throw MatrixTestError("send: no event_id") }
        return id
    }

    /// The room's latest events, oldest first (what the room shows, edits as their own events).
    public func events(in room: String, limit: Int = 100) async throws -> [JSONValue] {
        let answer = try await call(.GET, "/rooms/\(Self.encode(room))/messages?dir=b&limit=\(limit)")
        return (answer["chunk"]?.arrayValue ?? []).reversed()
    }

    /// The ids of the room's joined members.
    public func members(of room: String) async throws -> [String] {
        let answer = try await call(.GET, "/rooms/\(Self.encode(room))/joined_members")
        return Array((answer["joined"]?.objectValue ?? [:]).keys)
    }

    /// The rooms this user is invited to, from a sync. Synapse keeps an initial sync's answer for
    /// a while: a filter of its own makes each call a new one.
    public func invitations() async throws -> [String] {
        let filter = #"{"presence":{"types":["x.\#(UUID().uuidString)"]},"room":{"timeline":{"limit":1}}}"#
        let answer = try await call(.GET, "/sync?timeout=0&filter=" + Self.encode(filter))
        return Array((answer["rooms"]?["invite"]?.objectValue ?? [:]).keys)
    }

    /// Lowers `user`'s message rate (admin only): sends past it get 429 `M_LIMIT_EXCEEDED`.
    public func limitMessages(of user: String, perSecond: Int, burst: Int) async throws {
        _ = try await server.request(
            .POST, "/_synapse/admin/v1/users/\(Self.encode(user))/override_ratelimit", token: token,
            body: ["messages_per_second": .int(perSecond), "burst_count": .int(burst)])
    }

    /// One client-server call as this user; its JSON, or an error with the status and body.
    public func call(_ method: HTTPMethodName, _ path: String, body: JSONValue? = nil) async throws -> JSONValue {
        let answer = try await server.request(method.nio, "/_matrix/client/v3" + path, token: token, body: body)
        guard answer.status == 200, let json = answer.json else {
            throw MatrixTestError("\(method) \(path): HTTP \(answer.status) \(String(decoding: answer.body.prefix(300), as: UTF8.self))")
        }
        return json
    }

    /// `ada-1a2b` of `@ada-1a2b:localhost`.
    public static func localpart(_ user: String) -> String { String(user.dropFirst().prefix { $0 != ":" }) }

    /// A room or event id as one path segment.
    public static func encode(_ id: String) -> String {
        id.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"))
            ?? id
    }
}

/// The methods the tests use, without making them import NIO.
public enum HTTPMethodName: String, Sendable {
    case GET, POST, PUT
}

public struct MatrixTestError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

extension HTTPMethodName {
    var nio: HTTPMethod {
        switch self {
        case .GET: .GET
        case .POST: .POST
        case .PUT: .PUT
        }
    }
}
