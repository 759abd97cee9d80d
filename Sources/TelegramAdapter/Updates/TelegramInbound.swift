import Foundation
import Logging
import RelayCore
import RelayPipeline
import RelayPlatform
import Synchronization

/// What the adapter does with each update: a command, mention or DM becomes an `Event` and a
/// `TelegramAddress` handed to the relay's inbox; a button press is answered at once; an inline
/// query goes to `TelegramInlineAnswerer`; the tribunal reaction runs `/tribunal` on its message,
/// and 👍/👎 on a fact-check marks it. Never waits for a model: answers follow through the outbox.
///
/// The dedupe key of everything it submits is the update's id, so a webhook delivery Telegram
/// repeats, or a batch polled again after a restart, runs once.
public struct TelegramInbound: Sendable {
    let inbox: any RelayInbox
    let api: any TelegramBotAPI
    let log: TelegramChatLog
    let identity: TelegramIdentity
    let inline: TelegramInlineAnswerer
    let configuration: TelegramConfiguration
    let logger: Logger

    /// Handles one update. Throws only when something to run could not be stored: the webhook
    /// then answers 500 (Telegram delivers it again) and the poller does not confirm it.
    public func handle(_ update: TelegramUpdate) async throws {
        switch update.kind {
        case .message(let message):
            try await self.message(message, update: update.id)
        case .callbackQuery(let query):
            try await callback(query, update: update.id)
        case .inlineQuery(let query):
            // Never holds up the updates behind it: inline answers are not stored, only answered.
            Task { await inline.answer(query) }
        case .reaction(let reaction):
            try await self.reaction(reaction, update: update.id)
        case .other:
            return
        }
    }

    // MARK: - Messages

    /// Whom a message names with its id: a `text_mention` (a person without a username, picked
    /// after `@`), and the author of the message it replies to, as `@username` (else their name).
    /// A plain `@username` carries no id: Telegram does not tell a bot who it is.
    static func mentions(in message: TelegramIncomingMessage) -> [MentionedUser] {
        var mentions = message.entities.compactMap { entity in
            entity.user.map { MentionedUser(shown: entity.text, id: String($0.id), isBot: $0.isBot) }
        }
        if let author = message.replyTo?.from {
            mentions.append(MentionedUser(shown: author.username.map { "@" + $0 } ?? author.name, id: String(author.id), isBot: author.isBot))
        }
        return mentions
    }

    private func message(_ message: TelegramIncomingMessage, update: Int64) async throws {
        guard let from = message.from, !from.isBot, message.chat.isPrivate || message.chat.isGroup else { return }
        let me = await identity.current()
        log.record(chat: message.chat.id, .init(id: message.id, text: message.text, author: from.name, fromRelay: false))
        if let replied = message.replyTo, let text = replied.text {
            let byRelay = replied.fromBot && replied.fromID == me?.id
            log.record(chat: message.chat.id, .init(id: replied.id, text: text, author: nil, fromRelay: byRelay))
        }
        // Whether `/cmd@Name` or `@Name` is this bot is known only once `getMe` has answered: until
        // then such a message waits with Telegram (not confirmed, so it comes again), rather than
        // be run for another bot or dropped.
        if me == nil, Self.namesABot(message) { throw TelegramBotNameUnknown() }
        guard let line = Self.commandLine(message, botUsername: me?.username) else { return }
        // A voice note the command is to hear: the message's own (its caption is the command),
        // else the one it replies to. Only its file id travels; the run fetches the audio.
        let voice = message.clip ?? message.replyTo?.clip
        var event = Event(
            platform: TelegramPlatform.name, team: TelegramAddress.team(chat: message.chat, user: from.id), channel: String(message.chat.id),
            user: String(from.id), userName: from.name, text: line, repliedTo: message.replyTo?.text, eventKey: "update:\(update)",
            isAdmin: message.chat.isPrivate, voice: voice, mentions: Self.mentions(in: message))
        if let replied = message.replyTo, voice == nil, Self.readsOnFrom(event.command) {
            // `/summarize` as a reply: from that message on, as far as the bot has seen.
            event.thread = String(replied.id)
            event.repliedTo = nil
        }
        let address = TelegramAddress(team: event.team, chat: message.chat.id, user: from.id, replyTo: message.id, isGroup: message.chat.isGroup)
        try await submit(event, address: address)
    }

