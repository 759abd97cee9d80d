import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import RelayCore
import RelayPipeline
import RelayServer
import RelayTestSupport
import RelayTribunal
import SlackAdapter
import Testing

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
                    // The person who sends the tests' commands administers the workspace, as
                    // whoever installs a bot does: team admins save chains and commands.
                    slack.seed(.admin(humanUser, teamID: team))
                    return try await body(SlackFakes(slack: slack, tribunal: tribunal, database: database))
                }
            }
        }
    }

    /// The signing secret the relay is configured with (HTTP mode).
    static let signingSecret = "e2e-signing-secret-0123456789abcdef"

    /// The workspace every request comes from.
    static let team = "T0E2E"
    /// Who sends the tests' commands, unless a test names another: an admin of `team`.
    static let humanUser = "U0HUMAN"

    /// The admin token the relay is configured with, to read `/readyz`'s detailed report.
    static let adminToken = "e2e-admin-token-0123456789abcdef"

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
        // 30 s: no test here waits for these to fire, and a loaded machine answers slowly.
        configuration.tribunal.timeouts = .init(quick: .seconds(30), dialog: .seconds(30), tribunal: .seconds(30), health: .seconds(1))
        configuration.tribunal.retry = RetryPolicy(attempts: 2, baseDelay: .milliseconds(10), maxDelay: .milliseconds(20))
        var platform = SlackConfiguration(signingSecret: signingSecret, botToken: slack.botToken, appToken: appToken, apiURL: apiURL ?? slack.apiURL)
        platform.filesURL = slack.baseURL
        configuration.platforms = [SlackPlatform(configuration: platform)]
        configuration.delivery = delivery
        configuration.shutdownGrace = .seconds(1)
        configuration.http.idleTimeout = HarnessTimings.idleTimeout
        configuration.http.adminToken = SlackFakes.adminToken
        return configuration
    }

    /// Short poll interval and tiny retry delays, so a retry takes milliseconds (Slack's own
    /// pacing of about one message a second per channel still applies).
    static let fastDelivery = DeliveryPolicy(
        maxAttempts: 10, retry: RetryPolicy(attempts: 10, baseDelay: .milliseconds(10), maxDelay: .milliseconds(50)), lease: .seconds(30),
        pollInterval: .milliseconds(50),
        drainTimeout: .seconds(1))

    /// Builds the relay as `serve` does and runs it on a loopback port while `body` talks to it
    /// over HTTP; then shuts it down gracefully (as SIGTERM would) and waits until it stopped.
    ///
    /// With `clock`, the relay reads time from it (a `ShiftedClock` that a test jumps ahead);
    /// `logger` (a `LogCapture`'s, say) receives the relay's log; by default warnings go nowhere.
    func withRelay<T: Sendable>(
        _ configuration: AppConfiguration, clock: (any RelayClock)? = nil, logger: Logger? = nil,
        _ body: @escaping @Sendable (RelayUnderTest) async throws -> T
    ) async throws -> T {
        let logger =
            logger
            ?? {
                var quiet = Logger(label: "test.slack-e2e")
                quiet.logLevel = .warning
                return quiet
            }()
        let app: RelayApplication.App
        if let clock {
            let runtime = try await RelayRuntime.start(configuration, logger: logger)
            app = try RelayApplication.build(
                .init(
                    configuration: configuration, store: runtime.store, backend: runtime.tribunal, platforms: configuration.platforms,
                    transport: runtime.transport, clock: clock, registry: TestMetrics.registry, logger: logger, close: { await runtime.shutdown() }))
        } else {
            app = try await RelayApplication.build(configuration: configuration, registry: TestMetrics.registry, logger: logger)
        }
        let fakes = self
        return try await app.test(.live) { client in
            try await body(RelayUnderTest(client: client, fakes: fakes, signer: SlackSigner(signingSecret: configuration.slackSigningSecret ?? "")))
        }
    }
}

extension SlackFakes {
    /// `app_mention` from `user`: the bot's mention, then `text`, posted at `ts` in `channel` (in
    /// a thread when `threadTS`), as Slack sends it in an `event_callback`.
    static func mention(
        _ text: String, eventID: String, channel: String = "C0E2E", ts: String, threadTS: String? = nil, user: String = "U0HUMAN"
    ) -> JSONValue {
        SlackPayloads.appMention(
            text: "<@\(FakeSlackWebAPI.botUserID)> \(text)", user: user, channel: channel, ts: ts, threadTS: threadTS,
            eventID: eventID, team: SlackFakes.team, botUserID: FakeSlackWebAPI.botUserID)
    }

