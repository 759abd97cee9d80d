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
    /// The command line as typed (`/translate fr Good morning`): what history keeps and "run
    /// again" sends; the run executes `command`, read from it once.
    public private(set) var text: String
    /// `text` read as a command where the event was made, as the adapter received it
    /// (`CommandParser.read`); stored with the event, so admission and the run never read the
    /// text again.
    public private(set) var command: ParsedCommand
    /// Text of the message this one replies to, if any.
    public var repliedTo: String?
    /// Texts of the thread's messages, oldest first, when the adapter fetched them.
    public var threadMessages: [String]
    /// The platform's key for dedupe (Slack `event_id`, Telegram `update_id`…).
    public var eventKey: String?
    /// The adapter knows already that the user administers the team (Discord's permissions in
    /// the interaction, a private chat, the terminal's operator): nothing more is asked.
    /// Otherwise the run asks (`TeamRoles`) when the command needs an admin.
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
    /// The platform's id of the message that carried the command (a Matrix event id, a Slack
    /// `channel/ts`, a Discord or Mattermost message id), where the platform tells the bot when
    /// that message is deleted: a command withdrawn so before its answer is posted is not
    /// answered (`RelayInbox.withdraw`). Nil where no deletion can be seen (a slash command,
    /// Telegram, a button).
    public var sourceMessage: String?
    /// The people the message names by the platform's mention markup (`MentionedUser`), in order.
    public var mentions: [MentionedUser]
    /// What admission decided of the team's budget (`BudgetHold`): set from the inbox item,
    /// never stored with the event.
    public var budget: BudgetAdmission = .unchecked

    public init(
        platform: String, team: String, channel: String, thread: String? = nil, user: String,
        userName: String? = nil, text: String, repliedTo: String? = nil, threadMessages: [String] = [],
        eventKey: String? = nil, isAdmin: Bool = false, isExternal: Bool = false, voice: VoiceClip? = nil, unreadableReply: String? = nil,
        sourceMessage: String? = nil, mentions: [MentionedUser] = []
    ) {
        self.init(
            platform: platform, team: team, channel: channel, thread: thread, user: user, userName: userName, text: text,
            command: CommandParser.read(text), repliedTo: repliedTo, threadMessages: threadMessages, eventKey: eventKey, isAdmin: isAdmin,
            isExternal: isExternal, voice: voice, unreadableReply: unreadableReply, sourceMessage: sourceMessage, mentions: mentions)
    }

    private init(
        platform: String, team: String, channel: String, thread: String?, user: String, userName: String?, text: String,
        command: ParsedCommand, repliedTo: String?, threadMessages: [String], eventKey: String?, isAdmin: Bool, isExternal: Bool,
        voice: VoiceClip?, unreadableReply: String?, sourceMessage: String?, mentions: [MentionedUser]
    ) {
        self.platform = platform
        self.team = team
        self.channel = channel
        self.thread = thread
        self.user = user
        self.userName = userName ?? user
        self.text = text
        self.command = command
        self.repliedTo = repliedTo
        self.threadMessages = threadMessages
        self.eventKey = eventKey
        self.isAdmin = isAdmin
        self.isExternal = isExternal
        self.voice = voice
        self.unreadableReply = unreadableReply
        self.sourceMessage = sourceMessage
        self.mentions = mentions
    }

    /// The event as if `line` had been typed: for a voice note without a command, the command
    /// the settings give it (`VoiceAction`), already typed.
    public mutating func replaceCommand(_ command: Command, line: String) {
        text = line
        self.command = .command(command)
    }

    /// The whole thread as one text, or nil when there is none.
    public var threadText: String? {
        threadMessages.isEmpty ? nil : threadMessages.joined(separator: "\n")
    }
}

extension Event {
    private enum CodingKeys: String, CodingKey {
        case platform, team, channel, thread, user, userName, text, command, repliedTo, threadMessages, eventKey, isAdmin, isExternal, voice, unreadableReply,
            sourceMessage, mentions
    }

    // Written by hand so that events parked by an older relay, without the later fields, still
    // decode (a missing `isExternal` is a member of the team, as it was then; a missing `voice`
    // is a text message; a missing `command` is read from the text, which then happens here
    // rather than where the event arrived).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let text = try container.decode(String.self, forKey: .text)
        self.init(
            platform: try container.decode(String.self, forKey: .platform), team: try container.decode(String.self, forKey: .team),
            channel: try container.decode(String.self, forKey: .channel), thread: try container.decodeIfPresent(String.self, forKey: .thread),
            user: try container.decode(String.self, forKey: .user), userName: try container.decodeIfPresent(String.self, forKey: .userName),
            text: text, command: try container.decodeIfPresent(ParsedCommand.self, forKey: .command) ?? CommandParser.read(text),
            repliedTo: try container.decodeIfPresent(String.self, forKey: .repliedTo),
            threadMessages: try container.decodeIfPresent([String].self, forKey: .threadMessages) ?? [],
            eventKey: try container.decodeIfPresent(String.self, forKey: .eventKey),
            isAdmin: try container.decodeIfPresent(Bool.self, forKey: .isAdmin) ?? false,
            isExternal: try container.decodeIfPresent(Bool.self, forKey: .isExternal) ?? false,
            voice: try container.decodeIfPresent(VoiceClip.self, forKey: .voice),
            unreadableReply: try container.decodeIfPresent(String.self, forKey: .unreadableReply),
            sourceMessage: try container.decodeIfPresent(String.self, forKey: .sourceMessage),
            mentions: try container.decodeIfPresent([MentionedUser].self, forKey: .mentions) ?? [])
    }
}
