import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import RelayCore
import RelayServer
import RelayTestSupport
import RelayTribunal
import SlackAdapter
import Testing

/// Slack's published example ("Verifying requests from Slack"), as in SlackAdapterTests.
enum PublishedSlackExample {
    static let signingSecret = "8f742231b10e8888abcd99yyyzzz85a5"
    static let timestamp = 1_531_420_618
    static let body =
        "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
    static let signature = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
}

/// The fakes a relay talks to: Slack's Web API (and response URLs) and the Rhea Tribunal, both
/// real servers on 127.0.0.1, plus the SQLite file the relay keeps its outbox in.
struct SlackFakes {
    let slack: FakeSlackWebAPI
    let tribunal: FakeRheaTribunal
    let database: TemporaryDatabase

    /// Starts both fakes and a fresh database path, runs `body`, then stops the fakes.
    static func with<T>(_ body: (SlackFakes) async throws -> T) async throws -> T {
        try await TemporaryDatabase.with { database in
            try await withFakeRheaTribunal { tribunal in
                try await withFakeSlackWebAPI { slack in
                    try await body(SlackFakes(slack: slack, tribunal: tribunal, database: database))
                }
            }
        }
    }

    /// The signing secret the relay is configured with (HTTP mode).
    static let signingSecret = "e2e-signing-secret-0123456789abcdef"

    /// A relay configured as `serve` would be from the environment, pointed at the fakes, with
    /// fast delivery timings.
    ///
    /// - Parameters:
    ///   - signingSecret: nil turns HTTP mode off (Socket Mode only).
    ///   - appToken: turns Socket Mode on.
    ///   - apiURL: the Slack Web API base; the fake's unless given (e.g. an unreachable one).
    ///   - delivery: the outbox worker's policy.
    func configuration(
        signingSecret: String? = SlackFakes.signingSecret, appToken: String? = nil, apiURL: String? = nil,
        delivery: DeliveryPolicy = SlackFakes.fastDelivery
    ) -> AppConfiguration {
        var configuration = AppConfiguration(storePath: database.path)
        configuration.tribunal.baseURL = tribunal.url
        configuration.tribunal.token = FakeRheaTribunal.defaultToken
        configuration.tribunal.timeouts = .init(quick: .seconds(5), dialog: .seconds(5), tribunal: .seconds(5), health: .seconds(1))
        configuration.tribunal.retry = RetryPolicy(attempts: 2, baseDelay: .milliseconds(10), maxDelay: .milliseconds(20))
        configuration.platforms = [
            SlackPlatform(
                configuration: SlackConfiguration(
                    signingSecret: signingSecret, botToken: slack.botToken, appToken: appToken, apiURL: apiURL ?? slack.apiURL))
        ]
        configuration.delivery = delivery
        configuration.shutdownGrace = .seconds(1)
        return configuration
    }

    /// Short poll interval and tiny retry delays, so a retry takes milliseconds (Slack's own
    /// pacing of about one message a second per channel still applies).
    static let fastDelivery = DeliveryPolicy(
        maxAttempts: 10, retry: RetryPolicy(attempts: 10, baseDelay: .milliseconds(10), maxDelay: .milliseconds(50)), lease: .seconds(30), pollInterval: .milliseconds(50),
        drainTimeout: .seconds(1))

    /// Builds the relay as `serve` does and runs it on a loopback port while `body` talks to it
    /// over HTTP; then shuts it down gracefully (as SIGTERM would) and waits until it stopped.
    func withRelay<T: Sendable>(
        _ configuration: AppConfiguration, _ body: @escaping @Sendable (RelayUnderTest) async throws -> T
    ) async throws -> T {
        var logger = Logger(label: "test.slack-e2e")
        logger.logLevel = .warning
        let app = try await RelayApplication.build(configuration: configuration, registry: TestMetrics.registry, logger: logger)
        let fakes = self
        return try await app.test(.live) { client in
            try await body(RelayUnderTest(client: client, fakes: fakes, signer: SlackSigner(signingSecret: configuration.slackSigningSecret ?? "")))
        }
    }
}

/// A running relay and the fakes around it, with requests signed exactly as Slack signs them.
struct RelayUnderTest: Sendable {
    let client: any TestClientProtocol
    let fakes: SlackFakes
    let signer: SlackSigner

