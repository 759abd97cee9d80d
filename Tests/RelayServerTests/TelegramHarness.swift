import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import RelayCore
import RelayServer
import RelayTestSupport
import RelayTribunal
import TelegramAdapter
import Testing

/// The fakes a relay talks to for Telegram: the Bot API and the Rhea Tribunal, real servers on
/// 127.0.0.1, plus the SQLite file of the relay's inbox and outbox.
struct TelegramFakes {
    let telegram: FakeTelegramBotAPI
    let tribunal: FakeRheaTribunal
    let database: TemporaryDatabase

    static let adminToken = "telegram-admin-token-0123456789abcdef"
    static let webhookSecret = "webhook-Secret_0123456789"
    /// People and chats of the scenarios.
    static let alice: Int64 = 41_000_001
    static let bob: Int64 = 41_000_002
    static let group: Int64 = -1_001_234_567_890

    static func with<T>(_ body: (TelegramFakes) async throws -> T) async throws -> T {
        try await TemporaryDatabase.with { database in
            try await withFakeRheaTribunal { tribunal in
                try await withFakeTelegramBotAPI { telegram in
                    try await body(TelegramFakes(telegram: telegram, tribunal: tribunal, database: database))
                }
            }
        }
    }

    /// A relay configured as `serve` would be, pointed at the fakes, with fast timings.
    func configuration(mode: TelegramConfiguration.Mode = .webhook, inlineDeadline: Duration = .seconds(2)) -> AppConfiguration {
        var configuration = AppConfiguration(storePath: database.path)
        configuration.tribunal.baseURL = tribunal.url
        configuration.tribunal.token = FakeRheaTribunal.defaultToken
        configuration.tribunal.timeouts = .init(quick: .seconds(30), dialog: .seconds(30), tribunal: .seconds(30), health: .seconds(1))
        configuration.tribunal.retry = RetryPolicy(attempts: 2, baseDelay: .milliseconds(10), maxDelay: .milliseconds(20))
        var telegram = TelegramConfiguration(
            botToken: TelegramToken(self.telegram.token), mode: mode, apiURL: self.telegram.url, webhookSecret: TelegramWebhookSecret(Self.webhookSecret),
            pollTimeout: .seconds(1), inlineDeadline: inlineDeadline)
        telegram.quietStart = .zero
        configuration.platforms = [TelegramPlatform(configuration: telegram)]
        configuration.delivery = SlackFakes.fastDelivery
        configuration.shutdownGrace = .seconds(1)
        configuration.http.idleTimeout = HarnessTimings.idleTimeout
        configuration.http.adminToken = Self.adminToken
        return configuration
    }

    /// Builds the relay as `serve` does and runs it on a loopback port while `body` talks to it.
    func withRelay<T: Sendable>(_ configuration: AppConfiguration, _ body: @escaping @Sendable (TelegramRelay) async throws -> T) async throws -> T {
        var logger = Logger(label: "test.telegram-e2e")
        logger.logLevel = .warning
        let app = try await RelayApplication.build(configuration: configuration, registry: TestMetrics.registry, logger: logger)
        let fakes = self
        return try await app.test(.live) { client in
            try await body(TelegramRelay(client: client, fakes: fakes))
        }
    }
}

/// A running relay and the fakes around it.
struct TelegramRelay: Sendable {
    let client: any TestClientProtocol
    let fakes: TelegramFakes

    var telegram: FakeTelegramBotAPI { fakes.telegram }
    var tribunal: FakeRheaTribunal { fakes.tribunal }

    /// POSTs `update` to `/telegram/webhook` as Telegram does, with `secret` in the secret-token
    /// header (nil: no header).
    func deliver(_ update: JSONValue, secret: String? = TelegramFakes.webhookSecret) async throws -> HarnessResponse {
        try await deliver(body: String(decoding: update.encoded(), as: UTF8.self), secret: secret)
    }

    /// POSTs `body`, bytes as they are (as Telegram escapes JSON, a body past a cap).
    func deliver(body: String, secret: String? = TelegramFakes.webhookSecret) async throws -> HarnessResponse {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let secret { headers[TelegramWebhookRoutes.header] = secret }
        return try await client.patientExecute(uri: "/telegram/webhook", method: .post, headers: headers, body: ByteBuffer(string: body))
    }

    /// A text message from `from` in `chat` (a private chat when `chat` is the person's id).
    func message(
        _ text: String, update: Int, id: Int = 500, chat: Int64 = TelegramFakes.alice, from: Int64 = TelegramFakes.alice,
        replyTo: (messageID: Int, text: String, fromID: Int64, isBot: Bool)? = nil
    ) -> JSONValue {
        TelegramUpdates.message(
            updateID: update, messageID: id, chat: chat, chatType: chat > 0 ? "private" : "supergroup", chatTitle: chat > 0 ? nil : "Team", from: from,
            firstName: from == TelegramFakes.alice ? "Alice" : "Bob", username: from == TelegramFakes.alice ? "alice" : "bob", text: text, replyTo: replyTo)
    }

    /// Waits until no run is in flight and the outbox is empty (`safety`: how long at most; a run
    /// that transcribes a voice note with a real model takes longer on a loaded machine).
    func settled(safety: Duration = .seconds(30)) async throws {
        try await waitUntilIdle(client, adminToken: TelegramFakes.adminToken, safety: safety)
    }
}
