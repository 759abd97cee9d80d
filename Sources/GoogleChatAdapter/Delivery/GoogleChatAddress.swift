import Foundation
public import RelayPipeline

/// Where a Google Chat reply goes, as stored in the outbox (`OutboxEntry.address`, JSON).
public struct GoogleChatAddress: Sendable, Hashable, Codable {
    /// The tenant of the relay's settings: the space, or the person (`dm:<user>`) in a direct
    /// message with the app.
    public var team: String
    /// `spaces/…`.
    public var space: String
    /// `spaces/…/threads/…`: the command's thread, where the answer goes.
    public var thread: String?
    /// Who asked (`users/…`): a private reply is shown to them alone.
    public var user: String
    /// A direct message with the app: everything there is private already.
    public var isDirect: Bool
    /// The event whose HTTP answer may carry the reply (`GoogleChatEventAnswers`), while its
    /// request waits on this replica.
    public var eventSlot: String?

    public init(team: String, space: String, thread: String?, user: String, isDirect: Bool, eventSlot: String?) {
        self.team = team
        self.space = space
        self.thread = thread
        self.user = user
        self.isDirect = isDirect
        self.eventSlot = eventSlot
    }

    /// The outbox's ordering and pacing key: the Chat API's write quota is per space.
    public var conversationKey: String { "google-chat:\(space)" }

    public var route: ReplyRoute {
        ReplyRoute(platform: GoogleChatPlatform.name, conversation: conversationKey, address: GoogleChatJSON.encoded(self))
    }

    public static func decode(_ address: String) -> GoogleChatAddress? {
        try? JSONDecoder().decode(GoogleChatAddress.self, from: Data(address.utf8))
    }
}

/// A message the app posted, as the outbox keeps it (`OutboxEntry.platformRef`, JSON): its name,
/// and whether it is private (shown to one person: never a placeholder for a public answer).
public struct GoogleChatMessageRef: Sendable, Hashable, Codable {
    public var name: String
    public var isPrivate: Bool

    public init(name: String, isPrivate: Bool) {
        self.name = name
        self.isPrivate = isPrivate
    }

    public var encoded: String { GoogleChatJSON.encoded(self) }

    public static func decode(_ ref: String) -> GoogleChatMessageRef? {
        try? JSONDecoder().decode(GoogleChatMessageRef.self, from: Data(ref.utf8))
    }
}

enum GoogleChatJSON {
    /// Keys sorted, so one value always encodes the same.
    static func encoded(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
