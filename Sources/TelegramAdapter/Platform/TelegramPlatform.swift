import AsyncHTTPClient
import Hummingbird
public import Logging
import RelayCore
import RelayHTTP
import RelayPipeline
public import RelayPlatform
import ServiceLifecycle

/// Telegram, as the server composes it: reads the `telegram.*` section, and when connected either
/// polls for updates (the default) or serves `/telegram/webhook`, and delivers the outbox through
/// the Bot API, paced within Telegram's limits.
public struct TelegramPlatform: ChatPlatform {
    public static let name = "telegram"
    public static let secretVariables = ["TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET"]
    public static let deployVariables = [
        // BotFather's shape, which the token is checked to have.
        DeployVariable("TELEGRAM_BOT_TOKEN", example: "123456789:AAE-deploy_test-token"), DeployVariable("TELEGRAM_WEBHOOK_SECRET"),
    ]
    public static let apiURLVariables = ["TELEGRAM_API_URL"]

    public let configuration: TelegramConfiguration
    /// The settings given while Telegram stays off, for its status.
    let given: [String]

    public init(configuration: TelegramConfiguration) {
        self.configuration = configuration
        self.given = []
    }

    /// The bot token and webhook secret from the environment or files, never from the YAML itself.
    public init(configuration values: ConfigValues) throws {
        var telegram = TelegramConfiguration(
            botToken: try values.secret("telegram.botToken", fileKey: "telegram.botTokenFile").map(TelegramToken.init),
            apiURL: try values.url("telegram.apiURL") ?? TelegramConfiguration.defaultAPIURL)
        if let token = telegram.botToken, !Self.looksLikeToken(token.secret) {
            throw ConfigurationError("TELEGRAM_BOT_TOKEN (telegram.botToken) must be the token @BotFather gave, like 123456789:AAE…")
        }
        if let mode = values.string("telegram.mode") {
            guard let chosen = TelegramConfiguration.Mode(rawValue: mode.lowercased()) else {
                throw ConfigurationError("TELEGRAM_MODE (telegram.mode) must be polling or webhook, got `\(mode)`.")
            }
            telegram.mode = chosen
        }
        if let secret = try values.secret("telegram.webhookSecret", fileKey: "telegram.webhookSecretFile") {
            guard let valid = TelegramWebhookSecret(secret) else {
                throw ConfigurationError(
                    "TELEGRAM_WEBHOOK_SECRET (telegram.webhookSecret) must be 1–256 characters of A-Z, a-z, 0-9, _ and -, as Telegram requires.")
            }
            telegram.webhookSecret = valid
        }
        if telegram.mode == .webhook, telegram.botToken != nil, telegram.webhookSecret == nil {
            throw ConfigurationError(
                "telegram.mode is webhook, so TELEGRAM_WEBHOOK_SECRET must be set: without it anyone could post updates to /telegram/webhook.")
        }
        if let reaction = values.string("telegram.reaction"), !reaction.isEmpty { telegram.tribunalReaction = reaction }
        if let timeout = try values.seconds("telegram.pollTimeout") {
            guard timeout >= .seconds(1), timeout <= .seconds(50) else {
                throw ConfigurationError("TELEGRAM_POLL_TIMEOUT (telegram.pollTimeout) must be 1–50 seconds.")
            }
            telegram.pollTimeout = timeout
        }
        if let deadline = try values.seconds("telegram.inlineDeadline") {
            guard deadline > .zero, deadline <= .seconds(10) else {
                throw ConfigurationError("TELEGRAM_INLINE_DEADLINE (telegram.inlineDeadline) must be more than 0 and at most 10 seconds.")
            }
            telegram.inlineDeadline = deadline
        }
        if let polls = try values.bool("telegram.poll") { telegram.polls = polls }
        self.configuration = telegram
        self.given = values.given([
            "telegram.mode", "telegram.webhookSecret", "telegram.webhookSecretFile", "telegram.apiURL", "telegram.poll", "telegram.pollTimeout",
        ])
    }

