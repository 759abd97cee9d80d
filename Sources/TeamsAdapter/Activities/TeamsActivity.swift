public import RelayCore

/// An activity as the Bot Connector POSTs it to the bot (Bot Framework REST API, `Activity`):
/// only the fields the relay reads. What it cannot act without is required — `type`,
/// `serviceUrl`, `channelId`, `from.id` and `conversation.id` — so an activity without one is a
/// 400 naming the field; the rest is optional, as Teams leaves out what does not apply.
public struct TeamsActivity: Decodable, Sendable, Hashable {
    /// `message`, `invoke` (a message action, a card's `Action.Execute`), `conversationUpdate`…
    public var type: String
    public var id: String?
    /// Where replies to this conversation go: `https://smba.trafficmanager.net/amer/`. It must be
    /// the one the token names (`serviceurl`).
    public var serviceURL: String
    /// `msteams` from Teams; the signing key must be endorsed for it.
    public var channelID: String
    public var from: TeamsAccount
    public var conversation: TeamsConversation
    public var recipient: TeamsAccount?
    /// The message as typed, mentions as `<at>Name</at>`; HTML when Teams sends rich text.
    public var text: String?
    public var textFormat: String?
    /// The message this one replies to (a card's button press names the card's message).
    public var replyToID: String?
    /// An invoke's name: `composeExtension/submitAction` for a message action.
    public var name: String?
    /// An invoke's value, or a card's `Action.Submit` data.
    public var value: TeamsActionValue?
    public var entities: [TeamsEntity]?
    public var channelData: TeamsChannelData?

    enum CodingKeys: String, CodingKey {
        case type, id, from, conversation, recipient, text, textFormat, name, value, entities, channelData
        case serviceURL = "serviceUrl"
        case channelID = "channelId"
        case replyToID = "replyToId"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = try container.decode(String.self, forKey: .type)
        id = container.lenient(String.self, .id)
        serviceURL = try container.decode(String.self, forKey: .serviceURL)
        channelID = try container.decode(String.self, forKey: .channelID)
        from = try container.decode(TeamsAccount.self, forKey: .from)
        conversation = try container.decode(TeamsConversation.self, forKey: .conversation)
        recipient = container.lenient(TeamsAccount.self, .recipient)
        text = container.lenient(String.self, .text)
        textFormat = container.lenient(String.self, .textFormat)
        replyToID = container.lenient(String.self, .replyToID)
        name = container.lenient(String.self, .name)
        value = container.lenient(TeamsActionValue.self, .value)
        entities = container.lenient([TeamsEntity].self, .entities)
        channelData = container.lenient(TeamsChannelData.self, .channelData)
    }

    /// The tenant (`conversation.tenantId`, else `channelData.tenant.id`), when Teams names one.
    public var tenantID: String? { conversation.tenantID ?? channelData?.tenant?.id }

    /// Whether the conversation is a one-to-one chat with the bot.
    public var isPersonal: Bool { conversation.conversationType == "personal" }
}

/// A user or the bot: `29:…` for a user, `28:<app id>` for a bot.
public struct TeamsAccount: Codable, Sendable, Hashable {
    public var id: String
    public var name: String?
    /// The user's Microsoft Entra object id, the same in every conversation.
    public var aadObjectID: String?

    enum CodingKeys: String, CodingKey {
        case id, name
        case aadObjectID = "aadObjectId"
    }

    public init(id: String, name: String? = nil, aadObjectID: String? = nil) {
        self.id = id
        self.name = name
        self.aadObjectID = aadObjectID
    }
}

/// The conversation: a channel (its thread: `19:…@thread.tacv2;messageid=…`), a group chat or
/// a personal chat.
public struct TeamsConversation: Decodable, Sendable, Hashable {
    public var id: String
    /// `channel`, `groupChat` or `personal`.
    public var conversationType: String?
    public var tenantID: String?
    public var isGroup: Bool?

    enum CodingKeys: String, CodingKey {
        case id, conversationType, isGroup
        case tenantID = "tenantId"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        conversationType = container.lenient(String.self, .conversationType)
        tenantID = container.lenient(String.self, .tenantID)
        isGroup = container.lenient(Bool.self, .isGroup)
    }
}

/// An entity of a message; the relay reads mentions (`type` `mention`, whom, and the `<at>` text).
public struct TeamsEntity: Decodable, Sendable, Hashable {
    public var type: String?
    public var mentioned: TeamsAccount?
    public var text: String?
}

/// Teams' own data on an activity: the team and channel of a channel message, the tenant.
public struct TeamsChannelData: Decodable, Sendable, Hashable {
    public struct Reference: Decodable, Sendable, Hashable {
        public var id: String?
        public var name: String?
    }

    public var team: Reference?
    public var channel: Reference?
    public var tenant: Reference?
}

/// What an invoke or a card's button carries: the relay's own buttons (`rhea`: the action, with
/// its `line` or `entry`), or a message action (`commandId`, with the message it was run on).
public struct TeamsActionValue: Decodable, Sendable, Hashable {
    /// The relay's button: `runAgain` or `postToChannel`.
    public var rhea: String?
    /// `runAgain`'s command line.
    public var line: String?
    /// `postToChannel`'s private result (an outbox entry id).
    public var entry: String?
    /// A message action's command (`factCheck`).
    public var commandID: String?
    /// `message` when a message action was run on a message.
    public var commandContext: String?
    public var messagePayload: TeamsMessagePayload?

    enum CodingKeys: String, CodingKey {
        case rhea, line, entry, commandContext, messagePayload
        case commandID = "commandId"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        rhea = container.lenient(String.self, .rhea)
        line = container.lenient(String.self, .line)
        entry = container.lenient(String.self, .entry)
        commandID = container.lenient(String.self, .commandID)
        commandContext = container.lenient(String.self, .commandContext)
        messagePayload = container.lenient(TeamsMessagePayload.self, .messagePayload)
    }
}

/// The message a message action was run on.
public struct TeamsMessagePayload: Decodable, Sendable, Hashable {
    public struct Body: Decodable, Sendable, Hashable {
        /// `html` or `text`.
        public var contentType: String?
        public var content: String?
    }

    public struct Sender: Decodable, Sendable, Hashable {
        public struct User: Decodable, Sendable, Hashable {
            public var id: String?
            public var displayName: String?
        }

        public var user: User?
    }

    public var id: String?
    public var body: Body?
    public var from: Sender?
}
