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

    public init(
        platform: String, team: String, channel: String, thread: String? = nil, user: String,
        userName: String? = nil, text: String, repliedTo: String? = nil, threadMessages: [String] = [],
        eventKey: String? = nil, isAdmin: Bool = false
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
    }

    /// The whole thread as one text, or nil when there is none.
    public var threadText: String? {
        threadMessages.isEmpty ? nil : threadMessages.joined(separator: "\n")
    }
}
