import Foundation
import Logging
import RelayCore
import RelayPipeline
import RelayPlatform
import Synchronization

/// Answers inline queries (`@Bot fr Good morning` in any chat) with result cards that insert the
/// text when chosen: Telegram's version of the keyboard's quick actions and "Insert".
///
/// Telegram drops an answer that comes too late, and a model may take longer than that: the
/// answerer waits up to `deadline`, and otherwise answers with a "still working" card, leaving the
/// run going; its result is kept per person and query, so the next query (the same text, a space
/// added) answers at once. Answers are personal (`is_personal`), and cached by Telegram only once
/// they hold a result.
public final class TelegramInlineAnswerer: Sendable {
    let inbox: any RelayInbox
    let api: any TelegramBotAPI
    let deadline: Duration
    let clock: any RelayClock
    let logger: Logger

    /// Results kept, and for how long.
    static let cacheLimit = 1000
    static let cacheLifetime: Duration = .seconds(600)
    /// Inline runs going at once; beyond them a query gets the "still working" card without a
    /// run, so typing fast cannot queue a model call per keystroke.
    static let maxRunning = 16
    /// How long Telegram may keep a result card (seconds).
    static let resultCacheTime = 300

    private struct Cached {
        var reply: Reply
        var expires: Date
    }

    private struct State {
        var cache: [String: Cached] = [:]
        var order: [String] = []
        var running: [String: Task<Reply?, Never>] = [:]
    }

    private let state = Mutex(State())

    init(inbox: any RelayInbox, api: any TelegramBotAPI, deadline: Duration, clock: any RelayClock, logger: Logger) {
        self.inbox = inbox
        self.api = api
        self.deadline = deadline
        self.clock = clock
        self.logger = logger
    }

    func answer(_ query: TelegramInlineQuery) async {
        guard let request = TelegramInlineRequest(query.query) else {
            await send(query, results: Self.helpCards(), cacheTime: Self.resultCacheTime)
            return
        }
        let key = "\(query.from.id) \(request.normalized)"
        let now = clock.now
        let (cached, task) = state.withLock { state -> (Reply?, Task<Reply?, Never>?) in
            if let hit = state.cache[key], hit.expires > now { return (hit.reply, nil) }
            if let running = state.running[key] { return (nil, running) }
            guard state.running.count < Self.maxRunning else { return (nil, nil) }
            let task = Task { await self.run(request, user: query.from, key: key) }
            state.running[key] = task
            return (nil, task)
        }
        if let cached {
            await send(query, results: Self.cards(for: cached, request: request), cacheTime: Self.resultCacheTime)
            return
        }
        guard let task, let reply = await Self.first(of: task, within: deadline, clock: clock) else {
            await send(query, results: [Self.placeholder(request)], cacheTime: 0)
            return
        }
        await send(query, results: Self.cards(for: reply, request: request), cacheTime: reply.kind == .result ? Self.resultCacheTime : 0)
    }

    /// Runs the request and keeps a result for the next query.
    private func run(_ request: TelegramInlineRequest, user: TelegramUser, key: String) async -> Reply? {
        let event = Event(
            platform: TelegramPlatform.name, team: "dm:\(user.id)", channel: String(user.id), user: String(user.id), userName: user.name,
            text: request.commandLine)
        let reply = await inbox.answerNow(event)
        let expires = clock.now + Self.cacheLifetime
        state.withLock { state in
            state.running[key] = nil
            guard let reply, reply.kind == .result else { return }
            if state.cache.updateValue(Cached(reply: reply, expires: expires), forKey: key) == nil { state.order.append(key) }
            while state.order.count > Self.cacheLimit { state.cache[state.order.removeFirst()] = nil }
        }
        return reply
    }

    /// The task's value if it comes within `deadline`, else nil; the task goes on either way.
    ///
    /// Raced in unstructured tasks: a task group would wait for the run at its end, since
    /// awaiting a task's value does not stop when cancelled.
    static func first(of task: Task<Reply?, Never>, within deadline: Duration, clock: any RelayClock) async -> Reply? {
        let settled = Mutex(false)
        return await withCheckedContinuation { (continuation: CheckedContinuation<Reply?, Never>) in
            let finish = { @Sendable (reply: Reply?) in
                if settled.withLock({ done in
                    defer { done = true }
                    return !done
                }) {
                    continuation.resume(returning: reply)
                }
            }
            Task { finish(await task.value) }
            Task {
                try? await clock.sleep(for: deadline)
                finish(nil)
            }
        }
    }

    private func send(_ query: TelegramInlineQuery, results: [JSONValue], cacheTime: Int) async {
        let body: JSONValue = [
            "inline_query_id": .string(query.id), "results": .array(results), "cache_time": .int(cacheTime), "is_personal": true,
        ]
        do throws(TelegramAPIError) {
            try await api.answerInlineQuery(body)
        } catch {
            logger.notice("telegram: could not answer an inline query", metadata: ["reason": "\(error.reason)"])
        }
    }

    // MARK: - Cards

    /// One article that inserts the answer; an error is a card that says what went wrong and
    /// inserts nothing useful by accident (its own words).
    static func cards(for reply: Reply, request: TelegramInlineRequest) -> [JSONValue] {
        // Defanged before it is cut: the person sends it as their own words, where an `@name` or a
        // `tg://` from the model would ping someone in their name.
        let text = TelegramInlineLimits.truncated(TelegramHTML.defanged(reply.body))
        guard reply.kind == .result, !text.isEmpty else {
            return [
                article(
                    id: "error", title: "Could not answer", description: String(reply.body.prefix(200)),
                    text: TelegramInlineLimits.truncated(TelegramHTML.defanged(reply.body)))
            ]
        }
        return [article(id: "result", title: reply.title ?? request.title, description: String(text.prefix(200)), text: text)]
    }

    static func placeholder(_ request: TelegramInlineRequest) -> JSONValue {
        article(
            id: "working", title: "⏳ \(request.title): working on it…", description: "Type a space in a moment to see the result.",
            text: request.text)
    }

    static func helpCards() -> [JSONValue] {
        TelegramInlineRequest.examples.enumerated().map { index, card in
            article(id: "help\(index)", title: card.title, description: "Type: @bot \(card.example)", text: card.example)
        }
    }

    /// An `InlineQueryResultArticle` whose chosen text is sent as plain text (no parse mode: the
    /// person sends it as their own words, and nothing in it is markup).
    static func article(id: String, title: String, description: String, text: String) -> JSONValue {
        [
            "type": "article", "id": .string(id), "title": .string(String(title.prefix(256))), "description": .string(description),
            "input_message_content": ["message_text": .string(text.isEmpty ? title : text), "link_preview_options": ["is_disabled": true]],
        ]
    }
}

/// Telegram's sizes for inline answers.
enum TelegramInlineLimits {
    /// `input_message_content.message_text`: 1–4096 characters.
    static let messageText = 4096

    /// `text` cut to whole characters within `messageText` UTF-16 units.
    static func truncated(_ text: String) -> String {
        guard text.utf16.count > messageText else { return text }
        var out = ""
        var used = 0
        for character in text {
            let size = character.utf16.count
            if used + size > messageText { break }
            out.append(character)
            used += size
        }
        return out
    }
}
