public import RelayCore

/// A room event as the client-server API sends it: in `/sync`'s timelines and state, an
/// invitation's stripped state, `GET /rooms/{room}/event/{id}` and `/relations`. Only what the
/// adapter reads is decoded, each member leniently: an event of a type the bot ignores, or with
/// content it does not understand, reads as such and is left alone, never as a broken batch.
public struct MatrixEvent: Sendable, Hashable, Decodable {
    /// Nil in an invitation's stripped state.
    public var id: String?
    public var sender: String?
    public var type: String?
    public var stateKey: String?
    public var content: MatrixContent
    /// An `m.room.redaction`'s target: top-level `redacts` up to room version 10, `content.redacts`
    /// from version 11.
    public var redacts: String?

    private enum CodingKeys: String, CodingKey {
        case sender, type, content, redacts
        case id = "event_id"
        case stateKey = "state_key"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = container.lenient(String.self, .id)
        sender = container.lenient(String.self, .sender)
        type = container.lenient(String.self, .type)
        stateKey = container.lenient(String.self, .stateKey)
        content = container.lenient(MatrixContent.self, .content) ?? MatrixContent()
        redacts = container.lenient(String.self, .redacts) ?? content.redacts
    }

    /// Its plain text, without its own reply fallback; nil when it has none.
    var text: String? {
        guard let body = content.body else { return nil }
        return content.relation?.hasReplyTo == true ? MatrixText.withoutReplyFallback(body) : body
    }
}

/// An event's `content`, for the kinds the bot reads: `m.room.message` (text, notices, audio and
/// files) and `m.reaction`.
public struct MatrixContent: Sendable, Hashable, Decodable {
    public var msgtype: String?
    public var body: String?
    public var formattedBody: String?
    /// A media message's `mxc://` URI.
    public var url: String?
    /// Whether it has `file` (end-to-end encrypted media) instead of `url`.
    public var hasEncryptedFile = false
    public var filename: String?
    public var info: Info?
    public var relation: Relation?
    /// `m.mentions.user_ids`.
    public var mentionedUsers: [String] = []
    /// An `m.room.redaction`'s target, in room version 11 and later.
    public var redacts: String?

    /// A media message's `info`: what the sender declares (numbers not to be trusted).
    public struct Info: Sendable, Hashable, Decodable {
        public var mimetype: String?
        public var size: Int?
        public var duration: Int?

        private enum CodingKeys: String, CodingKey {
            case mimetype, size, duration
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            mimetype = container.lenient(String.self, .mimetype)
            size = container.lenient(Int.self, .size)
            duration = container.lenient(Int.self, .duration)
        }
    }

    /// `m.relates_to`: a thread, an edit, an annotation (reaction), a reply.
    public struct Relation: Sendable, Hashable, Decodable {
        public var relType: String?
        public var eventID: String?
        /// A reaction's key (the emoji).
        public var key: String?
        public var isFallingBack: Bool?
        /// Whether it has `m.in_reply_to` at all (its body then carries a reply fallback).
        public var hasReplyTo = false
        /// `m.in_reply_to.event_id`.
        public var replyTo: String?

        private enum CodingKeys: String, CodingKey {
            case key
            case relType = "rel_type"
            case eventID = "event_id"
            case isFallingBack = "is_falling_back"
            case inReplyTo = "m.in_reply_to"
        }

        private enum ReplyKeys: String, CodingKey {
            case eventID = "event_id"
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            relType = container.lenient(String.self, .relType)
            eventID = container.lenient(String.self, .eventID)
            key = container.lenient(String.self, .key)
            isFallingBack = container.lenient(Bool.self, .isFallingBack)
            hasReplyTo = container.contains(.inReplyTo) && !((try? container.decodeNil(forKey: .inReplyTo)) ?? false)
            replyTo = (try? container.nestedContainer(keyedBy: ReplyKeys.self, forKey: .inReplyTo))?.lenient(String.self, .eventID)
        }
    }

