import Foundation
import Logging
import RelayCore
import RelayPipeline
import RelayPlatform

/// Telegram's delivery primitives, for `Deliverer` (platform "telegram"), through the Bot API.
///
/// A run's progress is one message, edited as blocks finish; the answer replaces it (the same
/// message edited), so a chain leaves one message, not a trail. A reply longer than Telegram's
/// 4 096 characters goes as several messages, one part per delivery. A private answer to a
/// command typed in a group goes to the asker's private chat, with "Post to chat", and the
/// group's progress message says where it went. Pacing (per chat, per group, overall) and 429s
/// are the client's (`TelegramRateLimiter`), so `minimumInterval` adds nothing.
struct TelegramDelivery: DeliveryPlatform {
    typealias Failure = TelegramAPIError

    /// One way a new message can reach Telegram.
    enum Route: Sendable, Hashable {
        /// `sendMessage` to `chat`, as a reply to `replyTo`.
        case send(chat: Int64, replyTo: Int64?)
        /// `sendMessage` to the asker's private chat. A bot may not write first to someone who
        /// never opened it (403): when `explains`, the group is told why the answer is missing
        /// (in `placeholder` when there is one) — an answer they asked to keep private is never
        /// shown there.
        case privately(chat: Int64, explains: Bool, placeholder: Placeholder<Int64>?)
    }

    let platform = TelegramPlatform.name
    let api: any TelegramBotAPI
    let log: TelegramChatLog
    let logger: Logger
    /// The client's limiter, read (never booked) to tell the outbox when a message can go.
    let limiter: TelegramRateLimiter?
    let partialEdits = EditBudget(perMinute: 15 * 60, burst: 15)

    init(api: any TelegramBotAPI, log: TelegramChatLog, logger: Logger, limiter: TelegramRateLimiter? = nil) {
        self.api = api
        self.log = log
        self.logger = logger
        self.limiter = limiter
    }

    /// Always: the Bot API has no idempotency key for `sendMessage`, so an answer sent as a new
    /// message and sent again after a crash would show twice. The run's placeholder ("⏳ Working
    /// on /translate…") is the message; the answer edits it (`editMessageText`, which Telegram
    /// answers "message is not modified" the second time: one message either way). What stays
    /// open: the placeholder itself, resent after a crash, can show twice (the first left at
    /// "⏳"), and a long answer's later parts are new messages.
    func answersByEditingPlaceholder(at address: String) -> Bool { true }

    /// Every edit is a message to the limiter (one a second per chat, 20 a minute per group, 30
    /// a second overall: core.telegram.org/bots/faq), which paces it: in a private chat once a
    /// second at most, 30 times at most; in a group every 5 s, 10 times at most — 12 a minute,
    /// so the group's other messages keep 8 of its 20.
    func streaming(at address: String) -> StreamingPace {
        TelegramAddress.decode(address)?.isGroup == true
            ? StreamingPace(interval: .seconds(5), maxEdits: 10) : StreamingPace(interval: .seconds(1), maxEdits: 30)
    }

    /// 30 messages a second per bot, edits included: answers written at once share 15 edits a
    /// second, half of it, so placeholders and whole answers keep the rest — and none while the
    /// bot's 30 are all taken: then placeholders and whole answers queue, and an edit of an
    /// answer being written would only push them back (200 people asking at once: whole answers
    /// 4.5 s later, slack-bench --stream; docs/benchmarks.md).
    func admitsPartialEdit(at address: String, now: Date) -> Bool {
        if let limiter, limiter.overallWait(now: now) > .zero { return false }
        return partialEdits.take(now: now)
    }

    // MARK: Primitives

    func decode(_ address: String) -> TelegramAddress? { TelegramAddress.decode(address) }

    /// "Post to chat" only where the answer went somewhere else than the chat it came from.
    func render(_ reply: Reply, entryID: String, address: TelegramAddress) -> [TelegramMessage] {
        var shown = reply
        if address.target(for: reply) == address.chat { shown.actions = shown.actions.filter { $0 != .postToChannel } }
        return TelegramRenderer.render(shown, entryID: entryID)
    }

    func render(_ progress: RunProgress) -> TelegramMessage { TelegramRenderer.render(progress) }

    func render(note: String) -> TelegramMessage { TelegramMessage(text: TelegramHTML.escape(note), buttons: []) }

    /// The chat the reply is shown in.
    func place(of reply: Reply, address: TelegramAddress) -> Int64 { address.target(for: reply) }

    /// A private reply goes to the asker's private chat; one that stays private never falls back to the group.
    func reachesAskerAlone(_ reply: Reply, address: TelegramAddress) async -> Bool { reply.isPrivate || !address.isGroup }

