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
        /// A frame, or the post or reaction in an event, that does not decode: logged and
        /// counted (`PayloadDecoding.dropped`); the connection goes on.
        case dropped(PayloadProblem)
    }

    public private(set) var state: State = .authenticating

    public init() {}

    /// The first frame to send: the challenge with the bot's token.
    public static func challenge(token: String) -> JSONValue {
        ["seq": 1, "action": "authentication_challenge", "data": ["token": .string(token)]]
    }

    public mutating func receive(_ text: String) -> Action {
        let frame: MattermostSocketFrame
        do throws(PayloadProblem) {
            frame = try PayloadDecoding.json(MattermostSocketFrame.self, from: Array(text.utf8), as: "Mattermost websocket frame")
        } catch {
            return .dropped(error)
        }
        if let status = frame.status {
            guard frame.seqReply == 1, state == .authenticating else { return .none }
            if status == "OK" {
                state = .ready
                return .ready
            }
            let reason = frame.errorID.map(MattermostClient.sanitized) ?? "authentication failed"
            state = .refused(reason)
            return .refused(reason)
        }
        guard let name = frame.event else { return .none }
        if name == "hello" {
            // The server sends hello only to an authenticated connection (it may beat the OK).
            guard state == .authenticating else { return .none }
            state = .ready
            return .ready
        }
        guard state == .ready else { return .none }
        switch MattermostSocketEvent.read(name: name, frame: frame) {
        case .success(let event?): return .event(event)
        case .success(nil): return .none
        case .failure(let problem): return .dropped(problem)
        }
    }
}

/// A websocket frame as Mattermost sends it: a reply to the challenge (`status`, `seq_reply`,
/// `error.id`) or an event (`event`, `data`, `broadcast`). Members of another shape are read as
/// absent; only a frame that is not a JSON object does not decode.
struct MattermostSocketFrame: Decodable {
    var status: String?
    var seqReply: Int?
    var errorID: String?
    var event: String?
    /// `data.post` and `data.reaction` are JSON *strings*, decoded in their turn.
    var post: String?
    var reaction: String?
    var channelType: String?
    var teamID: String?
    var broadcastTeamID: String?
    var broadcastChannelID: String?

    private enum CodingKeys: String, CodingKey {
        case status, error, event, data, broadcast
        case seqReply = "seq_reply"
    }

    private enum NestedKeys: String, CodingKey {
        case id, post, reaction
        case channelType = "channel_type"
        case teamID = "team_id"
        case channelID = "channel_id"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        status = container.lenient(String.self, .status)
        seqReply = container.lenient(Int.self, .seqReply)
        event = container.lenient(String.self, .event)
        if let error = try? container.nestedContainer(keyedBy: NestedKeys.self, forKey: .error) {
            errorID = error.lenient(String.self, .id)
        }
        if let data = try? container.nestedContainer(keyedBy: NestedKeys.self, forKey: .data) {
            post = data.lenient(String.self, .post)
            reaction = data.lenient(String.self, .reaction)
            channelType = data.lenient(String.self, .channelType)
            teamID = data.lenient(String.self, .teamID)
        }
        if let broadcast = try? container.nestedContainer(keyedBy: NestedKeys.self, forKey: .broadcast) {
            broadcastTeamID = broadcast.lenient(String.self, .teamID)
            broadcastChannelID = broadcast.lenient(String.self, .channelID)
        }
    }
}

/// The websocket events the adapter acts on.
public enum MattermostSocketEvent: Sendable, Hashable {
    /// A new post; `channelType` is `D` for a direct message, `O`/`P` for channels, `G` for a group.
    case posted(MattermostPost, channelType: String, teamID: String)
    /// A reaction put on a post.
    case reactionAdded(MattermostReaction)
    /// A post deleted (`post_deleted`): a command in it not yet answered is withdrawn.
    case postDeleted(postID: String)

    /// The event `name` in `frame`: nil for events the adapter does not act on and for posts or
    /// reactions without the ids it needs; a failure when the post or reaction is not JSON.
    static func read(name: String, frame: MattermostSocketFrame) -> Result<MattermostSocketEvent?, PayloadProblem> {
        do throws(PayloadProblem) {
            switch name {
            case "posted":
                guard let raw = frame.post else { return .failure(PayloadProblem("Mattermost posted event", "missing field `data.post`")) }
                let post = try PayloadDecoding.json(MattermostPost.self, from: Array(raw.utf8), as: "Mattermost post")
                guard !post.id.isEmpty, !post.channelID.isEmpty, !post.userID.isEmpty else { return .success(nil) }
                return .success(.posted(post, channelType: frame.channelType ?? "", teamID: frame.teamID ?? frame.broadcastTeamID ?? ""))
            case "post_deleted":
                guard let raw = frame.post else { return .failure(PayloadProblem("Mattermost post_deleted event", "missing field `data.post`")) }
                let post = try PayloadDecoding.json(MattermostPost.self, from: Array(raw.utf8), as: "Mattermost post")
                return .success(post.id.isEmpty ? nil : .postDeleted(postID: post.id))
            case "reaction_added":
                guard let raw = frame.reaction else {
                    return .failure(PayloadProblem("Mattermost reaction_added event", "missing field `data.reaction`"))
                }
                let read = try PayloadDecoding.json(MattermostReactionPayload.self, from: Array(raw.utf8), as: "Mattermost reaction")
                let reaction = MattermostReaction(
                    userID: read.userID ?? "", postID: read.postID ?? "", emojiName: read.emojiName ?? "", createAt: read.createAt ?? 0,
                    channelID: read.channelID ?? frame.broadcastChannelID ?? "")
                guard !reaction.userID.isEmpty, !reaction.postID.isEmpty, !reaction.emojiName.isEmpty else { return .success(nil) }
                return .success(.reactionAdded(reaction))
            default:
                return .success(nil)
            }
        } catch {
            return .failure(error)
        }
    }
}

/// `data.reaction`, once decoded from its string.
struct MattermostReactionPayload: Decodable {
    var userID: String?
    var postID: String?
    var emojiName: String?
    var createAt: Int64?
    var channelID: String?

    private enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case postID = "post_id"
        case emojiName = "emoji_name"
        case createAt = "create_at"
        case channelID = "channel_id"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        userID = container.lenient(String.self, .userID)
        postID = container.lenient(String.self, .postID)
        emojiName = container.lenient(String.self, .emojiName)
        createAt = container.lenient(Int64.self, .createAt)
        channelID = container.lenient(String.self, .channelID)
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
