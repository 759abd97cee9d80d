public import RelayCore

/// A body POSTed to the Events API request URL (or an `events_api` Socket Mode payload).
public enum SlackEventsRequest: Sendable, Hashable {
    /// The set-up handshake: answer 200 with `{"challenge": …}` (see `SlackAck.challenge`).
    case urlVerification(challenge: String)
    /// An event the app subscribed to.
    case eventCallback(SlackEventCallback)
    /// Any other envelope (`app_rate_limited`…): acknowledge it and do nothing.
    case other(type: String)

    /// Decodes the raw JSON body; tolerant of fields it does not use.
    public static func decode(_ body: some Collection<UInt8>) throws(SlackPayloadError) -> SlackEventsRequest {
        let raw = try SlackPayloadDecoding.json(RawEventsBody.self, from: body, as: .events)
        switch raw.type {
        case "url_verification":
            guard let challenge = raw.challenge, !challenge.isEmpty else { throw missing("challenge") }
            return .urlVerification(challenge: challenge)
        case "event_callback":
            guard let eventID = raw.eventID, !eventID.isEmpty else { throw missing("event_id") }
            guard let event = raw.event else { throw missing("event") }
            // The tenant is the installation the event is delivered for: `authorizations` names it
            // even in a channel shared with another organisation, where the top-level team may be
            // the other side's. Org-wide installs may leave the top-level team out; the event
            // still names it.
            guard let teamID = raw.authorizations?.first?.teamID ?? raw.teamID ?? event.team else { throw missing("team_id") }
            let botUserID = raw.authorizations?.first { $0.isBot == true }?.userID
            var callback = SlackEventCallback(eventID: eventID, teamID: teamID, apiAppID: raw.apiAppID, botUserID: botUserID, event: try SlackEvent(event))
            // The author's own workspace (`user_team`), or the message's team when only that is sent.
            callback.userTeamID = event.userTeam ?? event.team
            callback.enterpriseID = raw.authorizations?.first?.enterpriseID ?? raw.enterpriseID
            return .eventCallback(callback)
        default:
            return .other(type: raw.type)
        }
    }

    static func missing(_ field: String) -> SlackPayloadError {
        SlackPayloadError(.events, "missing field `\(field)`")
    }
}

/// One `event_callback`: the event and the envelope fields the relay needs.
public struct SlackEventCallback: Sendable, Hashable {
    /// Identical across Slack's retries of one delivery: the dedupe key.
    public var eventID: String
    /// The workspace the app is installed in.
    public var teamID: String
    public var apiAppID: String?
    /// The app's bot user, from `authorizations`, when Slack sent it.
    public var botUserID: String?
    public var event: SlackEvent
    /// The workspace of the user who caused the event (`event.user_team`), when Slack says: in a
    /// channel shared with another organisation it may differ from `teamID`.
    public var userTeamID: String?
    /// The installation's enterprise (org) id, when it is part of one.
    public var enterpriseID: String?

    public init(eventID: String, teamID: String, apiAppID: String? = nil, botUserID: String? = nil, event: SlackEvent) {
        self.eventID = eventID
        self.teamID = teamID
        self.apiAppID = apiAppID
        self.botUserID = botUserID
        self.event = event
    }
}

/// The events the adapter acts on; everything else is `ignored`, with the reason for the log.
public enum SlackEvent: Sendable, Hashable {
    /// `app_mention`: someone wrote `@bot …` in a channel.
    case mention(SlackMessageEvent)
    /// `message` with `channel_type: "im"`: a direct message to the bot.
    case directMessage(SlackMessageEvent)
    /// `reaction_added` on a message.
    case reactionAdded(SlackReactionEvent)
    /// `message` with subtype `message_deleted`: a message deleted in a direct message with the
    /// bot (`ts` is the deleted message's). A channel's deletions reach only an app subscribed to
    /// every message there, which the relay is not: a deleted mention is still answered.
    case deleted(channel: String, ts: String)
    /// Bot messages (so the bot never answers itself or another bot), edits and other subtypes,
    /// channel messages, reactions on files, unsubscribed types.
    case ignored(type: String, reason: String)
}

/// A message addressed to the bot: a mention or a direct message.
public struct SlackMessageEvent: Sendable, Hashable {
    public var user: String
    /// As Slack sent it: escaped, with its `<…>` markup (see `SlackIncomingText`).
    public var text: String
    public var channel: String
    /// The message's own id.
    public var ts: String
    /// The thread's parent when the message was posted in a thread.
    public var threadTS: String?
    /// `channel`, `group`, `im`, `mpim`, when Slack says.
    public var channelType: String?
    /// The first audio file shared with the message (`files`), as a clip whose reference is its
    /// `url_private_download` (fetched with the bot token, from the configured file host only).
    public var voice: VoiceClip?

