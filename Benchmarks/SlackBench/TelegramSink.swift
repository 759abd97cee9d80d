import Foundation
import Logging
import RelayCore
import RelayTestSupport
import Synchronization

/// Telegram's Bot API for a `--platform telegram` run: a `FakeTelegramBotAPI` (the relay's
/// `TELEGRAM_API_URL`) whose accepted answers are handed to the `ReplySink` as the replies of
/// the commands they answer. Every command is its own message (`message_id` = command number +
/// 1, see `CommandClient.sendUpdate`) and the relay answers it as a reply to that message, so
/// `reply_parameters.message_id` names the command: first with the run's placeholder ("⏳
/// Working on /translate…", a `sendMessage`), which the answer then edits (`editMessageText`,
/// the reply the sink records, in the placeholder's message). A reply sent as a message of its
/// own (one saying the relay is busy, which Telegram cannot take in the webhook's answer) is
/// recorded as a new message.
///
/// By default the fake does not enforce Telegram's flood limits (`enforceRateLimits = false`):
/// what is measured is the relay's own pacing, and `pacing()` reports how closely it kept to the
/// limits as the fake saw the calls arrive. With `enforcing`, a send past a limit is answered 429
/// with `retry_after`, as Telegram would, and `pacing()` counts those.
final class TelegramSink: PlatformPeer {
    let api: FakeTelegramBotAPI
    private let pump: Task<Void, Never>
    private let placeholders: PlaceholderLog
    /// With `--voice`: the transcription service, and the file id of the note every command carries.
    let voiceNotes: VoiceNotes?
    let voiceFile: String?

    /// The placeholders the relay posted, by `chat:message`, with the command each stands for,
    /// and those an answer was edited into.
    struct Placeholders {
        var command: [String: Int] = [:]
        var answered: Set<String> = []
    }

    final class PlaceholderLog: Sendable {
        let state = Mutex(Placeholders())

        func withLock<T>(_ body: (inout Placeholders) -> T) -> T { state.withLock { body(&$0) } }
    }

    private init(api: FakeTelegramBotAPI, pump: Task<Void, Never>, placeholders: PlaceholderLog, voiceNotes: VoiceNotes?) {
        self.api = api
        self.pump = pump
        self.placeholders = placeholders
        self.voiceNotes = voiceNotes
        voiceFile = voiceNotes.map { api.addFile($0.clip) }
    }

    /// The command's number in an answer ("… this is command number 12"), when it says it.
    static func commandNumber(in text: String) -> Int? {
        guard let range = text.range(of: "command number ") else { return nil }
        return Int(text[range.upperBound...].prefix { $0.isNumber })
    }

    /// The webhook's secret token: the server's `TELEGRAM_WEBHOOK_SECRET`, sent with every update.
    static let webhookSecret = "bench-telegram-webhook-secret"

    /// Starts a fake Bot API and the task that reports its accepted sends to `sink`.
    static func start(forwardingTo sink: ReplySink, enforcing: Bool, voiceNotes: VoiceNotes? = nil, logger: Logger) async throws -> TelegramSink {
        let api = try await FakeTelegramBotAPI.start(logger: logger)
        api.enforceRateLimits = enforcing
        let placeholders = PlaceholderLog()
        let pump = Task {
            await withTaskGroup(of: Void.self) { group in
                // Each `sendMessage` in arrival order; the fake hands each out once.
                group.addTask {
                    while !Task.isCancelled {
                        guard let call = await api.next("sendMessage", timeout: .seconds(1)) else { continue }
                        guard call.status == 200, let replyTo = call.body["reply_parameters"]?["message_id"]?.intValue else { continue }
                        let text = call.body["text"]?.stringValue ?? ""
                        guard !text.hasPrefix("⏳") else {
                            // The run's placeholder: the answer edits it.
                            if let chat = call.body["chat_id"]?.intValue, let id = call.response?["result"]?["message_id"]?.intValue {
                                placeholders.withLock { $0.command["\(chat):\(id)"] = replyTo - 1 }
                            }
                            continue
                        }
                        sink.arrived(replyTo - 1, at: call.arrived, busy: text.contains("ahead of you"))
                    }
                }
                // Each edit: the answer put in the placeholder's message. One Telegram answers
                // "message is not modified" (a resend after a crash) still shows the answer.
                group.addTask {
                    while !Task.isCancelled {
                        guard let call = await api.next("editMessageText", timeout: .seconds(1)) else { continue }
                        let unchanged = call.response?["description"]?.stringValue?.contains("not modified") == true
                        guard call.status == 200 || unchanged, let chat = call.body["chat_id"]?.intValue,
                            let id = call.body["message_id"]?.intValue
                        else { continue }
                        let text = call.body["text"]?.stringValue ?? ""
                        guard !text.hasPrefix("⏳") else { continue }
                        let key = "\(chat):\(id)"
                        let known = placeholders.withLock { state -> Int? in
                            state.answered.insert(key)
                            return state.command[key]
                        }
                        guard let index = known ?? Self.commandNumber(in: text) else { continue }
                        sink.arrived(index, at: call.arrived, message: "tg:\(key)")
                    }
                }
            }
        }
        return TelegramSink(api: api, pump: pump, placeholders: placeholders, voiceNotes: voiceNotes)
    }

    /// The server's environment for this Bot API: webhook mode, as "Telegram in 5 minutes"
    /// deploys it behind a public URL.
    var environment: [String: String] {
        [
            "TELEGRAM_BOT_TOKEN": api.token, "TELEGRAM_MODE": "webhook", "TELEGRAM_API_URL": api.url,
            "TELEGRAM_WEBHOOK_SECRET": Self.webhookSecret,
        ].merging(voiceNotes?.environment ?? [:]) { _, new in new }
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
        /// Placeholders posted, and those no answer was edited into (left showing "⏳": a
        /// placeholder sent again after a crash leaves the first one so).
        var placeholders: Int
        var stalePlaceholders: Int

        var summary: String {
            "Bot API saw at most \(overallPerSecond) messages/s overall and \(perChatPerSecond)/s in one chat, "
                + "\(refused) answered 429, \(chatActions) chat actions, \(placeholders) placeholders (\(stalePlaceholders) left at ⏳)"
        }
    }

    /// How the relay kept to Telegram's limits, for the run's line.
    var summary: String? {
        guard let voiceNotes else { return pacing().summary }
        // Proof the run was of voice notes: each command fetched its file and was transcribed.
        return pacing().summary + ", \(api.calls("getFile").count) getFile calls, \(voiceNotes.transcriptions) transcriptions"
    }

    func pacing() -> Pacing {
        let sends = api.calls("sendMessage") + api.calls("editMessageText")
        let chats = Set(sends.compactMap { $0.body["chat_id"]?.intValue })
        let (placeholders, stale) = self.placeholders.withLock { state in
            (state.command.count, state.command.keys.filter { !state.answered.contains($0) }.count)
        }
        return Pacing(
            refused: sends.filter { $0.status == 429 }.count, overallPerSecond: api.maximumOverallRate(),
            perChatPerSecond: chats.map { api.maximumRate(perChat: Int64($0)) }.max() ?? 0, chatActions: api.calls("sendChatAction").count,
            placeholders: placeholders, stalePlaceholders: stale)
    }

    func stop() async {
        pump.cancel()
        _ = await pump.value
        await api.stop()
    }
}
