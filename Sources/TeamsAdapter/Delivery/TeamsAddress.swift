public import Foundation
public import RelayPipeline

/// Where a Teams reply goes, as stored in the outbox (`OutboxEntry.address`, JSON).
public struct TeamsAddress: Sendable, Hashable, Codable {
    /// The tenant of the relay's settings: the Teams team (`channelData.team.id`), else the
    /// group chat's conversation, else the person (`dm:<user>`) in a personal chat.
    public var team: String
    /// The Bot Connector's base URL for this conversation (the activity's `serviceUrl`).
    public var serviceURL: String
    /// The conversation (a channel's thread, a group or personal chat).
    public var conversation: String
    /// The activity the reply answers (the command's message), so it lands in its thread.
    public var replyTo: String?
    /// Who asked (`29:…`): a private reply goes to their personal chat with the bot.
    public var user: String
    /// The Microsoft Entra tenant, for a personal chat the bot starts.
    public var tenant: String?
    /// The bot's own account in this conversation (`28:<app id>`).
    public var bot: String?
    /// The conversation is the asker's personal chat with the bot: everything is private there.
    public var isPersonal: Bool

    public init(
        team: String, serviceURL: String, conversation: String, replyTo: String?, user: String, tenant: String?, bot: String?, isPersonal: Bool
    ) {
        self.team = team
        self.serviceURL = serviceURL
        self.conversation = conversation
        self.replyTo = replyTo
        self.user = user
        self.tenant = tenant
        self.bot = bot
        self.isPersonal = isPersonal
    }

    /// The outbox's ordering and pacing key: one conversation's messages go in order.
    public var conversationKey: String { "teams:\(conversation)" }

    public var route: ReplyRoute {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return ReplyRoute(platform: TeamsPlatform.name, conversation: conversationKey, address: json)
    }

    public static func decode(_ address: String) -> TeamsAddress? {
        try? JSONDecoder().decode(TeamsAddress.self, from: Data(address.utf8))
    }
}

/// A message the bot posted, as the outbox keeps it (`OutboxEntry.platformRef`, JSON): its
/// conversation and activity id, which an update needs both of.
public struct TeamsMessageRef: Sendable, Hashable, Codable {
    public var conversation: String
    public var activity: String

    public init(conversation: String, activity: String) {
        self.conversation = conversation
        self.activity = activity
    }

    public var encoded: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    public static func decode(_ ref: String) -> TeamsMessageRef? {
        try? JSONDecoder().decode(TeamsMessageRef.self, from: Data(ref.utf8))
    }
}