    public init(
        user: String, text: String, channel: String, ts: String, threadTS: String? = nil, channelType: String? = nil, voice: VoiceClip? = nil
    ) {
        self.user = user
        self.text = text
        self.channel = channel
        self.ts = ts
        self.threadTS = threadTS
        self.channelType = channelType
        self.voice = voice
    }
}

/// An emoji reaction put on a message.
public struct SlackReactionEvent: Sendable, Hashable {
    /// Who reacted.
    public var user: String
    /// The emoji name without colons (`mag`, `thumbsup::skin-tone-2`).
    public var reaction: String
    /// Where the message is.
    public var channel: String
    /// The message reacted to.
    public var messageTS: String
    /// Who wrote that message, when Slack says.
    public var itemUser: String?

    public init(user: String, reaction: String, channel: String, messageTS: String, itemUser: String? = nil) {
        self.user = user
        self.reaction = reaction
        self.channel = channel
        self.messageTS = messageTS
        self.itemUser = itemUser
    }

    /// Whether this is the reaction `name` (without colons), whatever its skin tone.
    public func isReaction(_ name: String) -> Bool {
        let base = reaction.split(separator: "::", maxSplits: 1).first.map(String.init) ?? reaction
        return base == name
    }
}

extension SlackEvent {
    init(_ raw: RawEventsBody.Event) throws(SlackPayloadError) {
        func required(_ value: String?, _ field: String) throws(SlackPayloadError) -> String {
            guard let value, !value.isEmpty else { throw SlackEventsRequest.missing("event.\(field)") }
            return value
        }
        switch raw.type {
        case "app_mention", "message":
            let isMention = raw.type == "app_mention"
            if raw.type == "message", raw.subtype == "message_deleted" {
                self = .deleted(channel: try required(raw.channel, "channel"), ts: try required(raw.deletedTS, "deleted_ts"))
                return
            }
            if raw.botID != nil || raw.subtype == "bot_message" {
                self = .ignored(type: raw.type, reason: "posted by a bot")
                return
            }
            // A file shared with the message is `file_share`: read when it is audio, for its words.
            let voice = raw.audioClip
            if let subtype = raw.subtype, !(subtype == "file_share" && voice != nil) {
                self = .ignored(type: raw.type, reason: "message subtype \(subtype)")
                return
            }
            let isDirect = raw.channelType == "im" || raw.channel?.hasPrefix("D") == true
            if isMention && isDirect {
                // A mention in a DM also arrives as `message.im`; answering both would answer twice.
                self = .ignored(type: raw.type, reason: "a mention in a direct message, answered as the direct message")
                return
            }
            if !isMention && raw.channelType != "im" {
                self = .ignored(type: raw.type, reason: "not a direct message (channel_type \(raw.channelType ?? "absent"))")
                return
            }
            let message = SlackMessageEvent(
                user: try required(raw.user, "user"), text: raw.text ?? "", channel: try required(raw.channel, "channel"),
                ts: try required(raw.ts, "ts"), threadTS: raw.threadTS, channelType: raw.channelType, voice: voice)
            self = isMention ? .mention(message) : .directMessage(message)
        case "reaction_added":
            guard let item = raw.item else { throw SlackEventsRequest.missing("event.item") }
            guard item.type == "message" else {
                self = .ignored(type: raw.type, reason: "a reaction on a \(item.type ?? "thing without a type"), not a message")
                return
            }
            self = .reactionAdded(
                SlackReactionEvent(
                    user: try required(raw.user, "user"), reaction: try required(raw.reaction, "reaction"),
                    channel: try required(item.channel, "item.channel"), messageTS: try required(item.ts, "item.ts"),
                    itemUser: raw.itemUser))
        default:
            self = .ignored(type: raw.type, reason: "not an event the relay handles")
        }
    }
}

/// The JSON as Slack sends it, every field the adapter reads and nothing else.
struct RawEventsBody: Decodable {
    struct Event: Decodable {
        struct Item: Decodable {
            var type: String?
            var channel: String?
            var ts: String?
        }

