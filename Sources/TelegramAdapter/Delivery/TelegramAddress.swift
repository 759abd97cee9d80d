public import Foundation
public import RelayCore
public import RelayPipeline

/// Where a Telegram reply goes, as stored in the outbox (`OutboxEntry.address`, JSON).
///
/// Replies go to the chat the command came from, as a reply to the command's message. A private
/// result of a command typed in a group goes to the asker's private chat instead (in Telegram a
/// private chat's id is the user's), where "Post to chat" can put it in the group later.
public struct TelegramAddress: Sendable, Hashable, Codable {
    /// The group (`tg:<chat id>`), or `dm:<user>` for a private chat: the tenant.
    public var team: String
    /// The chat the command came from.
    public var chat: Int64
    /// Who asked: private results go only to them.
    public var user: Int64
    /// The message to answer as a reply (the command's).
    public var replyTo: Int64?
    /// The chat is a group or supergroup (so private results go elsewhere).
    public var isGroup: Bool

    public init(team: String, chat: Int64, user: Int64, replyTo: Int64? = nil, isGroup: Bool) {
        self.team = team
        self.chat = chat
        self.user = user
        self.replyTo = replyTo
        self.isGroup = isGroup
    }

    /// The team of a chat: a group is its own tenant; a private chat is its person's.
    public static func team(chat: TelegramChat, user: Int64) -> String {
        chat.isPrivate ? "dm:\(user)" : "tg:\(chat.id)"
    }

    /// The outbox's ordering key: Telegram paces per chat, so one chat's replies go in order.
    public var conversation: String { "telegram:\(chat)" }

    public var route: ReplyRoute {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return ReplyRoute(platform: TelegramPlatform.name, conversation: conversation, address: json)
    }

    public static func decode(_ address: String) -> TelegramAddress? {
        try? JSONDecoder().decode(TelegramAddress.self, from: Data(address.utf8))
    }

    /// Where `reply` is shown: a private reply (a `--private` result, an error, help) to a
    /// command typed in a group goes to the asker's private chat, as on other platforms only the
    /// asker sees it. (When the bot may not write to them there, `TelegramReplySender` falls back.)
    public func target(for reply: Reply) -> Int64 {
        isGroup && reply.isPrivate ? user : chat
    }
}