    /// Submits `event`; a refusal for being one too many is answered at once.
    private func submit(_ event: Event, address: TelegramAddress) async throws {
        let submission = try await inbox.submit(event, route: address.route)
        if let busy = submission.busyMessage {
            try? await inbox.post(.error(busy), route: address.route)
        }
    }

    /// The command line a message asks the relay to run, or nil when it is not for the relay.
    ///
    /// - `/cmd …` and `/cmd@ThisBot …` (a `/cmd@OtherBot` is another bot's); `/start`, which
    ///   Telegram sends when someone opens the bot, is `/help`.
    /// - In a group, a mention of the bot: `@Bot translate fr hi` runs that command, as does
    ///   `@Bot /word …` for any word (`CommandTable.lineAfterMention`); `@Bot` with other words
    ///   fact-checks them, and `@Bot` alone, sent as a reply, fact-checks the message
    ///   it answers.
    /// - In a private chat, any text, as the parser reads it.
    /// - A voice note (audio file, video note) that carries no command — alone in a private
    ///   chat, or captioned `@Bot` in a group — is the empty line, which the relay runs as
    ///   `/transcribe`; `@Bot` alone as a reply to a voice note is `/transcribe`. In a group a
    ///   voice note nobody addressed to the bot is not the relay's.
    static func commandLine(_ message: TelegramIncomingMessage, botUsername: String?) -> String? {
        let text = message.text.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.hasPrefix("/") {
            let word = text.prefix { !$0.isWhitespace }
            var name = word.dropFirst()
            if let at = name.firstIndex(of: "@") {
                let addressee = name[name.index(after: at)...]
                if let botUsername, addressee.lowercased() != botUsername.lowercased() { return nil }
                name = name[..<at]
            }
            let rest = text.dropFirst(word.count).trimmingCharacters(in: .whitespaces)
            if name.lowercased() == "start" { return "/help" }
            return rest.isEmpty ? "/\(name)" : "/\(name) \(rest)"
        }
        if message.chat.isPrivate {
            if message.clip != nil {
                // A caption that names a command runs it (`translate fr`), any other is a note's.
                let first = text.split(whereSeparator: \.isWhitespace).first.map(String.init) ?? ""
                return CommandTable.spec(named: first) != nil ? text : ""
            }
            return text.isEmpty ? nil : text
        }
        guard let botUsername else { return nil }
        let mention = "@" + botUsername.lowercased()
        guard message.entities.contains(where: { $0.type == "mention" && $0.text.lowercased() == mention }) else { return nil }
        let words = text.split(whereSeparator: \.isWhitespace).filter { $0.lowercased() != mention }
        let rest = words.joined(separator: " ")
        if rest.isEmpty {
            if message.clip != nil { return "" }
            if message.replyTo?.clip != nil { return "/transcribe" }
            return message.replyTo?.text == nil ? nil : "/tribunal"
        }
        return CommandTable.lineAfterMention(rest)
    }

    /// Whether the message addresses a bot by name: a `/cmd@Name`, or in a group a mention.
    static func namesABot(_ message: TelegramIncomingMessage) -> Bool {
        let text = message.text.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.hasPrefix("/") { return text.prefix { !$0.isWhitespace }.contains("@") }
        return message.chat.isGroup && message.entities.contains { $0.type == "mention" }
    }

    /// Whether a command sent as a reply reads from the replied-to message on, not just it.
    static func readsOnFrom(_ parsed: ParsedCommand) -> Bool {
        guard let command = parsed.command, command.text.isEmpty else { return false }
        if case .action(.summarize) = command.kind { return true }
        return false
    }

    // MARK: - Buttons

    private func callback(_ query: TelegramCallbackQuery, update: Int64) async throws {
        switch query.data.flatMap(TelegramButton.Action.init(callbackData:)) {
        case .postToChat(let entryID):
            await postToChat(entryID: entryID, query: query)
        case .runAgain(let entryID):
            try await runAgain(entryID: entryID, query: query, update: update)
        case nil:
            await answer(query, "This button is no longer in use.")
        }
    }