    /// `reaction_added` of `reaction` by `user` on the message `ts` in `channel`, in an
    /// `event_callback`.
    static func reaction(
        _ reaction: String, eventID: String, channel: String, ts: String, user: String = "U0HUMAN", itemUser: String = "U0AUTHOR"
    ) -> JSONValue {
        SlackPayloads.reactionAdded(
            reaction: reaction, user: user, channel: channel, ts: ts, itemUser: itemUser, eventID: eventID, team: SlackFakes.team,
            botUserID: FakeSlackWebAPI.botUserID)
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
    ) async throws -> HarnessResponse {
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
        return try await client.patientExecute(uri: path, method: .post, headers: headers, body: ByteBuffer(string: body))
    }

    /// A slash command as Slack POSTs it to `/slack/commands` (the recorded one, with these
    /// fields).
    func slashCommand(
        _ command: String, text: String, responseURL: String, channel: String = "C0E2E", user: String = "U0HUMAN",
        team: String = SlackFakes.team, triggerID: String = "trigger-\(UUID().uuidString)", signing: Signing = .valid
    ) async throws -> HarnessResponse {
        let body = SlackPayloads.slashCommand(
            command: command, text: text, responseURL: responseURL, team: team, channel: channel, user: user,
            triggerID: triggerID)
        return try await post("/slack/commands", body: body, contentType: "application/x-www-form-urlencoded", signing: signing)
    }

    /// A button click (`block_actions` on the ephemeral reply that had the button) as Slack
    /// POSTs it to `/slack/interactive`.
    func click(
        _ actionID: String, value: String, user: String, responseURL: String, channel: String = "C0E2E"
    ) async throws -> HarnessResponse {
        let payload = SlackPayloads.blockActions(
            ephemeral: true, actionID: actionID, value: value, user: user, team: SlackFakes.team, channel: channel,
            responseURL: responseURL, triggerID: "trigger-\(UUID().uuidString)")
        return try await post(
            "/slack/interactive", body: SlackPayloads.interactionForm(payload), contentType: "application/x-www-form-urlencoded")
    }

    /// An Events API body as Slack POSTs it to `/slack/events`; `retry` adds the headers of
    /// Slack's redeliveries (`X-Slack-Retry-Num`, `X-Slack-Retry-Reason`).
    func event(_ body: JSONValue, retry: Int? = nil, signing: Signing = .valid) async throws -> HarnessResponse {
        var extra: HTTPFields = [:]
        if let retry {
            extra[SlackHeaders.retryNumber] = String(retry)
            extra[SlackHeaders.retryReason] = "http_timeout"
        }
        return try await post("/slack/events", body: SlackPayloads.body(body), contentType: "application/json", signing: signing, extraHeaders: extra)
    }

    /// Waits until the relay is idle: no run in flight and nothing pending in the outbox (from
    /// `/readyz`). Then nothing more can be sent, so "exactly once" (or "nothing") can be
    /// checked without waiting for a fixed time.
    ///
    /// Sound after a request the relay has answered: an HTTP request's run is registered before
    /// its acknowledgement goes back (a refused one starts none), so "idle" cannot come before
    /// it. A Socket Mode envelope is acknowledged before it is handed on, so first await
    /// something that comes after it. Each check asks the Tribunal's `/health`, so count the
    /// fake Tribunal's requests by path.
    func settled() async throws {
        try await eventually("the relay to be idle (no run in flight, outbox empty)") {
            let report = try await readiness()
            return report?["runs"]?["status"]?.stringValue == "taking runs" && report?["runs"]?["inFlight"]?.intValue == 0
                && report?["store"]?["outboxDepth"]?.intValue == 0
        }
    }

    /// The relay's outbox depth, from `/readyz`.
    func outboxDepth() async throws -> Int? {
        try await readiness()?["store"]?["outboxDepth"]?.intValue
    }

    /// The relay's runs in flight, from `/readyz`.
    func runsInFlight() async throws -> Int? {
        try await readiness()?["runs"]?["inFlight"]?.intValue
    }

    /// What `/readyz` reports to the admin.
    func readiness() async throws -> JSONValue? {
        let response = try await client.execute(uri: "/readyz", method: .get, headers: [.authorization: "Bearer \(SlackFakes.adminToken)"], body: nil)
        return JSONValue.parse(response.body.readableBytesView)
    }

    /// What reached a model: the fake Tribunal's requests, without the `/health` checks that
    /// `/readyz` makes.
    func modelRequests() async -> [RecordedRequest] {
        await tribunal.requests().filter { $0.path != FakeRheaTribunal.healthPath }
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

extension AppConfiguration {
    /// The signing secret of the configured Slack platform, to sign requests as Slack would.
    var slackSigningSecret: String? {
        platforms.lazy.compactMap { ($0 as? SlackPlatform)?.configuration.signingSecret }.first
    }
}
