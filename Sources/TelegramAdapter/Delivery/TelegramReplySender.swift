import Foundation
public import Logging
public import RelayCore
public import RelayPipeline
import RelayPlatform

/// Delivers Telegram's outbox entries through the Bot API.
///
/// A run's progress is one message, edited as blocks finish; the result replaces it (the same
/// message edited), so a chain leaves one message, not a trail. A reply longer than Telegram's
/// 4 096 characters goes as several messages, one part per delivery. A private result of a
/// command typed in a group goes to the asker's private chat, with "Post to chat", and the group's
/// progress message says where it went. Pacing (per chat, per group, overall) and 429s are the
/// client's (`TelegramRateLimiter`), so `minimumInterval` adds nothing.
public struct TelegramReplySender: ReplySender {
    public let platform = TelegramPlatform.name
    let api: any TelegramBotAPI
    let log: TelegramChatLog
    let logger: Logger
    /// The client's limiter, read (never booked) to tell the outbox when a message can go.
    let limiter: TelegramRateLimiter?

    public init(api: any TelegramBotAPI, log: TelegramChatLog, logger: Logger, limiter: TelegramRateLimiter? = nil) {
        self.api = api
        self.log = log
        self.logger = logger
        self.limiter = limiter
    }

    public func minimumInterval(for entry: OutboxEntry) -> Duration { .zero }

    /// Always: the Bot API has no idempotency key for `sendMessage`, so an answer sent as a new
    /// message and sent again after a crash would show twice. The run's placeholder ("⏳ Working
    /// on /translate…") is the message; the answer edits it (`editMessageText`, which Telegram
    /// answers "message is not modified" the second time: one message either way). What stays
    /// open: the placeholder itself, resent after a crash, can show twice (the first left at
    /// "⏳"), and a long answer's later parts are new messages.
    public func answersByEditingPlaceholder(at address: String) -> Bool { true }

    public func deliver(_ entry: OutboxEntry, earlier: OutboxEntry?) async -> DeliveryOutcome {
        guard let address = TelegramAddress.decode(entry.address) else {
            return .rejected(reason: "the stored Telegram address cannot be read")
        }
        do throws(TelegramAPIError) {
            switch entry.content {
            case .progress(let step):
                let message = TelegramRenderer.render(step)
                if let id = Self.messageID(earlier) {
                    try await edit(message, chat: address.chat, id: id)
                    return .sent(platformRef: String(id))
                }
                let id = try await send(message, to: address.chat, replyTo: address.replyTo, address: address)
                return .sent(platformRef: String(id))
            case .reply(let reply):
                return try await deliverPart(of: reply, entry: entry, address: address, earlier: earlier)
            case .parkedRun:
                return .rejected(reason: "a parked run is not a message")
            }
        } catch {
            return error.deliveryOutcome
        }
    }

    /// Sends part `entry.partsDelivered` of `reply`: `.partDelivered` while more remain, `.sent`
    /// after the last (with the first part's message id).
    private func deliverPart(of reply: Reply, entry: OutboxEntry, address: TelegramAddress, earlier: OutboxEntry?) async throws(TelegramAPIError)
        -> DeliveryOutcome
    {
        let target = address.target(for: reply)
        var shown = reply
        // "Post to chat" only where the result went somewhere else than the chat it came from.
        if target == address.chat { shown.actions = shown.actions.filter { $0 != .postToChannel } }
        let messages = TelegramRenderer.render(shown, entryID: entry.id)
        let part = entry.partsDelivered
        guard part < messages.count else { return .sent(platformRef: nil) }
        var id: Int64?
        /// The group's progress message or placeholder, when the result goes privately.
        var left: (chat: Int64, id: Int64)?
        if part == 0, let earlierID = Self.messageID(earlier), let earlier {
            if Self.chat(of: earlier) == target {
                // The result replaces the progress message (or the private copy it updates).
                do throws(TelegramAPIError) {
                    try await edit(messages[0], chat: target, id: earlierID)
                    id = earlierID
                } catch {
                    guard case .refused(_, .error) = error else { throw error }
                    logger.notice("telegram: could not edit a message in place; sending a new one", metadata: ["reason": "\(error.reason)"])
                }
            } else {
                left = (Self.chat(of: earlier) ?? address.chat, earlierID)
            }
        }
        if id == nil {
            do throws(TelegramAPIError) {
                id = try await send(messages[part], to: target, replyTo: part == 0 && target == address.chat ? address.replyTo : nil, address: address)
                if let left { await tidyProgress(chat: left.chat, id: left.id) }
            } catch {
                guard target != address.chat, case .refused(_, .error(403, _)) = error else { throw error }
                // The asker never opened the bot, so it may not write to them. An error or help
                // is answered in the group instead (it says only what they typed wrong), in the
                // placeholder when there is one; a result they asked to keep private is not, and
                // the group is told why it is missing.
                guard reply.kind != .result else {
                    await explainNoPrivateChat(address, in: left)
                    throw error
                }
                if let left {
                    try await edit(messages[part], chat: left.chat, id: left.id)
                    id = left.id
                } else {
                    id = try await send(messages[part], to: address.chat, replyTo: part == 0 ? address.replyTo : nil, address: address)
                }
            }
        }
        let ref = id.map { String($0) }
        return part == messages.count - 1 ? .sent(platformRef: part == 0 ? ref : nil) : .partDelivered(platformRef: ref)
    }