    private enum CodingKeys: String, CodingKey {
        case msgtype, body, url, file, filename, info, redacts
        case formattedBody = "formatted_body"
        case relation = "m.relates_to"
        case mentions = "m.mentions"
    }

    private enum MentionKeys: String, CodingKey {
        case userIDs = "user_ids"
    }

    public init() {}

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        msgtype = container.lenient(String.self, .msgtype)
        body = container.lenient(String.self, .body)
        formattedBody = container.lenient(String.self, .formattedBody)
        url = container.lenient(String.self, .url)
        hasEncryptedFile = container.contains(.file) && !((try? container.decodeNil(forKey: .file)) ?? false)
        filename = container.lenient(String.self, .filename)
        info = container.lenient(Info.self, .info)
        relation = container.lenient(Relation.self, .relation)
        let mentions = try? container.nestedContainer(keyedBy: MentionKeys.self, forKey: .mentions)
        mentionedUsers = (mentions?.lenient([Lenient<String>].self, .userIDs) ?? []).compactMap(\.value)
        redacts = container.lenient(String.self, .redacts)
    }
}

/// A `/sync` answer, for what the syncer reads: the next position, the rooms the bot is invited
/// to (with their stripped state), and each joined room's timeline and state events. A timeline
/// event that is not even a JSON object is kept as the problem it is, to be dropped and counted.
struct MatrixSyncResponse: Decodable {
    var nextBatch: String
    var invites: [String: [MatrixEvent]] = [:]
    var joined: [String: Joined] = [:]

    struct Joined {
        var timeline: [Result<MatrixEvent, PayloadProblem>]
        var state: [MatrixEvent]
    }

    private enum CodingKeys: String, CodingKey {
        case rooms
        case nextBatch = "next_batch"
    }

    private enum RoomsKeys: String, CodingKey {
        case invite, join
    }

    private struct Invited: Decodable {
        var events: [MatrixEvent]

        private enum CodingKeys: String, CodingKey {
            case inviteState = "invite_state"
        }

        private enum EventsKeys: String, CodingKey {
            case events
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let state = try? container.nestedContainer(keyedBy: EventsKeys.self, forKey: .inviteState)
            events = (state?.lenient([Lenient<MatrixEvent>].self, .events) ?? []).compactMap(\.value)
        }
    }

    private struct RawJoined: Decodable {
        var joined: Joined

        private enum CodingKeys: String, CodingKey {
            case timeline, state
        }

        private enum EventsKeys: String, CodingKey {
            case events
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let timeline = try? container.nestedContainer(keyedBy: EventsKeys.self, forKey: .timeline)
            let state = try? container.nestedContainer(keyedBy: EventsKeys.self, forKey: .state)
            joined = Joined(
                timeline: (timeline?.lenient([Checked].self, .events) ?? []).map(\.event),
                state: (state?.lenient([Lenient<MatrixEvent>].self, .events) ?? []).compactMap(\.value))
        }
    }

    /// A timeline event, or why it could not be read.
    private struct Checked: Decodable {
        var event: Result<MatrixEvent, PayloadProblem>

        init(from decoder: any Decoder) throws {
            do {
                event = .success(try MatrixEvent(from: decoder))
            } catch let error as DecodingError {
                event = .failure(PayloadProblem("Matrix event", PayloadDecoding.describe(error)))
            }
        }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        nextBatch = try container.decode(String.self, forKey: .nextBatch)
        guard let rooms = try? container.nestedContainer(keyedBy: RoomsKeys.self, forKey: .rooms) else { return }
        invites = (rooms.lenient([String: Lenient<Invited>].self, .invite) ?? [:]).compactMapValues { $0.value?.events }
        joined = (rooms.lenient([String: Lenient<RawJoined>].self, .join) ?? [:]).compactMapValues { $0.value?.joined }
    }
}
