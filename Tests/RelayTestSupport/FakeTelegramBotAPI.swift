import Hummingbird
import HummingbirdCore
public import Logging
import NIOCore
public import RelayCore
import Synchronization

/// A fake of Telegram's Bot API: a real HTTP server on 127.0.0.1 that speaks its wire format.
///
/// ```swift
/// try await withFakeTelegramBotAPI { telegram in
///     // configure TELEGRAM_API_URL = telegram.url, TELEGRAM_BOT_TOKEN = telegram.token, then:
///     telegram.enqueue(TelegramUpdates.message(updateID: 1, messageID: 10, chat: 42, from: 42, text: "/translate fr hi"))
///     let sent = await telegram.next("sendMessage")
///     #expect(telegram.messages(chat: 42).first?.text == "…")
/// }
/// ```
///
/// Serves `POST` (or `GET` with query items; form bodies too) `/bot<token>/<method>` for
/// `getMe`, `getUpdates` (long polling: waits up to `timeout` seconds, at most 50, for an update;
/// `offset` confirms; a newer call makes a waiting one answer 409 (`pollConflicts`), and one
/// whose client closed its connection ends unanswered; 409 while a webhook is set;
/// `allowed_updates` filters kinds as Telegram does, reactions only when asked for),
/// `setWebhook`/`deleteWebhook`/`getWebhookInfo`, `sendMessage`/`editMessageText`/
/// `editMessageReplyMarkup`/`deleteMessage` (HTML parse mode checked as Telegram's parser does,
/// see `FakeTelegramHTML`; 4096 UTF-16 units after parsing; inline keyboards checked),
/// `answerCallbackQuery`, `answerInlineQuery` (only for queries the fake issued, once, within
/// `inlineQueryDeadline`), `sendChatAction`, `setMessageReaction` and
/// `setMyCommands`/`getMyCommands`/`deleteMyCommands`. Answers are `{"ok":true,"result":…}` or
/// `{"ok":false,"error_code":N,"description":…,"parameters":…}` with Telegram's texts. A wrong
/// token is 401, an unknown method 404. Sends and edits are paced as Telegram's flood control
/// does (`rateLimits`, on unless `enforceRateLimits` is false): 429 with `retry_after`.
///
/// Checks, in order: path and token, a scripted failure (`failNext`), then the method's own
/// rules. Every call is recorded (`calls`, `next`), refused ones too.
public final class FakeTelegramBotAPI: Sendable {
    public static let defaultToken = "123456:TEST-fake-telegram-token"
    public static let defaultBotID: Int64 = 7_000_001
    public static let defaultBotUsername = "RheaTestBot"
    public static let defaultBotFirstName = "Rhea"

    /// `http://127.0.0.1:<port>`, the base to configure as `TELEGRAM_API_URL`.
    public let url: String
    public let port: Int
    /// The token calls must carry in their path.
    public let token: String
    public let botID: Int64
    public let botUsername: String
    let state: FakeTelegramShared
    let log: RequestLog<RecordedTelegramCall>
    private let server: FakeServerHandle

    private init(
        port: Int, token: String, botID: Int64, botUsername: String, state: FakeTelegramShared, log: RequestLog<RecordedTelegramCall>,
        server: FakeServerHandle
    ) {
        self.port = port
        self.url = "http://127.0.0.1:\(port)"
        self.token = token
        self.botID = botID
        self.botUsername = botUsername
        self.state = state
        self.log = log
        self.server = server
    }