    /// Posts an earlier private result into the group its command came from, once: only its
    /// asker may, and the post is queued under a key made from the result's id, so a second
    /// press or a repeated update posts nothing more (and says so). The private copy then loses
    /// its button and says it was posted.
    private func postToChat(entryID: String, query: TelegramCallbackQuery) async {
        do {
            guard let entry = try await inbox.outboxEntry(id: entryID), entry.platform == TelegramPlatform.name,
                case .reply(let original) = entry.content, original.isPrivate, let origin = TelegramAddress.decode(entry.address), origin.isGroup
            else {
                await answer(query, "That result is no longer available to post; run the command again.", alert: true)
                return
            }
            guard query.from.id == origin.user else {
                await answer(query, "Only the person who asked can post this result.", alert: true)
                return
            }
            var reply = original
            reply.isPrivate = false
            reply.actions = reply.actions.filter { $0 != .postToChannel }
            guard try await inbox.post(reply, route: origin.route, onceAs: "\(entryID):posted", replacing: nil) else {
                await answer(query, "This result was already posted.")
                return
            }
            var note = original
            note.actions = reply.actions
            note.notes.append("You posted this to the chat.")
            let here = TelegramAddress(team: "dm:\(query.from.id)", chat: query.chat?.id ?? query.from.id, user: query.from.id, isGroup: false)
            try await inbox.post(note, route: here.route, onceAs: "\(entryID):posted-note", replacing: entryID)
            await answer(query, "Posted.")
        } catch {
            logger.error("telegram: could not queue a post to chat", metadata: ["error": "\(error)"])
            await answer(query, "Rhea Relay could not post this just now; please try again.", alert: true)
        }
    }

    /// Runs the result's command line again, for whoever pressed, in the chat of the button.
    private func runAgain(entryID: String, query: TelegramCallbackQuery, update: Int64) async throws {
        guard let chat = query.chat, let entry = try await inbox.outboxEntry(id: entryID), case .reply(let reply) = entry.content,
            let line = reply.actions.lazy.compactMap({ action -> String? in
                if case .runAgain(let line) = action { return line }
                return nil
            }).first
        else {
            await answer(query, "That result is no longer available; run the command again.", alert: true)
            return
        }
        let team = TelegramAddress.team(chat: chat, user: query.from.id)
        let event = Event(
            platform: TelegramPlatform.name, team: team, channel: String(chat.id), user: String(query.from.id), userName: query.from.name, text: line,
            eventKey: "update:\(update)", isAdmin: chat.isPrivate)
        let address = TelegramAddress(team: team, chat: chat.id, user: query.from.id, replyTo: query.messageID, isGroup: chat.isGroup)
        try await submit(event, address: address)
        await answer(query, "Running it again…")
    }

    /// Stops the button's spinner; a failure only leaves the spinner a little longer.
    private func answer(_ query: TelegramCallbackQuery, _ text: String, alert: Bool = false) async {
        do throws(TelegramAPIError) {
            try await api.answerCallbackQuery(id: query.id, text: text, showAlert: alert)
        } catch {
            logger.notice("telegram: could not answer a button press", metadata: ["reason": "\(error.reason)"])
        }
    }

    // MARK: - Reactions

    private func reaction(_ reaction: TelegramReaction, update: Int64) async throws {
        guard let user = reaction.user, !user.isBot else { return }
        let team = TelegramAddress.team(chat: reaction.chat, user: user.id)
        let address = TelegramAddress(team: team, chat: reaction.chat.id, user: user.id, replyTo: reaction.messageID, isGroup: reaction.chat.isGroup)
        let seen = log.message(chat: reaction.chat.id, id: reaction.messageID)
        var line: String?
        var repliedTo: String?
        if reaction.added.contains(where: { Self.bare($0) == Self.bare(configuration.tribunalReaction) }) {
            guard let seen else {
                try? await inbox.post(
                    .error(
                        "I cannot read that message: Telegram shows a bot only the messages it was sent while privacy mode is on. Reply to it with /tribunal instead."
                    ), route: address.route)
                return
            }
            line = "/tribunal"
            repliedTo = seen.text
        } else if let seen, seen.fromRelay, let id = LedgerReference.id(in: seen.text),
            let right = reaction.added.lazy.compactMap(LedgerReference.mark(fromEmoji:)).first
        {
            line = LedgerReference.markCommand(id, right: right)
        }
        guard let line else { return }
        let event = Event(
            platform: TelegramPlatform.name, team: team, channel: String(reaction.chat.id), user: String(user.id), userName: user.name, text: line,
            repliedTo: repliedTo, eventKey: "update:\(update)", isAdmin: reaction.chat.isPrivate)
        try await submit(event, address: address)
    }