    var slack: FakeSlackWebAPI { fakes.slack }
    var tribunal: FakeRheaTribunal { fakes.tribunal }

    /// How a request is signed.
    enum Signing: Sendable {
        /// As Slack signs it, now.
        case valid
        /// With the right secret, `seconds` ago (negative: in the future).
        case aged(seconds: Int)
        /// With another secret.
        case forged
        /// A valid signature of other bytes than those sent.
        case ofOtherBody(String)
    }

    /// POSTs `body` to `path`, signed as asked, with any extra headers (`X-Slack-Retry-Num`…).
    func post(
        _ path: String, body: String, contentType: String, signing: Signing = .valid, extraHeaders: HTTPFields = [:]
    ) async throws -> TestResponse {
        let now = SlackSigner.now()
        let (timestamp, signature): (Int, String) =
            switch signing {
            case .valid: (now, signer.signature(body: body, timestamp: now))
            case .aged(let seconds): (now - seconds, signer.signature(body: body, timestamp: now - seconds))
            case .forged: (now, SlackSigner(signingSecret: "not-the-" + signer.signingSecret).signature(body: body, timestamp: now))
            case .ofOtherBody(let other): (now, signer.signature(body: other, timestamp: now))
            }
        var headers: HTTPFields = [
            .contentType: contentType, SlackHeaders.requestTimestamp: String(timestamp), SlackHeaders.signature: signature,
        ]
        headers.append(contentsOf: extraHeaders)
        return try await client.execute(uri: path, method: .post, headers: headers, body: ByteBuffer(string: body))
    }

    /// A slash command as Slack POSTs it to `/slack/commands`.
    func slashCommand(
        _ command: String, text: String, responseURL: String, channel: String = "C0E2E", user: String = "U0HUMAN",
        triggerID: String = "trigger-\(UUID().uuidString)", signing: Signing = .valid
    ) async throws -> TestResponse {
        let body = SlackWire.slashCommandBody(command: command, text: text, responseURL: responseURL, channel: channel, user: user, triggerID: triggerID)
        return try await post("/slack/commands", body: body, contentType: "application/x-www-form-urlencoded", signing: signing)
    }

    /// An Events API body as Slack POSTs it to `/slack/events`; `retry` adds the headers of
    /// Slack's redeliveries (`X-Slack-Retry-Num`, `X-Slack-Retry-Reason`).
    func event(_ body: JSONValue, retry: Int? = nil, signing: Signing = .valid) async throws -> TestResponse {
        var extra: HTTPFields = [:]
        if let retry {
            extra[SlackHeaders.retryNumber] = String(retry)
            extra[SlackHeaders.retryReason] = "http_timeout"
        }
        let text = String(decoding: body.encoded(), as: UTF8.self)
        return try await post("/slack/events", body: text, contentType: "application/json", signing: signing, extraHeaders: extra)
    }

    /// Waits until the relay is idle: no run in flight and nothing pending in the outbox (from
    /// `/readyz`). Then nothing more can be sent, so "exactly once" can be checked without
    /// waiting for a fixed time.
    func settled() async throws {
        try await eventually("the relay to be idle (no run in flight, outbox empty)") {
            let response = try await client.execute(uri: "/readyz", method: .get, headers: [:], body: nil)
            let report = JSONValue.parse(response.body.readableBytesView)
            return report?["runs"]?["inFlight"]?.intValue == 0 && report?["store"]?["outboxDepth"]?.intValue == 0
        }
    }

    /// The relay's outbox depth, from `/readyz`.
    func outboxDepth() async throws -> Int? {
        let response = try await client.execute(uri: "/readyz", method: .get, headers: [:], body: nil)
        return JSONValue.parse(response.body.readableBytesView)?["store"]?["outboxDepth"]?.intValue
    }
}

/// Slack's payloads, in the shapes Slack sends (see platforms.md, "1. Slack").
enum SlackWire {
    static let team = "T0E2E"

    /// `application/x-www-form-urlencoded`, as Slack encodes it (space as `+`).
    static func formEncode(_ fields: [(String, String)]) -> String {
        fields.map { "\(formEncode($0.0))=\(formEncode($0.1))" }.joined(separator: "&")
    }