    /// Starts a fake on an ephemeral loopback port and returns once it accepts connections.
    public static func start(
        token: String = defaultToken, botID: Int64 = defaultBotID, botUsername: String = defaultBotUsername,
        botFirstName: String = defaultBotFirstName, logger: Logger? = nil
    ) async throws -> FakeTelegramBotAPI {
        let shared = FakeTelegramShared(FakeTelegramBotAPIState(token: token, botID: botID, botUsername: botUsername, botFirstName: botFirstName))
        let log = RequestLog<RecordedTelegramCall>()
        let stopFlag = FakeStopFlag()
        let responder = CallbackResponder<FakeTelegramContext> { request, context in
            let recorded = try await RecordedRequest.read(request)
            let arrived = ContinuousClock.now
            // A newer poll ends an older one still open. Whether the older one's client had
            // closed it is what the server read of its connection: let its event loop read
            // what reached the socket first, so a poller that closed before this call was made
            // is not counted open because this process was slow to read its FIN.
            if recorded.path.hasSuffix("/getUpdates") { await shared.settleWaitingPolls() }
            let (method, parameters, step) = shared.withLock { $0.begin(recorded, now: arrived) }
            var call = RecordedTelegramCall(
                method: method, body: parameters, httpMethod: recorded.method, contentType: recorded.header("content-type"), headers: recorded.headers,
                arrived: arrived,
                status: nil, response: nil)
            var answer: FakeTelegramAnswer
            switch step {
            case .answer(let value):
                answer = value
            case .slow(let seconds, let value):
                try await stopFlag.delay(seconds)
                answer = value
            case .drop:
                shared.record(call, log: log)
                context.channel.close(promise: nil)
                throw FakeTelegramDropped()
            case .poll(let poll):
                let peer = try? await context.channel.pipeline.handler(type: FakePeerClosed.self).get()
                let waiting = shared.startPoll(on: context.channel, peer: peer)
                defer { shared.endPoll(waiting) }
                let gone = { peer?.isClosed ?? !context.channel.isActive }
                // A poller that is gone (killed: its sockets closed) no longer polls: its
                // request ends unanswered, as it does for Telegram when the connection ends.
                let drop = {
                    shared.record(call, log: log)
                    context.channel.close(promise: nil)
                    return FakeTelegramDropped()
                }
                while true {
                    if gone() { throw drop() }
                    if let value = shared.withLock({ $0.pollStep(poll, now: .now) }) {
                        // Ended by a newer poll after its client had closed it (read by then, in
                        // `settleWaitingPolls`): no one was there to be answered.
                        if gone() { throw drop() }
                        answer = value
                        break
                    }
                    try await stopFlag.delay(0.01)
                }
            }
            call.status = answer.status
            call.response = answer.json
            shared.record(call, log: log)
            var headers = HTTPFields()
            headers[.contentType] = answer.contentType
            return Response(status: .init(code: answer.status), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: answer.body)))
        }
        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            responder: responder,
            server: .http1(configuration: .init(additionalChannelHandlers: [FakePeerClosed()])),
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: nil),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            },
            logger: logger ?? Logger(label: "FakeTelegramBotAPI", factory: { _ in SwiftLogNoOpLogHandler() }))
        let server = FakeServerHandle(app: app, stopFlag: stopFlag) { portContinuation.finish() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            server.task.cancel()
            var reason = "the server stopped before it was listening"
            if case .failure(let error) = await server.task.result { reason = "\(error)" }
            throw FakeServerError.didNotStart(reason: reason)
        }
        return FakeTelegramBotAPI(port: port, token: token, botID: botID, botUsername: botUsername, state: shared, log: log, server: server)
    }

    /// Stops the server and waits until the port is closed; waiting `getUpdates` calls are cut off.
    public func stop() async {
        await server.stop()
    }

    /// `<url>/bot<token>/<method>`.
    public func methodURL(_ method: String) -> String {
        "\(url)/bot\(token)/\(method)"
    }

    // MARK: - Knobs

    /// Makes `user` an administrator of the group `chat` (`getChatMember`).
    public func makeAdministrator(_ user: Int64, of chat: Int64) {
        state.withLock { _ = $0.administrators[chat, default: []].insert(user) }
    }

    /// Whether sends and edits are paced by `rateLimits` (429 when too fast). On by default.
    public var enforceRateLimits: Bool {
        get { state.withLock { $0.enforceRateLimits } }
        set { state.withLock { $0.enforceRateLimits = newValue } }
    }

    public var rateLimits: FakeTelegramRateLimits {
        get { state.withLock { $0.rateLimits } }
        set { state.withLock { $0.rateLimits = newValue } }
    }

    /// How long after issuing an inline query an answer is accepted (10 s, as Telegram).
    public var inlineQueryDeadline: Duration {
        get { state.withLock { $0.inlineQueryDeadline } }
        set { state.withLock { $0.inlineQueryDeadline = newValue } }
    }

    /// How long after issuing a callback query an answer is accepted (15 s).
    public var callbackQueryDeadline: Duration {
        get { state.withLock { $0.callbackQueryDeadline } }
        set { state.withLock { $0.callbackQueryDeadline = newValue } }
    }

    /// Whether an unknown HTML entity (`&nbsp;`) is refused (the default; stricter than
    /// Telegram, which keeps it as literal text).
    public var strictHTMLEntities: Bool {
        get { state.withLock { $0.strictHTMLEntities } }
        set { state.withLock { $0.strictHTMLEntities = newValue } }
    }

    /// Whether `setWebhook` accepts any URL; by default it wants HTTPS on 443, 80, 88 or 8443.
    public var allowsAnyWebhookURL: Bool {
        get { state.withLock { $0.allowsAnyWebhookURL } }
        set { state.withLock { $0.allowsAnyWebhookURL = newValue } }
    }

    /// Answers the next `times` calls to `method` with `failure`, before any other check but the token's.
    /// With `when`, only calls whose parameters it accepts count (and fail).
    public func failNext(
        _ method: String, times: Int = 1, with failure: FakeTelegramFailure, when: (@Sendable (JSONValue) -> Bool)? = nil
    ) {
        let name = FakeTelegramBotAPIState.methods[method.lowercased()] ?? method
        state.withLock { state in
            for _ in 0..<max(0, times) { state.failures.append((name, failure, when)) }
        }
    }

    /// From now on, every send, edit and chat action to `chat` answers 400 "group chat was
    /// upgraded to a supergroup chat" with `migrate_to_chat_id: supergroup`.
    public func migrateChat(_ chat: Int64, to supergroup: Int64) {
        state.withLock { $0.migrated[chat] = supergroup }
    }

    // MARK: - Updates

    /// Queues an update for `getUpdates` (in `update_id` order; one without `update_id` gets the
    /// next). Inline and callback query ids in it are registered as issued now.
    public func enqueue(_ update: JSONValue) {
        state.withLock { $0.enqueue(update, now: .now) }
    }

    /// Queues updates in order.
    public func enqueue(_ updates: [JSONValue]) {
        state.withLock { state in
            for update in updates { state.enqueue(update, now: .now) }
        }
    }

    /// A fresh `update_id`, one past every id seen so far.
    public func nextUpdateID() -> Int {
        state.withLock { state in
            state.lastUpdateID += 1
            return state.lastUpdateID
        }
    }

    /// The ids of updates queued and not yet confirmed.
    public var pendingUpdateIDs: [Int] { state.withLock { $0.pending.compactMap { $0["update_id"]?.intValue } } }
    /// The ids confirmed by a `getUpdates` offset (or dropped with `drop_pending_updates`), in order.
    public var confirmedUpdateIDs: [Int] { state.withLock { $0.confirmed } }
    /// The ids `getUpdates` handed out, in order, repeats included.
    public var deliveredUpdateIDs: [Int] { state.withLock { $0.delivered } }
    /// The ids dropped because their kind was not in `allowed_updates`, as Telegram never sends them.
    public var filteredUpdateIDs: [Int] { state.withLock { $0.filtered } }
    /// The most `getUpdates` calls that were ever waiting at once: more than 1 means two
    /// pollers overlapped (Telegram ends the older with 409). A call whose client closed its
    /// connection (a killed poller) stops waiting then.
    public var mostConcurrentPolls: Int { state.withLock { $0.mostPollsWaiting } }
    /// Every `getUpdates` answered 409 "terminated by other getUpdates request": each one a
    /// poll still open when a newer one came, that is two pollers at once.
    public var pollConflicts: [RecordedTelegramCall] {
        calls("getUpdates").filter { $0.status == 409 && $0.response?["description"]?.stringValue?.contains("terminated by other") == true }
    }
    /// The `offset` of every `getUpdates` call, in order (nil when not given).
    public var offsets: [Int?] { state.withLock { $0.offsets } }
    /// The last `offset` given to `getUpdates`.
    public var lastOffset: Int? { state.withLock { $0.offsets.last(where: { $0 != nil }) ?? nil } }
    /// The `allowed_updates` in force (nil: Telegram's default, which leaves out reactions and
    /// chat members).
    public var allowedUpdates: [String]? { state.withLock { $0.allowedUpdates } }
    /// The webhook set, if any.
    public var webhook: FakeTelegramWebhook? { state.withLock { $0.webhook } }

    /// Whether Telegram would send this update under the `allowed_updates` in force.
    public func wouldDeliver(_ update: JSONValue) -> Bool {
        state.withLock { $0.isAllowed(update) }
    }

    // MARK: - Queries

    /// An `inline_query` update whose id the fake registers as issued now, so that
    /// `answerInlineQuery` is judged against `inlineQueryDeadline`. Enqueue or deliver it.
    public func issueInlineQuery(
        updateID: Int? = nil, id: String? = nil, from user: Int64, firstName: String = "Alice", username: String? = "alice", query: String,
        chatType: String? = "sender", offset: String = ""
    ) -> JSONValue {
        state.withLock { state in
            let id = id ?? state.issueQueryID()
            let updateID = updateID ?? state.lastUpdateID + 1
            let update = TelegramUpdates.inlineQuery(
                updateID: updateID, id: id, from: user, firstName: firstName, username: username, query: query, chatType: chatType, offset: offset)
            state.inlineQueries[id] = FakeTelegramBotAPIState.Query(issued: .now)
            state.note(update, now: .now)
            return update
        }
    }

    /// A `callback_query` update for a button on the bot's message, registered as issued now.
    public func issueCallbackQuery(
        updateID: Int? = nil, id: String? = nil, from user: Int64, firstName: String = "Alice", username: String? = "alice", chat: Int64,
        messageID: Int, data: String
    ) -> JSONValue {
        state.withLock { state in
            let id = id ?? state.issueQueryID()
            let updateID = updateID ?? state.lastUpdateID + 1
            let key = FakeTelegramBotAPIState.MessageKey(chat: chat, id: messageID)
            let message = state.messageIndex[key].map { state.json(state.messages[$0]) }
            var update = TelegramUpdates.callbackQuery(
                updateID: updateID, id: id, from: user, firstName: firstName, username: username, chat: chat, chatType: nil, messageID: messageID,
                data: data, botID: botID, botUsername: botUsername)
            if let message, case .object(var root) = update, case .object(var callback)? = root["callback_query"] {
                callback["message"] = message
                root["callback_query"] = .object(callback)
                update = .object(root)
            }
            state.callbackQueries[id] = FakeTelegramBotAPIState.Query(issued: .now)
            state.note(update, now: .now)
            return update
        }
    }

    /// Every `answerInlineQuery`, accepted or refused, in order.
    public var inlineAnswers: [FakeTelegramInlineAnswer] { state.withLock { $0.inlineAnswers } }
    /// Every `answerCallbackQuery`, accepted or refused, in order.
    public var callbackAnswers: [FakeTelegramCallbackAnswer] { state.withLock { $0.callbackAnswers } }

    // MARK: - Records

    /// The calls received (to `method` only, when given), oldest first; refused ones too. A
    /// `getUpdates` is recorded when it answers.
    public func calls(_ method: String? = nil) -> [RecordedTelegramCall] {
        let name = method.map { FakeTelegramBotAPIState.methods[$0.lowercased()] ?? $0 }
        return state.withLock { $0.calls.filter { name == nil || $0.method == name } }
    }

    /// The next call to `method` (in order, each handed out once, whether it came before or
    /// after this call), waiting for it; nil after `timeout`.
    public func next(_ method: String, timeout: Duration = .seconds(30)) async -> RecordedTelegramCall? {
        await log.next(FakeTelegramBotAPIState.methods[method.lowercased()] ?? method, safety: timeout)
    }

    /// The bot's messages (in `chat` only, when given), in the order sent, deleted ones too.
    public func messages(chat: Int64? = nil) -> [FakeTelegramMessage] {
        state.withLock { $0.messages.filter { chat == nil || $0.chatID == chat } }
    }

    /// One of the bot's messages.
    public func message(chat: Int64, id: Int) -> FakeTelegramMessage? {
        state.withLock { state in
            state.messageIndex[FakeTelegramBotAPIState.MessageKey(chat: chat, id: id)].map { state.messages[$0] }
        }
    }

    /// The commands `setMyCommands` left for a scope (default: `{"type":"default"}`) and
    /// language (default: none); nil when none are set.
    public func commands(scope: JSONValue? = nil, languageCode: String? = nil) -> [JSONValue]? {
        var parameters: [String: JSONValue] = [:]
        if let scope { parameters["scope"] = scope }
        if let languageCode { parameters["language_code"] = .string(languageCode) }
        guard case .success(let key) = FakeTelegramBotAPIState.commandsKey(.object(parameters)) else { return nil }
        return state.withLock { $0.commands[key] }
    }

    // MARK: - Pacing records

    /// When each accepted send (and edit, with `includingEdits`) arrived, oldest first.
    public func sendTimes(chat: Int64? = nil, includingEdits: Bool = true) -> [ContinuousClock.Instant] {
        state.withLock { state in
            state.sends.filter { (chat == nil || $0.chat == chat) && (includingEdits || !$0.isEdit) }.map(\.at)
        }
    }

    /// The most accepted sends to `chat` in any `window` (less `rateLimits.tolerance`).
    public func maximumRate(perChat chat: Int64, window: Duration = .seconds(1), includingEdits: Bool = true) -> Int {
        state.withLock { $0.maximum($0.sendsByChat[chat] ?? [], window: window, includingEdits: includingEdits) }
    }

    /// The most accepted sends to the group `chat` in any `window` (a minute by default).
    public func maximumRate(perGroup chat: Int64, window: Duration = .seconds(60), includingEdits: Bool = true) -> Int {
        state.withLock { $0.maximum($0.sendsByChat[chat] ?? [], window: window, includingEdits: includingEdits) }
    }

    /// The most accepted sends across all chats in any `window`.
    public func maximumOverallRate(window: Duration = .seconds(1), includingEdits: Bool = true) -> Int {
        state.withLock { $0.maximum($0.sends, window: window, includingEdits: includingEdits) }
    }

    // MARK: - Webhook delivery

    /// Delivers `update` to the webhook set through `setWebhook`, with its secret token, as
    /// Telegram does; nil (nothing sent) when its kind is not in the `allowed_updates` in force.
    ///
    /// - Throws: `FakeTelegramDeliveryError.noWebhook` when none is set.
    public func deliver(_ update: JSONValue, timeout: Duration = .seconds(30)) async throws -> (status: Int, body: String)? {
        let (webhook, allowed) = state.withLock { state in
            state.note(update, now: .now)
            return (state.webhook, state.isAllowed(update))
        }
        guard let webhook else { throw FakeTelegramDeliveryError.noWebhook }
        guard allowed else {
            state.withLock { $0.filtered += [update["update_id"]?.intValue].compactMap { $0 } }
            return nil
        }
        return try await Self.deliver(update, to: webhook.url, secretToken: webhook.secretToken, timeout: timeout)
    }

    /// Delivers `update` to `url` as Telegram does, registering its inline or callback query
    /// id as issued now.
    public func deliver(
        _ update: JSONValue, to url: String, secretToken: String?, timeout: Duration = .seconds(30)
    ) async throws -> (status: Int, body: String) {
        state.withLock { $0.note(update, now: .now) }
        return try await Self.deliver(update, to: url, secretToken: secretToken, timeout: timeout)
    }

    /// POSTs `update` to `url` like Telegram's webhook delivery: `Content-Type:
    /// application/json` and, when given, `X-Telegram-Bot-Api-Secret-Token`. Returns the status
    /// and body answered.
    public static func deliver(
        _ update: JSONValue, to url: String, secretToken: String?, timeout: Duration = .seconds(30)
    ) async throws -> (status: Int, body: String) {
        var headers = [("Content-Type", "application/json")]
        if let secretToken { headers.append(("X-Telegram-Bot-Api-Secret-Token", secretToken)) }
        return try await FakeTelegramWebhookClient.post(url: url, body: update.encoded(), headers: headers, timeout: timeout)
    }
}

