import Foundation
public import RelayPipeline

/// Where an IRC reply goes, as stored in the outbox (`OutboxEntry.address`, JSON): the channel a
/// command was said in, or none for a private message, and who said it.
public struct IRCAddress: Sendable, Hashable, Codable {
    /// `#channel`, or nil for a private message to the relay.
    public var channel: String?
    /// The asker's nick: the first word of a reply in a channel, and where private replies go.
    public var nick: String

    public init(channel: String?, nick: String) {
        self.channel = channel
        self.nick = nick
    }

    /// The tenant of the relay's settings: the channel, or the person (`dm:<nick>`) in private.
    public var team: String { channel.map(IRCText.fold) ?? "dm:\(IRCText.fold(nick))" }

    public var isPrivate: Bool { channel == nil }

    /// The outbox's ordering key: replies to one channel (or one person) go in order.
    public var conversationKey: String { "irc:\(team)" }

    public var route: ReplyRoute {
        let data = (try? JSONEncoder().encode(self)) ?? Data()
        return ReplyRoute(platform: IRCPlatform.name, conversation: conversationKey, address: String(decoding: data, as: UTF8.self))
    }

    public static func decode(_ address: String) -> IRCAddress? {
        try? JSONDecoder().decode(IRCAddress.self, from: Data(address.utf8))
    }
}