    /// `<digits>:<35 or so of A-Z a-z 0-9 _ ->`: BotFather's shape, checked so a pasted
    /// placeholder or a stray newline fails at start rather than as 401s.
    static func looksLikeToken(_ token: String) -> Bool {
        let parts = token.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].allSatisfy(\.isASCII), parts[0].allSatisfy(\.isNumber), !parts[1].isEmpty else { return false }
        return parts[1].allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
    }

    /// Nothing: Telegram hands over no URL. Answers and files go through `TELEGRAM_API_URL`, a
    /// file's `file_path` checked to be a plain relative path.
    public var callbackRule: CallbackRule { .nothing }

    public var status: PlatformStatus {
        guard configuration.isEnabled else { return .off(given: given, missing: "TELEGRAM_BOT_TOKEN (from @BotFather)") }
        switch configuration.mode {
        case .webhook:
            return .on("webhook at /telegram/webhook")
        case .polling where configuration.polls:
            return .on("long polling")
        case .polling:
            return .on("delivery only", but: "TELEGRAM_POLL is false: updates reach the process that polls")
        }
    }

    public func connect(_ context: PlatformContext) throws -> any PlatformConnection {
        guard let token = configuration.botToken else { throw ConfigurationError("Telegram is off: set TELEGRAM_BOT_TOKEN.") }
        let limiter = TelegramRateLimiter(quietUntil: context.clock.now + configuration.quietStart, margin: TelegramConfiguration.pacingMargin)
        let api = TelegramBotClient(
            transport: context.transport, apiURL: configuration.apiURL, token: token, limiter: limiter, clock: context.clock, logger: context.logger)
        let (apiURL, clock, logger) = (configuration.apiURL, context.clock, context.logger)
        return TelegramConnection(
            configuration: configuration, api: api, limiter: limiter, bot: String(token.secret.prefix { $0 != ":" }), log: TelegramChatLog(),
            clock: context.clock,
            lease: context.connectionLease("telegram.poll"),
            pollingSession: { poll in
                // The poll's connection is its own, closed before the session ends (TelegramPoller).
                try? await HTTPTransport.withOwnClient(maxConnectionsPerHost: 1) { transport in
                    await poll(TelegramBotClient(transport: transport, apiURL: apiURL, token: token, clock: clock, logger: logger))
                }
            },
            credentials: context.credentials, logger: context.logger)
    }

    /// Sends the command list (`setMyCommands`, each language's), and with `request.webhookURL`
    /// (`--webhook`, https only) points Telegram at it (`setWebhook` with the secret and the
    /// update kinds the relay reads); without it the relay polls. What was done, in words.
    public static let registrationHelp =
        "needs TELEGRAM_BOT_TOKEN (from @BotFather); sends the command list, and with --webhook https://your.server/telegram/webhook (and TELEGRAM_WEBHOOK_SECRET) points Telegram at the relay."

    /// The bot token, by `getMe`.
    public func checkCredentials(logger: Logger) async -> CredentialCheck? {
        guard let token = configuration.botToken else { return nil }
        return await CredentialCheck.asking { transport in
            do throws(TelegramAPIError) {
                let me = try await TelegramBotClient(transport: transport, apiURL: configuration.apiURL, token: token, logger: logger).getMe()
                return .accepted("TELEGRAM_BOT_TOKEN is @\(me.username)'s")
            } catch {
                return error.credentialCheck("TELEGRAM_BOT_TOKEN", fix: "Copy the token again from @BotFather (/mybots → API Token).")
            }
        }
    }

    public func register(_ request: RegistrationRequest, logger: Logger) async throws -> [String] {
        let webhookURL = request.webhookURL
        if let webhookURL, !webhookURL.lowercased().hasPrefix("https://") {
            throw ConfigurationError("--webhook must be an https:// URL (Telegram sends updates only over HTTPS), got `\(webhookURL)`.")
        }
        guard let token = configuration.botToken else { throw ConfigurationError("register telegram needs TELEGRAM_BOT_TOKEN (from @BotFather).") }
        return try await HTTPTransport.withOwnClient { transport in
            let api = TelegramBotClient(transport: transport, apiURL: configuration.apiURL, token: token, logger: logger)
            return try await register(api: api, webhookURL: webhookURL)
        }
    }

    private func register(api: any TelegramBotAPI, webhookURL: String?) async throws -> [String] {
        var secret: TelegramWebhookSecret?
        if webhookURL != nil {
            guard let configured = configuration.webhookSecret else {
                throw ConfigurationError(
                    "--webhook needs TELEGRAM_WEBHOOK_SECRET: Telegram sends it with every update, and the relay refuses updates without it.")
            }
            secret = configured
        }
        var done: [String] = []
        do throws(TelegramAPIError) {
            let payloads = TelegramCommands.payloads()
            for payload in payloads { try await api.setMyCommands(payload) }
            done.append("Registered the commands with Telegram (\(payloads.count) list\(payloads.count == 1 ? "" : "s")).")
            if let webhookURL, let secret {
                try await api.setWebhook(url: webhookURL, secretToken: secret.secret, allowedUpdates: TelegramConfiguration.allowedUpdates, maxConnections: 40)
                done.append("Telegram now sends updates to \(webhookURL); set TELEGRAM_MODE=webhook on the relay.")
            }
        } catch {
            throw error.registrationFailure(refused: "Telegram refused")
        }
        return done
    }
}

/// A connected Telegram: its client, and what it adds to the server.
struct TelegramConnection: PlatformConnection {
    let configuration: TelegramConfiguration
    let api: any TelegramBotAPI
    /// The client's limiter, shared with the sender so the outbox can ask when a message can go.
    let limiter: TelegramRateLimiter
    /// The bot's id, the token's first part (not secret: it is the bot's user id).
    let bot: String
    let log: TelegramChatLog
    let clock: any RelayClock
    /// Who polls among the replicas.
    let lease: ConnectionLease
    /// Where the poll itself runs: on a client of its own, shut down when the poll ends.
    let pollingSession: TelegramPoller.Session
    let credentials: CredentialReporter
    let logger: Logger

    var sender: any ReplySender { Deliverer(TelegramDelivery(api: api, log: log, logger: logger, limiter: limiter), logger: logger) }

    var reader: (any ConversationReader)? { TelegramConversationReader(api: api, log: log, logger: logger) }

    func inbound(_ inbox: any RelayInbox) -> TelegramInbound {
        TelegramInbound(
            inbox: inbox, api: api, log: log, identity: TelegramIdentity(api: api, logger: logger),
            inline: TelegramInlineAnswerer(inbox: inbox, api: api, deadline: configuration.inlineDeadline, clock: clock, logger: logger),
            configuration: configuration, logger: logger)
    }

    func addRoutes(to router: Router<BasicRequestContext>, inbox: any RelayInbox) {
        guard configuration.mode == .webhook, let secret = configuration.webhookSecret else { return }
        TelegramWebhookRoutes(secret: secret, inbound: inbound(inbox), logger: logger).add(to: router)
    }

    func services(inbox: any RelayInbox) -> [any Service] {
        guard configuration.mode == .polling, configuration.polls else { return [] }
        let poller = TelegramPoller(
            session: pollingSession, inbound: inbound(inbox), timeout: configuration.pollTimeout, bot: bot, clock: clock, credentials: credentials,
            logger: logger)
        return [lease.service { grant in await poller.run(grant) }]
    }
}
