import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Prometheus
import RelayCore
import RelayPipeline
import RelayServer
import RelayTestSupport
import RelayTribunal
import RequestTraceProfile
import SlackAdapter
import TelegramAdapter

/// `request-trace`: which source files one request runs through, measured by code coverage.
///
/// Built with `--enable-code-coverage` (see `Benchmarks/request-trace.sh`), it starts the relay
/// as `serve` builds it, against fakes on 127.0.0.1, resets the coverage counters once the
/// relay is ready, sends one request and waits until its reply has been delivered and marked,
/// then writes the counters to a profile. Every `Sources/` file with a line run in that window
/// is a file the request crossed. Two traces: a Slack `/translate fr hello` over HTTP (the
/// response_url reply), and a Telegram `/tribunal` in a group over the webhook (the
/// `sendMessage` reply), both on the Rhea Tribunal backend.
@main
struct RequestTrace {
    static func main() async throws {
        guard let profile = Profile() else {
            FileHandle.standardError.write(Data("request-trace: not built with --enable-code-coverage (see Benchmarks/request-trace.sh)\n".utf8))
            exit(2)
        }
        // One trace per process, so nothing of one relay's life runs in the other's window.
        let arguments = Array(CommandLine.arguments.dropFirst())
        let file = arguments.count > 1 ? arguments[1] : "request-trace.profraw"
        switch arguments.first {
        case "slack": try await slackTranslate(profile: profile, to: file)
        case "telegram": try await telegramTribunal(profile: profile, to: file)
        default:
            FileHandle.standardError.write(Data("usage: request-trace slack|telegram PROFRAW\n".utf8))
            exit(2)
        }
    }

    static let registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()

    static var logger: Logger {
        var logger = Logger(label: "request-trace")
        logger.logLevel = .warning
        return logger
    }

    static func databasePath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("trace-\(UUID().uuidString).sqlite").path
    }

    static func removeDatabase(_ path: String) {
        for suffix in ["", "-wal", "-shm", ".key"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// The relay's backend: the fake Rhea Tribunal, with credentials (so `/tribunal` is `POST /tribunal`).
    static func configure(_ configuration: inout AppConfiguration, tribunal: FakeRheaTribunal) {
        configuration.tribunal.baseURL = tribunal.url
        configuration.tribunal.token = FakeRheaTribunal.defaultToken
        configuration.delivery = DeliveryPolicy(pollInterval: .milliseconds(50), drainTimeout: .seconds(1))
        configuration.shutdownGrace = .seconds(1)
    }

    /// Lets what the relay does once at start (its first retention pass, the store's first
    /// checkpoint) finish before counting, so only the request's own work is counted.
    static func settle() async throws {
        try await Task.sleep(for: .seconds(1))
    }

    static func slackTranslate(profile: Profile, to file: String) async throws {
        let path = databasePath()
        defer { removeDatabase(path) }
        let signingSecret = "trace-signing-secret-0123456789abcdef"
        try await withFakeRheaTribunal { tribunal in
            try await withFakeSlackWebAPI { slack in
                var configuration = AppConfiguration(storePath: path)
                configure(&configuration, tribunal: tribunal)
                configuration.platforms = [
                    SlackPlatform(configuration: SlackConfiguration(signingSecret: signingSecret, botToken: slack.botToken, apiURL: slack.apiURL))
                ]
                let app = try await RelayApplication.build(configuration: configuration, registry: registry, logger: logger)
                try await app.test(.live) { client in
                    let responseURL = slack.makeResponseURL()
                    let body = SlackPayloads.slashCommand(
                        command: "/translate", text: "fr hello", responseURL: responseURL, team: "T0TRACE", channel: "C0TRACE", user: "U0TRACE",
                        triggerID: "trigger-trace")
                    let timestamp = SlackSigner.now()
                    let signature = SlackSigner(signingSecret: signingSecret).signature(body: body, timestamp: timestamp)
                    let headers: HTTPFields = [
                        .contentType: "application/x-www-form-urlencoded", SlackHeaders.requestTimestamp: String(timestamp),
                        SlackHeaders.signature: signature,
                    ]
                    try await settle()
                    profile.reset()
                    let response = try await client.execute(uri: "/slack/commands", method: .post, headers: headers, body: ByteBuffer(string: body))
                    guard response.status == .ok, await slack.next(responseURL: responseURL) != nil else {
                        throw TraceFailure("the Slack reply did not come (status \(response.status))")
                    }
                    // The delivery is marked after the platform answered.
                    try await Task.sleep(for: .milliseconds(300))
                    profile.write(to: file)
                }
            }
        }
        print("slack /translate: \(file)")
    }

    static func telegramTribunal(profile: Profile, to file: String) async throws {
        let path = databasePath()
        defer { removeDatabase(path) }
        let secret = "trace-Secret_0123456789"
        try await withFakeRheaTribunal { tribunal in
            try await withFakeTelegramBotAPI { telegram in
                var configuration = AppConfiguration(storePath: path)
                configure(&configuration, tribunal: tribunal)
                var settings = TelegramConfiguration(
                    botToken: TelegramToken(telegram.token), mode: .webhook, apiURL: telegram.url, webhookSecret: TelegramWebhookSecret(secret))
                settings.quietStart = .zero
                configuration.platforms = [TelegramPlatform(configuration: settings)]
                let app = try await RelayApplication.build(configuration: configuration, registry: registry, logger: logger)
                try await app.test(.live) { client in
                    let group: Int64 = -1_001_234_567_890
                    let update = TelegramUpdates.message(
                        updateID: 900, messageID: 30, chat: group, chatType: "supergroup", chatTitle: "Trace", from: 41_000_001,
                        text: "/tribunal The Eiffel Tower is in Berlin")
                    var headers: HTTPFields = [.contentType: "application/json"]
                    headers[TelegramWebhookRoutes.header] = secret
                    try await settle()
                    profile.reset()
                    let response = try await client.execute(
                        uri: "/telegram/webhook", method: .post, headers: headers, body: ByteBuffer(bytes: update.encoded()))
                    guard response.status == .ok, await telegram.next("sendMessage") != nil else {
                        throw TraceFailure("the Telegram reply did not come (status \(response.status))")
                    }
                    try await Task.sleep(for: .milliseconds(300))
                    profile.write(to: file)
                }
            }
        }
        print("telegram /tribunal: \(file)")
    }
}

struct TraceFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The LLVM profile runtime, when the build has it (`--enable-code-coverage`).
struct Profile: Sendable {
    init?() {
        guard request_trace_profile_available() != 0 else { return nil }
    }

    func reset() { request_trace_profile_reset() }

    func write(to file: String) {
        _ = request_trace_profile_write(file, file + ".at-exit")
        request_trace_profile_reset()
    }
}
