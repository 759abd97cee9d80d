import Logging
import RelayCore
import RelayTestSupport
import Synchronization

/// Telegram's Bot API for a `--platform telegram` run: a `FakeTelegramBotAPI` (the relay's
/// `TELEGRAM_API_URL`) whose accepted `sendMessage` calls are handed to the `ReplySink` as the
/// replies of the commands they answer. Every command is its own message (`message_id` =
/// command number + 1, see `CommandClient.sendUpdate`) and the relay answers it as a reply to
/// that message, so `reply_parameters.message_id` names the command. A reply saying the relay is
/// busy (Telegram has no way to put it in the webhook's answer) is marked as such.
///
/// By default the fake does not enforce Telegram's flood limits (`enforceRateLimits = false`):
/// what is measured is the relay's own pacing, and `pacing()` reports how closely it kept to the
/// limits as the fake saw the calls arrive. With `enforcing`, a send past a limit is answered 429
/// with `retry_after`, as Telegram would, and `pacing()` counts those.
final class TelegramSink: PlatformPeer {
    let api: FakeTelegramBotAPI
    private let pump: Task<Void, Never>

    private init(api: FakeTelegramBotAPI, pump: Task<Void, Never>) {
        self.api = api
        self.pump = pump
    }

    /// The webhook's secret token: the server's `TELEGRAM_WEBHOOK_SECRET`, sent with every update.
    static let webhookSecret = "bench-telegram-webhook-secret"

    /// Starts a fake Bot API and the task that reports its accepted sends to `sink`.
    static func start(forwardingTo sink: ReplySink, enforcing: Bool, logger: Logger) async throws -> TelegramSink {
        let api = try await FakeTelegramBotAPI.start(logger: logger)
        api.enforceRateLimits = enforcing
        let pump = Task {
            // Each `sendMessage` in arrival order; the fake hands each out once.
            while !Task.isCancelled {
                guard let call = await api.next("sendMessage", timeout: .seconds(1)) else { continue }
                guard call.status == 200, let replyTo = call.body["reply_parameters"]?["message_id"]?.intValue else { continue }
                let busy = call.body["text"]?.stringValue?.contains("ahead of you") ?? false
                sink.arrived(replyTo - 1, at: call.arrived, busy: busy)
            }
        }
        return TelegramSink(api: api, pump: pump)
    }

    /// The server's environment for this Bot API: webhook mode, as "Telegram in 5 minutes"
    /// deploys it behind a public URL.
    var environment: [String: String] {
        [
            "TELEGRAM_BOT_TOKEN": api.token, "TELEGRAM_MODE": "webhook", "TELEGRAM_API_URL": api.url,
            "TELEGRAM_WEBHOOK_SECRET": Self.webhookSecret,
        ]
    }

    /// What the fake saw of the relay's pacing.
    struct Pacing {
        /// Sends and edits answered 429 (only when the fake enforces the limits).
        var refused: Int
        /// The most accepted messages in any second (less the fake's 50 ms of tolerance), across chats.
        var overallPerSecond: Int
        /// The most accepted messages to one chat in any second (less the tolerance).
        var perChatPerSecond: Int
        /// `sendChatAction` calls ("typing…", one per accepted command; not paced by Telegram).
        var chatActions: Int

        var summary: String {
            "Bot API saw at most \(overallPerSecond) messages/s overall and \(perChatPerSecond)/s in one chat, "
                + "\(refused) answered 429, \(chatActions) chat actions"
        }
    }

    /// How the relay kept to Telegram's limits, for the run's line.
    var summary: String? { pacing().summary }

    func pacing() -> Pacing {
        let sends = api.calls("sendMessage") + api.calls("editMessageText")
        let chats = Set(sends.compactMap { $0.body["chat_id"]?.intValue })
        return Pacing(
            refused: sends.filter { $0.status == 429 }.count, overallPerSecond: api.maximumOverallRate(),
            perChatPerSecond: chats.map { api.maximumRate(perChat: Int64($0)) }.max() ?? 0, chatActions: api.calls("sendChatAction").count)
    }

    func stop() async {
        pump.cancel()
        _ = await pump.value
        await api.stop()
    }
}
