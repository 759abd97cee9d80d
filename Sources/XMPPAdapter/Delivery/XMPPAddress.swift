import Foundation
public import RelayPipeline

/// Where an XMPP reply goes, as stored in the outbox (`OutboxEntry.address`, JSON): the room a
/// command was said in (none for a one-to-one chat), who said it, the message to mark the
/// answer as a reply to, and whether the answer may be corrected in place.
public struct XMPPAddress: Sendable, Hashable, Codable {
    /// The bare room JID, or nil for a one-to-one chat (a room's private message included).
    public var room: String?
    /// Who asked: their full JID in a one-to-one chat (the client that asked, which the answer
    /// and its corrections go to), their occupant JID (`room/nick`) in a room.
    public var from: String
    /// The asker's nick in a room; their address's local part in a one-to-one chat.
    public var nick: String
    /// The id of the message that carried the command (XEP-0461's `id`): the room's stanza id
    /// (XEP-0359) where it gave one, else the sender's.
    public var replyTo: String?
    /// Whether the answer may be shown as it is written and replace its placeholder by Last
    /// Message Correction (XEP-0308): the asker's client says it reads corrections, or the room
    /// allows them.
    public var corrections: Bool

    public init(room: String?, from: String, nick: String, replyTo: String? = nil, corrections: Bool) {
        self.room = room
        self.from = from
        self.nick = nick
        self.replyTo = replyTo
        self.corrections = corrections
    }

    public var isPrivate: Bool { room == nil }

    /// The person, in one-to-one chats (their bare JID), or the occupant.
    var person: String { room == nil ? JID(from)?.bare.description ?? from : from }

    /// The tenant of the relay's settings: the room, or the person (`dm:<bare JID>`).
    public var team: String { room ?? "dm:\(person)" }

    /// The outbox's ordering key: replies to one room (or one person) go in order.
    public var conversationKey: String { "xmpp:\(team)" }

    public var route: ReplyRoute {
        let data = (try? JSONEncoder().encode(self)) ?? Data()
        return ReplyRoute(platform: XMPPPlatform.name, conversation: conversationKey, address: String(decoding: data, as: UTF8.self))
    }

    public static func decode(_ address: String) -> XMPPAddress? {
        try? JSONDecoder().decode(XMPPAddress.self, from: Data(address.utf8))
    }
}
