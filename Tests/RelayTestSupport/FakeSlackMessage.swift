public import RelayCore

/// A message `FakeSlackWebAPI` holds: posted with `chat.postMessage` or `chat.postEphemeral`,
/// perhaps changed since with `chat.update`.
public struct FakeSlackMessage: Sendable, Hashable {
    public var channel: String
    public var ts: String
    /// The text as stored, cut at 40 000 characters like Slack does.
    public var text: String
    public var blocks: JSONValue?
    public var threadTS: String?
    /// The user who alone sees it, for an ephemeral message.
    public var ephemeralUser: String?
    /// How many times `chat.update` changed it.
    public var updates: Int
    /// Who wrote it: the bot for what it posted, a person for what a test seeds.
    public var user: String?
    /// Files shared with it (`files`, as Slack returns them), for a seeded message.
    public var files: JSONValue?

    public init(
        channel: String, ts: String, text: String, blocks: JSONValue? = nil, threadTS: String? = nil,
        ephemeralUser: String? = nil, updates: Int = 0, user: String? = nil, files: JSONValue? = nil
    ) {
        self.channel = channel
        self.ts = ts
        self.text = text
        self.blocks = blocks
        self.threadTS = threadTS
        self.ephemeralUser = ephemeralUser
        self.updates = updates
        self.user = user
        self.files = files
    }
}

/// A message a `response_url` post left for people to see, as `FakeSlackWebAPI` keeps it.
public struct FakeSlackResponseMessage: Sendable, Hashable {
    public var text: String
    public var blocks: JSONValue?
    /// Only the person who ran the command sees it (`response_type` other than `in_channel`).
    public var isEphemeral: Bool
    /// How many later posts replaced it in place (`replace_original`).
    public var replacements: Int

    public init(text: String, blocks: JSONValue? = nil, isEphemeral: Bool, replacements: Int = 0) {
        self.text = text
        self.blocks = blocks
        self.isEphemeral = isEphemeral
        self.replacements = replacements
    }
}