        var type: String
        var subtype: String?
        var user: String?
        var botID: String?
        var text: String?
        var channel: String?
        var channelType: String?
        var ts: String?
        var threadTS: String?
        /// A `message_deleted` event's deleted message.
        var deletedTS: String?
        var team: String?
        var userTeam: String?
        var reaction: String?
        var item: Item?
        var itemUser: String?
        var files: [SlackFile]?

        /// The first audio file, as a clip.
        var audioClip: VoiceClip? { SlackFile.audioClip(in: files ?? [], origin: .own) }

        enum CodingKeys: String, CodingKey {
            case type, subtype, user
            case botID = "bot_id"
            case text, channel
            case channelType = "channel_type"
            case ts
            case threadTS = "thread_ts"
            case deletedTS = "deleted_ts"
            case team, reaction, item
            case userTeam = "user_team"
            case itemUser = "item_user"
            case files
        }

        /// The types read in full; other events may give the same fields other shapes (a
        /// `team_join`'s `user` is an object), so only their type is read.
        static let handledTypes: Set<String> = ["app_mention", "message", "reaction_added"]

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            type = try container.decode(String.self, forKey: .type)
            guard Self.handledTypes.contains(type) else { return }
            subtype = try container.decodeIfPresent(String.self, forKey: .subtype)
            user = try container.decodeIfPresent(String.self, forKey: .user)
            botID = try container.decodeIfPresent(String.self, forKey: .botID)
            text = try container.decodeIfPresent(String.self, forKey: .text)
            channel = try container.decodeIfPresent(String.self, forKey: .channel)
            channelType = try container.decodeIfPresent(String.self, forKey: .channelType)
            ts = try container.decodeIfPresent(String.self, forKey: .ts)
            threadTS = try container.decodeIfPresent(String.self, forKey: .threadTS)
            deletedTS = try container.decodeIfPresent(String.self, forKey: .deletedTS)
            team = try container.decodeIfPresent(String.self, forKey: .team)
            userTeam = try container.decodeIfPresent(String.self, forKey: .userTeam)
            reaction = try container.decodeIfPresent(String.self, forKey: .reaction)
            item = try container.decodeIfPresent(Item.self, forKey: .item)
            itemUser = try container.decodeIfPresent(String.self, forKey: .itemUser)
            // A file of an unexpected shape costs only its voice clip, never the event.
            files = (try? container.decodeIfPresent([SlackFile].self, forKey: .files)) ?? nil
        }
    }

    struct Authorization: Decodable {
        var userID: String?
        var isBot: Bool?
        var teamID: String?
        var enterpriseID: String?

        enum CodingKeys: String, CodingKey {
            case userID = "user_id"
            case isBot = "is_bot"
            case teamID = "team_id"
            case enterpriseID = "enterprise_id"
        }
    }

    var type: String
    var challenge: String?
    var eventID: String?
    var teamID: String?
    var enterpriseID: String?
    var apiAppID: String?
    var event: Event?
    var authorizations: [Authorization]?

    enum CodingKeys: String, CodingKey {
        case type, challenge
        case eventID = "event_id"
        case teamID = "team_id"
        case enterpriseID = "enterprise_id"
        case apiAppID = "api_app_id"
        case event, authorizations
    }
}

/// A file shared with a message (an event's or a `conversations.replies` message's `files`);
/// only what a voice clip needs.
struct SlackFile: Decodable {
    var mimetype: String?
    var size: Int?
    var urlPrivateDownload: String?
    var urlPrivate: String?
    var durationMS: Int?

    enum CodingKeys: String, CodingKey {
        case mimetype, size
        case urlPrivateDownload = "url_private_download"
        case urlPrivate = "url_private"
        case durationMS = "duration_ms"
    }

    /// The first audio file of `files`, as a clip. Declared numbers come from outside: only
    /// sane ones are kept.
    static func audioClip(in files: [SlackFile], origin: VoiceClip.Origin) -> VoiceClip? {
        for file in files where file.mimetype?.hasPrefix("audio/") == true {
            guard let url = file.urlPrivateDownload ?? file.urlPrivate else { continue }
            let size = UntrustedNumber.checked(file.size, in: 0...(4 << 30), source: "slack", field: "size")
            let milliseconds = UntrustedNumber.checked(file.durationMS, in: 0...(7 * 24 * 3_600_000), source: "slack", field: "duration_ms")
            return VoiceClip(file: url, mimeType: file.mimetype, byteSize: size, duration: milliseconds.map { ($0 + 999) / 1000 }, origin: origin)
        }
        return nil
    }
}
