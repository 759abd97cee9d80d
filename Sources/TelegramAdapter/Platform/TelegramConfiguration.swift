/// What the Telegram adapter needs, read from configuration and the environment at start.
///
/// One bot token does everything (the Bot API takes it in the path of every call). Updates come
/// by long polling (the default: a laptop needs no public URL) or by webhook, never both: the Bot
/// API refuses `getUpdates` while a webhook is set. Secrets live only in memory, as
/// `TelegramToken`s and `TelegramWebhookSecret`s, which never print.
public struct TelegramConfiguration: Sendable, Hashable {
    /// Telegram's Bot API, used unless `TELEGRAM_API_URL` names another (a fake in tests).
    public static let defaultAPIURL = "https://api.telegram.org"
    /// The reaction that runs a tribunal on the message it is put on.
    public static let defaultReaction = "🔍"
    /// Slack kept between messages beyond Telegram's limits, for the jitter between booking a
    /// message and its arrival (`TelegramRateLimiter.init`).
    public static let pacingMargin: Duration = .milliseconds(150)
    /// The update kinds the relay asks for (`allowed_updates`), by webhook or polling.
    public static let allowedUpdates = ["message", "callback_query", "inline_query", "message_reaction"]

    /// How updates reach the relay.
    public enum Mode: String, Sendable, Hashable, CaseIterable {
        /// `getUpdates` in a loop, after `deleteWebhook`.
        case polling
        /// Telegram POSTs each update to `/telegram/webhook`.
        case webhook
    }

    /// `TELEGRAM_BOT_TOKEN`: from @BotFather.
    public var botToken: TelegramToken?
    public var mode: Mode
    /// `TELEGRAM_API_URL`: the Bot API base, without a trailing slash.
    public var apiURL: String
    /// `TELEGRAM_WEBHOOK_SECRET`: what Telegram sends in `X-Telegram-Bot-Api-Secret-Token`.
    public var webhookSecret: TelegramWebhookSecret?
    /// The reaction (a Unicode emoji) that runs a tribunal.
    public var tribunalReaction: String
    /// How long one `getUpdates` waits for an update before answering empty.
    public var pollTimeout: Duration
    /// How long an inline query waits for its answer before a placeholder is shown instead.
    public var inlineDeadline: Duration
    /// Whether this process may poll (`TELEGRAM_POLL`). Telegram ends the older of two
    /// `getUpdates` with 409, so of the replicas that may, only the one holding the
    /// `telegram.poll` lease does; false: this one never does.
    public var polls: Bool
    /// How long after start the relay sends nothing, so the limits hold across a restart (the
    /// process before may have sent up to the limits in its last second). Tests make it zero.
    public var quietStart: Duration = .seconds(1)

    public init(
        botToken: TelegramToken? = nil, mode: Mode = .polling, apiURL: String = TelegramConfiguration.defaultAPIURL,
        webhookSecret: TelegramWebhookSecret? = nil, tribunalReaction: String = TelegramConfiguration.defaultReaction,
        pollTimeout: Duration = .seconds(30), inlineDeadline: Duration = .milliseconds(2500), polls: Bool = true
    ) {
        self.botToken = botToken
        self.mode = mode
        var base = apiURL
        while base.hasSuffix("/") { base.removeLast() }
        self.apiURL = base
        self.webhookSecret = webhookSecret
        self.tribunalReaction = tribunalReaction
        self.pollTimeout = pollTimeout
        self.inlineDeadline = inlineDeadline
        self.polls = polls
    }

    public var isEnabled: Bool { botToken != nil }
}

/// The webhook's secret token: 1–256 of `A-Z a-z 0-9 _ -` (Telegram's rule for `secret_token`).
public struct TelegramWebhookSecret: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    public let secret: String

    /// Nil when Telegram would refuse it in `setWebhook`.
    public init?(_ secret: String) {
        let allowed = { (byte: UInt8) in
            byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte)
                || (0x61...0x7A).contains(byte)
        }
        guard (1...256).contains(secret.utf8.count), secret.utf8.allSatisfy(allowed) else { return nil }
        self.secret = secret
    }

    public var description: String { "<telegram webhook secret>" }
    public var debugDescription: String { description }
}