/// The state behind a lock, shared by the responder and the fake.
final class FakeTelegramShared: Sendable {
    private let mutex: Mutex<FakeTelegramBotAPIState>

    init(_ state: FakeTelegramBotAPIState) {
        mutex = Mutex(state)
    }

    func withLock<T>(_ body: (inout FakeTelegramBotAPIState) -> T) -> T {
        mutex.withLock { body(&$0) }
    }

    func record(_ call: RecordedTelegramCall, log: RequestLog<RecordedTelegramCall>) {
        withLock { $0.calls.append(call) }
        log.append(call, key: call.method)
    }

    /// The `getUpdates` calls waiting now: each one's channel, and what tells that its client closed it.
    private let waiting = Mutex<[Int: (channel: any Channel, peer: FakePeerClosed?)]>([:])
    private let nextWaiting = Atomic<Int>(0)

    /// Counts a poll as waiting, beside those whose clients have not closed theirs; returns its key.
    func startPoll(on channel: any Channel, peer: FakePeerClosed?) -> Int {
        let key = nextWaiting.wrappingAdd(1, ordering: .relaxed).newValue
        let open = waiting.withLock { waiting in
            waiting[key] = (channel, peer)
            return waiting.values.filter { !($0.peer?.isClosed ?? !$0.channel.isActive) }.count
        }
        withLock { $0.mostPollsWaiting = max($0.mostPollsWaiting, open) }
        return key
    }

