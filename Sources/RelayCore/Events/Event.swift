/// An inbound message or command, platform-neutral.
public struct Event: Sendable, Hashable, Codable {
    /// Which adapter it came from (`terminal`, `slack`…).
    public var platform: String
    public var team: String
    public var channel: String
    /// The thread it was posted in, if any (platform id).
    public var thread: String?
    public var user: String
    /// How to address the user in templates (`{user}`); defaults to `user`.
    public var userName: String
    /// The command line as typed (`/translate fr Good morning`).
    public var text: String
    /// Text of the message this one replies to, if any.
    public var repliedTo: String?
    /// Texts of the thread's messages, oldest first, when the adapter fetched them.
    public var threadMessages: [String]
    /// The platform's key for dedupe (Slack `event_id`, Telegram `update_id`…).
    public var eventKey: String?
    /// Team admins may change any chain or custom command.
    public var isAdmin: Bool
    /// The user belongs to another workspace or organisation than `team`, the tenant (a guest
    /// in a channel shared across organisations, such as Slack Connect): they may run commands
    /// and the team's chains, but not see or manage what the team keeps (`CommandKind.managesTeamData`).
    public var isExternal: Bool
    /// The voice note the command is to hear (its own, or the replied-to message's); nil for text
    /// alone. Its transcript becomes the command's input where a replied-to message's text would
    /// (`Relay`), once the run fetches and transcribes it.
    public var voice: VoiceClip?
    /// Why the message this command replies to could not be read, as the asker is told it ("I
    /// can't read that message in this room (history visibility)."); nil when there is no such
    /// message or it was read. A command that needed that message's text says this rather than
    /// "reply to a message".
    public var unreadableReply: String?

    public init(
        platform: String, team: String, channel: String, thread: String? = nil, user: String,
        userName: String? = nil, text: String, repliedTo: String? = nil, threadMessages: [String] = [],
        eventKey: String? = nil, isAdmin: Bool = false, isExternal: Bool = false, voice: VoiceClip? = nil, unreadableReply: String? = nil
    ) {
        self.platform = platform
        self.team = team
        self.channel = channel
        self.thread = thread
        self.user = user
        self.userName = userName ?? user
        self.text = text
        self.repliedTo = repliedTo
        self.threadMessages = threadMessages
        self.eventKey = eventKey
        self.isAdmin = isAdmin
        self.isExternal = isExternal
        self.voice = voice
        self.unreadableReply = unreadableReply
    }

    /// The whole thread as one text, or nil when there is none.
    public var threadText: String? {
        threadMessages.isEmpty ? nil : threadMessages.joined(separator: "\n")
    }
}

extension Event {
    private enum CodingKeys: String, CodingKey {
        case platform, team, channel, thread, user, userName, text, repliedTo, threadMessages, eventKey, isAdmin, isExternal, voice, unreadableReply
    }

    // Written by hand so that events parked by an older relay, without the later fields, still
    // decode (a missing `isExternal` is a member of the team, as it was then; a missing `voice`
    // is a text message).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            platform: try container.decode(String.self, forKey: .platform), team: try container.decode(String.self, forKey: .team),
            channel: try container.decode(String.self, forKey: .channel), thread: try container.decodeIfPresent(String.self, forKey: .thread),
            user: try container.decode(String.self, forKey: .user), userName: try container.decodeIfPresent(String.self, forKey: .userName),
            text: try container.decode(String.self, forKey: .text), repliedTo: try container.decodeIfPresent(String.self, forKey: .repliedTo),
            threadMessages: try container.decodeIfPresent([String].self, forKey: .threadMessages) ?? [],
            eventKey: try container.decodeIfPresent(String.self, forKey: .eventKey),
            isAdmin: try container.decodeIfPresent(Bool.self, forKey: .isAdmin) ?? false,
            isExternal: try container.decodeIfPresent(Bool.self, forKey: .isExternal) ?? false,
            voice: try container.decodeIfPresent(VoiceClip.self, forKey: .voice),
            unreadableReply: try container.decodeIfPresent(String.self, forKey: .unreadableReply))
    }
}