    /// The message the earlier entry left, in the chat it went to: progress stays where the
    /// command was; a reply went where `TelegramAddress.target(for:)` sent it.
    func placeholder(address: TelegramAddress, earlier: OutboxEntry?) -> Placeholder<Int64>? {
        guard let earlier, let id = earlier.platformRef.flatMap({ Int64($0) }) else { return nil }
        var chat = address.chat
        if case .reply(let reply) = earlier.content, let written = TelegramAddress.decode(earlier.address) { chat = written.target(for: reply) }
        return Placeholder(ref: String(id), place: chat, isPublic: chat == address.chat)
    }

    func progressRoute(address: TelegramAddress) -> Route? { .send(chat: address.chat, replyTo: address.replyTo) }

    /// Into the reply's chat. A private reply's first part that the asker's private chat refuses
    /// goes to the group instead, in the placeholder when there is one, when it is an error or
    /// help (it says only what they typed wrong); a result they asked to keep private never does.
    func routes(for part: PartToSend<TelegramAddress, Int64>) -> [PartRoute<Route>] {
        let address = part.address
        let replyTo = part.index == 0 ? address.replyTo : nil
        guard part.place != address.chat else { return [.post(.send(chat: part.place, replyTo: replyTo))] }
        let inGroup = part.index == 0 ? part.placeholder.flatMap { $0.place == address.chat ? $0 : nil } : nil
        // What stays private (a result, a secret) is never shown in the group instead. For a
        // result, the group is told why it is missing when the asker never opened a chat with
        // the bot; a secret's asker is told by the deliverer (`Reply.secretRefused`).
        let privately: [PartRoute<Route>] = [.post(.privately(chat: part.place, explains: part.reply.kind == .result, placeholder: inGroup))]
        guard !part.reply.staysPrivate else { return privately }
        return privately + (inGroup != nil ? [.placeholder] : [.post(.send(chat: address.chat, replyTo: replyTo))])
    }

    func post(_ message: TelegramMessage, via route: Route, address: TelegramAddress, key: SendKey) async throws(TelegramAPIError) -> String? {
        switch route {
        case .send(let chat, let replyTo):
            return String(try await send(message, to: chat, replyTo: replyTo))
        case .privately(let chat, let explains, let placeholder):
            do throws(TelegramAPIError) {
                return String(try await send(message, to: chat, replyTo: nil))
            } catch {
                if explains, case .refused(_, .error(403, _)) = error { await explainNoPrivateChat(address, in: placeholder) }
                throw error
            }
        }
    }

    func edit(_ placeholder: Placeholder<Int64>, to message: TelegramMessage, address: TelegramAddress, key: SendKey) async throws(TelegramAPIError) {
        guard let id = Int64(placeholder.ref) else { throw .invalidRequest(endpoint: "editMessageText", reason: "the stored message id is not a number") }
        try await edit(message, chat: placeholder.place, id: id)
    }

    /// "typing…" in the command's chat; Telegram ends it by itself after 5 s or with the bot's
    /// next message, so there is nothing to stop.
    func typing(at address: TelegramAddress, _ on: Bool) async {
        guard on else { return }
        try? await api.sendChatAction(chatID: address.chat, action: "typing")
    }

    // MARK: Details

    /// Sends `message`; a group that became a supergroup is followed to its new id once.
    private func send(_ message: TelegramMessage, to chat: Int64, replyTo: Int64?) async throws(TelegramAPIError) -> Int64 {
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
        log.record(chat: chat, .init(id: id, text: Self.plainText(message.text), author: nil, fromRelay: true))
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
        log.record(chat: chat, .init(id: id, text: Self.plainText(message.text), author: nil, fromRelay: true))
    }

    /// A bot may not write first to someone who never opened it (403): says so in the group,
    /// where the command was — in the run's progress message or placeholder, when there
    /// is one — so the private result is not lost in silence.
    private func explainNoPrivateChat(_ address: TelegramAddress, in placeholder: Placeholder<Int64>?) async {
        let text =
            "I could not send you the result privately: Telegram lets a bot write only to people who have opened it. "
            + "Open a private chat with me, press Start, and run the command again."
        let note = TelegramMessage(text: TelegramHTML.escape(text), buttons: [])
        do throws(TelegramAPIError) {
            if let placeholder, let id = Int64(placeholder.ref) {
                try await api.editMessageText(note.editBody(chatID: placeholder.place, messageID: id))
            } else {
                _ = try await api.sendMessage(note.sendBody(chatID: address.chat, replyTo: address.replyTo))
            }
        } catch {
            logger.notice("telegram: could not explain a failed private reply", metadata: ["reason": "\(error.reason)"])
        }
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