    func endPoll(_ key: Int) {
        _ = waiting.withLock { $0.removeValue(forKey: key) }
    }

    /// Has each waiting poll's event loop read what has reached its socket: a task run there runs
    /// after the readiness the loop woke to, so a FIN already received is read (twice, for a
    /// loop that was mid-way through a tick).
    func settleWaitingPolls() async {
        let loops = waiting.withLock { $0.values.map(\.channel.eventLoop) }
        for loop in loops {
            for _ in 0..<2 { try? await loop.submit {}.get() }
        }
    }
}

/// The responder's context; keeps the channel so a scripted `.drop` can close it.
struct FakeTelegramContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
    }
}

/// Thrown after a scripted `.drop` closed the connection.
struct FakeTelegramDropped: Error {}

/// Notes when a client closes its side of the connection, or the connection ends, so that a
/// waiting `getUpdates` ends with its poller. The server allows half-closed connections, so a
/// client's FIN (a killed process's sockets closing) leaves the channel active: only this
/// event tells.
final class FakePeerClosed: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = Never
    private let closed = Atomic<Bool>(false)

    var isClosed: Bool { closed.load(ordering: .acquiring) }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .inputClosed? = event as? ChannelEvent { closed.store(true, ordering: .releasing) }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed.store(true, ordering: .releasing)
        context.fireChannelInactive()
    }
}

/// Starts a `FakeTelegramBotAPI`, runs `body` with it and stops it, also when `body` throws.
public func withFakeTelegramBotAPI<T>(
    token: String = FakeTelegramBotAPI.defaultToken,
    botID: Int64 = FakeTelegramBotAPI.defaultBotID,
    botUsername: String = FakeTelegramBotAPI.defaultBotUsername,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (FakeTelegramBotAPI) async throws -> T
) async throws -> T {
    let fake = try await FakeTelegramBotAPI.start(token: token, botID: botID, botUsername: botUsername)
    do {
        let result = try await body(fake)
        await fake.stop()
        return result
    } catch {
        await fake.stop()
        throw error
    }
}