    /// An emoji without variation selectors and skin tones, for comparing.
    static func bare(_ emoji: String) -> String {
        String(String.UnicodeScalarView(emoji.unicodeScalars.filter { !(0xFE00...0xFE0F).contains($0.value) && !(0x1F3FB...0x1F3FF).contains($0.value) }))
    }
}

/// A message names a bot, and which one this is cannot be told yet (`getMe` has not answered).
struct TelegramBotNameUnknown: Error, CustomStringConvertible {
    var description: String { "the bot's username is not known yet (getMe has not answered); the update waits with Telegram" }
}

/// The recent messages of each chat that the bot has seen or sent, in memory and bounded.
///
/// The Bot API cannot fetch a message by id or read a chat's history, so what a reaction points
/// at, and what `/summarize` sent as a reply reads "from that message on", is only what passed
/// through the relay: with privacy mode on (BotFather's default), commands, mentions and replies
/// to the bot; with it off or as an admin, every message. Lost at a restart, by design: it is a
/// cache of chat text, which the relay keeps nowhere else.
public final class TelegramChatLog: Sendable {
    public struct Entry: Sendable, Hashable {
        public var id: Int64
        public var text: String
        /// "Ada: " in summaries; nil for the relay's own messages.
        public var author: String?
        public var fromRelay: Bool
    }

    /// Messages kept per chat, newest last.
    let perChat: Int
    /// Chats remembered; the one first seen is forgotten first.
    let chats: Int

    private struct State {
        var log: [Int64: [Entry]] = [:]
        var order: [Int64] = []
    }

    private let state = Mutex(State())

    public init(perChat: Int = 200, chats: Int = 2000) {
        self.perChat = perChat
        self.chats = chats
    }

    public func record(chat: Int64, _ entry: Entry) {
        guard !entry.text.isEmpty else { return }
        state.withLock { state in
            var entries = state.log[chat] ?? []
            if let index = entries.firstIndex(where: { $0.id == entry.id }) {
                entries[index] = entry
            } else {
                // Ids grow within a chat; keep the list sorted for "from that message on".
                let position = entries.lastIndex(where: { $0.id < entry.id }).map { $0 + 1 } ?? 0
                entries.insert(entry, at: position)
                if entries.count > perChat { entries.removeFirst(entries.count - perChat) }
            }
            if state.log[chat] == nil {
                state.order.append(chat)
                if state.order.count > chats {
                    let forgotten = state.order.removeFirst()
                    state.log[forgotten] = nil
                }
            }
            state.log[chat] = entries
        }
    }

    public func message(chat: Int64, id: Int64) -> Entry? {
        state.withLock { $0.log[chat]?.first { $0.id == id } }
    }

    /// The chat's messages from `id` on (itself included), oldest first, at most `limit` (the
    /// oldest of them).
    public func messages(chat: Int64, from id: Int64, limit: Int) -> [Entry] {
        state.withLock { state in
            Array((state.log[chat] ?? []).filter { $0.id >= id }.prefix(limit))
        }
    }
}

/// Who the bot is (`getMe`), asked once and kept: groups address it as `/cmd@Name` and `@Name`,
/// and the relay must tell its own messages from others'. Until Telegram has answered (it may be
/// unreachable at start), the next update asks again.
public final class TelegramIdentity: Sendable {
    let api: any TelegramBotAPI
    let logger: Logger
    private let known = Mutex<TelegramBotIdentity?>(nil)

    init(api: any TelegramBotAPI, logger: Logger) {
        self.api = api
        self.logger = logger
    }

    public func current() async -> TelegramBotIdentity? {
        if let identity = known.withLock({ $0 }) { return identity }
        do throws(TelegramAPIError) {
            let identity = try await api.getMe()
            known.withLock { $0 = identity }
            return identity
        } catch {
            logger.warning("telegram: could not ask who the bot is (getMe)", metadata: ["reason": "\(error.reason)"])
            return nil
        }
    }
}