    /// One form value: ASCII letters, digits and `-._*` as they are, space as `+`, every other
    /// byte of the UTF-8 as `%XX`.
    static func formEncode(_ value: String) -> String {
        let unreserved = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._*".utf8)
        return value.utf8.map { byte -> String in
            if byte == UInt8(ascii: " ") { return "+" }
            if unreserved.contains(byte) { return String(UnicodeScalar(byte)) }
            return String(format: "%%%02X", byte)
        }.joined()
    }

    static func slashCommandBody(command: String, text: String, responseURL: String, channel: String, user: String, triggerID: String) -> String {
        formEncode([
            ("token", "legacy-verification-token"), ("team_id", team), ("team_domain", "e2e"), ("channel_id", channel),
            ("channel_name", "general"), ("user_id", user), ("user_name", "human"), ("command", command), ("text", text),
            ("api_app_id", "A0E2E"), ("is_enterprise_install", "false"), ("response_url", responseURL), ("trigger_id", triggerID),
        ])
    }

    /// An `event_callback` envelope around `event`.
    static func callback(eventID: String, event: JSONValue) -> JSONValue {
        [
            "token": "legacy-verification-token", "team_id": .string(team), "api_app_id": "A0E2E", "type": "event_callback",
            "event_id": .string(eventID), "event_time": 1_700_000_100, "event_context": "4-eyJldCI6ImFwcF9tZW50aW9uIn0",
            "authorizations": [
                ["enterprise_id": nil, "team_id": .string(team), "user_id": .string(FakeSlackWebAPI.botUserID), "is_bot": true, "is_enterprise_install": false]
            ],
            "is_ext_shared_channel": false, "event": event,
        ]
    }

    /// `app_mention`: `@bot` + `text`, posted at `ts` in `channel` (in a thread when `threadTS`).
    static func appMention(eventID: String, text: String, channel: String = "C0E2E", ts: String, threadTS: String? = nil) -> JSONValue {
        var event: [String: JSONValue] = [
            "type": "app_mention", "user": "U0HUMAN", "text": .string("<@\(FakeSlackWebAPI.botUserID)> \(text)"), "ts": .string(ts),
            "channel": .string(channel), "event_ts": .string(ts), "team": .string(team),
            "client_msg_id": .string(UUID().uuidString.lowercased()),
        ]
        if let threadTS { event["thread_ts"] = .string(threadTS) }
        return callback(eventID: eventID, event: .object(event))
    }

    /// `reaction_added` of `reaction` on the message `ts` in `channel`.
    static func reactionAdded(eventID: String, reaction: String, channel: String, ts: String, itemUser: String = "U0AUTHOR") -> JSONValue {
        callback(
            eventID: eventID,
            event: [
                "type": "reaction_added", "user": "U0HUMAN", "reaction": .string(reaction), "item_user": .string(itemUser),
                "item": ["type": "message", "channel": .string(channel), "ts": .string(ts)], "event_ts": "1700000300.000100",
            ])
    }
}

extension JSONValue {
    /// Every string anywhere in the value (object keys excluded).
    var allStrings: [String] {
        switch self {
        case .string(let text): [text]
        case .array(let items): items.flatMap(\.allStrings)
        case .object(let members): members.values.flatMap(\.allStrings)
        default: []
        }
    }

    /// What Slack shows of a message body: every string under a `text` key, at any depth (the
    /// fallback text, section and context texts, button labels), and not, say, a button's
    /// `value`, which only comes back to the app.
    var shownTexts: [String] {
        switch self {
        case .array(let items):
            return items.flatMap(\.shownTexts)
        case .object(let members):
            return members.flatMap { key, value -> [String] in
                if key == "text", case .string(let text) = value { return [text] }
                return value.shownTexts
            }
        default:
            return []
        }
    }
}

/// Waits `seconds` so that anything wrongly sent would have arrived ("nothing else arrives").
func quietWindow(_ seconds: Double = 1) async throws {
    try await Task.sleep(for: .seconds(seconds))
}


extension AppConfiguration {
    /// The signing secret of the configured Slack platform, to sign requests as Slack would.
    var slackSigningSecret: String? {
        platforms.lazy.compactMap { ($0 as? SlackPlatform)?.configuration.signingSecret }.first
    }
}
