public import RelayCore

/// One websocket connection's life, as a pure state machine: the frames the server sends go in,
/// what to do comes out. `MattermostSocketClient` carries the actions out; this is tested
/// without sockets.
///
/// Connect → send `authentication_challenge` (seq 1) → the server answers `{"status":"OK",
/// "seq_reply":1}` and a `hello` event, in either order → events flow. A `FAIL` reply to the
/// challenge (or an error status) ends the connection as refused; a frame that is not JSON, or
/// an event before authentication, is ignored.
public struct MattermostSocketSession: Sendable {
    public enum State: Sendable, Hashable {
        /// The challenge was sent; waiting for its `OK`.
        case authenticating
        /// `OK` (or `hello`) came: events are the bot's.
        case ready
        /// The token was refused.
        case refused(String)
    }

    /// What the client does with a frame.
    public enum Action: Sendable, Hashable {
        case none
        /// Authenticated: reset the backoff, say so once.
        case ready
        /// Close and reconnect later (after backoff); `reason` for the log, never a token.
        case refused(String)
        /// An event for the bot.
        case event(MattermostSocketEvent)
    }

    public private(set) var state: State = .authenticating

    public init() {}

    /// The first frame to send: the challenge with the bot's token.
    public static func challenge(token: String) -> JSONValue {
        ["seq": 1, "action": "authentication_challenge", "data": ["token": .string(token)]]
    }

    public mutating func receive(_ text: String) -> Action {
        guard let frame = JSONValue.parse(Array(text.utf8)), frame.objectValue != nil else { return .none }
        if let status = frame["status"]?.stringValue {
            guard frame["seq_reply"]?.intValue == 1, state == .authenticating else { return .none }
            if status == "OK" {
                state = .ready
                return .ready
            }
            let reason = frame["error"]?["id"]?.stringValue.map(MattermostClient.sanitized) ?? "authentication failed"
            state = .refused(reason)
            return .refused(reason)
        }
        guard let name = frame["event"]?.stringValue else { return .none }
        if name == "hello" {
            // The server sends hello only to an authenticated connection (it may beat the OK).
            guard state == .authenticating else { return .none }
            state = .ready
            return .ready
        }
        guard state == .ready, let event = MattermostSocketEvent(name: name, frame: frame) else { return .none }
        return .event(event)
    }
}

/// The websocket events the adapter acts on.
public enum MattermostSocketEvent: Sendable, Hashable {
    /// A new post; `channelType` is `D` for a direct message, `O`/`P` for channels, `G` for a group.
    case posted(MattermostPost, channelType: String, teamID: String)
    /// A reaction put on a post.
    case reactionAdded(MattermostReaction)

    /// `data.post` and `data.reaction` are JSON *strings*: decoded twice. Nil for other events
    /// and for ones whose payload cannot be read.
    init?(name: String, frame: JSONValue) {
        let data = frame["data"]
        switch name {
        case "posted":
            guard let raw = data?["post"]?.stringValue, let json = JSONValue.parse(Array(raw.utf8)) else { return nil }
            let post = MattermostPost(json: json)
            guard !post.id.isEmpty, !post.channelID.isEmpty, !post.userID.isEmpty else { return nil }
            let team = data?["team_id"]?.stringValue ?? frame["broadcast"]?["team_id"]?.stringValue ?? ""
            self = .posted(post, channelType: data?["channel_type"]?.stringValue ?? "", teamID: team)
        case "reaction_added":
            guard let raw = data?["reaction"]?.stringValue, let json = JSONValue.parse(Array(raw.utf8)) else { return nil }
            let reaction = MattermostReaction(
                userID: json["user_id"]?.stringValue ?? "", postID: json["post_id"]?.stringValue ?? "", emojiName: json["emoji_name"]?.stringValue ?? "",
                createAt: Int64(json["create_at"]?.intValue ?? 0),
                channelID: json["channel_id"]?.stringValue ?? frame["broadcast"]?["channel_id"]?.stringValue ?? "")
            guard !reaction.userID.isEmpty, !reaction.postID.isEmpty, !reaction.emojiName.isEmpty else { return nil }
            self = .reactionAdded(reaction)
        default:
            return nil
        }
    }
}

/// A reaction, from a `reaction_added` event.
public struct MattermostReaction: Sendable, Hashable {
    public var userID: String
    public var postID: String
    /// The emoji's name without colons (`mag`, `+1`, `thumbsup`).
    public var emojiName: String
    public var createAt: Int64
    public var channelID: String
}