    /// Sends `message`; a group that became a supergroup is followed to its new id once.
    private func send(_ message: TelegramMessage, to chat: Int64, replyTo: Int64?, address: TelegramAddress) async throws(TelegramAPIError) -> Int64 {
        let id: Int64
        var chat = chat
        do throws(TelegramAPIError) {
            id = try await api.sendMessage(message.sendBody(chatID: chat, replyTo: replyTo))
        } catch {
            guard case .refused(_, .migrated(let newChat)) = error else { throw error }
            logger.notice("telegram: a group became a supergroup; sending to its new id", metadata: ["telegram.chat": "\(newChat)"])
            chat = newChat
            id = try await api.sendMessage(message.sendBody(chatID: chat, replyTo: nil))
        }
        log.record(chat: chat, .init(id: id, text: TelegramReplySender.plainText(message.text), author: nil, fromRelay: true))
        return id
    }

    /// Edits message `id`; in a group that became a supergroup (where `send` posted it), at the
    /// new id.
    private func edit(_ message: TelegramMessage, chat: Int64, id: Int64) async throws(TelegramAPIError) {
        var chat = chat
        do throws(TelegramAPIError) {
            try await api.editMessageText(message.editBody(chatID: chat, messageID: id))
        } catch {
            guard case .refused(_, .migrated(let newChat)) = error else { throw error }
            chat = newChat
            try await api.editMessageText(message.editBody(chatID: chat, messageID: id))
        }
        log.record(chat: chat, .init(id: id, text: TelegramReplySender.plainText(message.text), author: nil, fromRelay: true))
    }

    /// The group's progress message, when the result went privately: says so. Best effort.
    private func tidyProgress(chat: Int64, id: Int64) async {
        let note = TelegramMessage(text: TelegramHTML.escape("Finished — the result was sent privately to the person who asked."), buttons: [])
        do throws(TelegramAPIError) {
            try await api.editMessageText(note.editBody(chatID: chat, messageID: id))
        } catch {
            logger.notice("telegram: could not tidy the progress of a private result", metadata: ["reason": "\(error.reason)"])
        }
    }

    /// A bot may not write first to someone who never opened it (403): says so in the group,
    /// where the command was — in the run's progress message or placeholder, `left`, when there
    /// is one — so the private result is not lost in silence.
    private func explainNoPrivateChat(_ address: TelegramAddress, in left: (chat: Int64, id: Int64)?) async {
        let text =
            "I could not send you the result privately: Telegram lets a bot write only to people who have opened it. "
            + "Open a private chat with me, press Start, and run the command again."
        let note = TelegramMessage(text: TelegramHTML.escape(text), buttons: [])
        do throws(TelegramAPIError) {
            if let left {
                try await api.editMessageText(note.editBody(chatID: left.chat, messageID: left.id))
            } else {
                _ = try await api.sendMessage(note.sendBody(chatID: address.chat, replyTo: address.replyTo))
            }
        } catch {
            logger.notice("telegram: could not explain a failed private reply", metadata: ["reason": "\(error.reason)"])
        }
    }

    /// The message an earlier entry left (its first part), when there is one.
    static func messageID(_ entry: OutboxEntry?) -> Int64? {
        entry?.platformRef.flatMap { Int64($0) }
    }

    /// The chat an earlier entry's message is in: progress stays where the command was; a reply
    /// went where `TelegramAddress.target(for:)` sent it.
    static func chat(of entry: OutboxEntry) -> Int64? {
        guard let address = TelegramAddress.decode(entry.address) else { return nil }
        if case .reply(let reply) = entry.content { return address.target(for: reply) }
        return address.chat
    }

    /// What a person reads of a rendered message: tags dropped, the three entities undone, the
    /// invisible joiners that break mentions removed.
    static func plainText(_ html: String) -> String {
        var out = ""
        var inTag = false
        for character in html.replacingOccurrences(of: "\u{2060}", with: "") {
            if character == "<" {
                inTag = true
            } else if character == ">" && inTag {
                inTag = false
            } else if !inTag {
                out.append(character)
            }
        }
        return out.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
    }
}

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
