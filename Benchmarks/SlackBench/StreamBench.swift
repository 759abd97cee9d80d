import AsyncHTTPClient
import BenchSupport
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import RelayCore
import RelayTestSupport
import Synchronization

/// `slack-bench --stream` (issue 40, point 7): `--users` people ask at once, the backend a
/// council of one fake OpenAI-compatible model that streams each answer at `--tokens-per-second`
/// for `--stream-seconds`. What people see is read back from the platform's fake: when the first
/// text of the answer showed (from the command's send), how many edits each answer took, what
/// the platform refused (429), and the relay's CPU per answer — against the same answers
/// unstreamed (the model asked with `stream: false`, answering whole after the same time).
///
/// - Slack: a mention in a channel of each person's own, answered in a placeholder
///   (`chat.postMessage`) edited with `chat.update`. The fake does not enforce Tier 3, so the
///   edits a minute the workspace took are shown instead.
/// - Telegram: a command in each person's private chat, answered in a placeholder edited with
///   `editMessageText`; the fake Bot API enforces Telegram's limits (1 a second per chat, 30 a
///   second per bot) and answers 429 past them.
/// - Matrix: `!ai` in each person's room at the in-process homeserver (`MatrixSink`), answered in
///   a notice replying to it, replaced (`m.replace`) as it grows; the homeserver enforces no
///   rate (Synapse's `rc_message` is what the relay's budget keeps to).
struct StreamBench {
    var platform: BenchPlatform
    var users: Int
    var tokensPerSecond: Double
    var seconds: Double
    /// How to start the relay with this extra environment.
    var launch: @Sendable ([String: String]) -> RelayProcess.Launch

    struct Result {
        var streamed: Bool
        /// Seconds from each command's send to the first text of its answer shown.
        var firstText: [Double] = []
        /// Seconds from each command's send to its whole answer shown.
        var whole: [Double] = []
        /// Edits each answer's message took (the placeholder's post aside).
        var edits: [Int] = []
        var refused = 0
        var answered = 0
        var cpu: Duration = .zero
        var peakKiB: Int?
        /// Slack: the most edits of the workspace in any minute (Tier 3 allows about 50).
        var editsPerMinute: Int?
    }

    static let secret = "bench-stream-telegram-secret"

    var pieces: [String] { (0..<max(1, Int(tokensPerSecond * seconds))).map { "w\($0) " } }

    func run(http: HTTPClient) async throws {
        print(
            "stream: \(users) people ask at once on \(platform.rawValue); the model writes \(pieces.count) tokens at \(Int(tokensPerSecond))/s "
                + "(\(String(format: "%.0f", seconds)) s); the same answers unstreamed for comparison")
        let streamed = try await measure(streaming: true, http: http)
        print(line(streamed))
        let whole = try await measure(streaming: false, http: http)
        print(line(whole))
        let ratio = whole.cpu > .zero ? streamed.cpu.seconds / whole.cpu.seconds : 0
        print(String(format: "streaming costs %.2f× the relay's CPU of the same answers unstreamed", ratio))
        // A release build that answers nothing (it once crashed at every delivery) fails loudly.
        guard streamed.answered == users, whole.answered == users else {
            throw BenchError("not every answer showed whole: \(streamed.answered) and \(whole.answered) of \(users)")
        }
    }

    func line(_ result: Result) -> String {
        let answers = Double(max(1, result.answered))
        var line =
            (result.streamed ? "streamed" : "unstreamed") + ": \(result.answered)/\(users) answered whole; "
            + "first text p50 \(ms(percentile(result.firstText, 0.5))) p99 \(ms(percentile(result.firstText, 0.99))), "
            + "whole answer p50 \(ms(percentile(result.whole, 0.5))) p99 \(ms(percentile(result.whole, 0.99))), "
            + String(format: "edits per answer %.1f (max %d), ", Double(result.edits.reduce(0, +)) / answers, result.edits.max() ?? 0)
            + "429s \(result.refused), CPU per answer \(ms(result.cpu.seconds / answers)), peak RSS \(mib(result.peakKiB))"
        if let perMinute = result.editsPerMinute { line += ", workspace edits in the busiest minute \(perMinute)" }
        return line
    }

    func measure(streaming: Bool, http: HTTPClient) async throws -> Result {
        let quiet = Logger(label: "slack-bench", factory: { _ in SwiftLogNoOpLogHandler() })
        let persona: FakeOpenAIPersona = streaming ? .pieces(pieces) : .slow(seconds: seconds, then: .pieces(pieces))
        let model = try await FakeOpenAIServer.start(persona: persona, logger: quiet)
        model.setStream(FakeOpenAIStream(piecesPerSecond: tokensPerSecond))
        var environment = [
            "TRIBUNAL_BACKEND": "council", "COUNCIL_MODELS": "writer", "COUNCIL_WRITER_BASE_URL": model.url, "COUNCIL_WRITER_MODEL": "m",
            "COUNCIL_WRITER_TIER": "cheap", "COUNCIL_WRITER_TIMEOUT": String(Int(seconds) + 60), "COUNCIL_WRITER_STREAM": streaming ? "true" : "false",
            "COUNCIL_DEADLINE": String(Int(seconds) + 90), "TRIBUNAL_TIMEOUTS_QUICK": String(Int(seconds) + 60),
        ]
        var result = Result(streamed: streaming)
        switch platform {
        case .telegram:
            let telegram = try await FakeTelegramBotAPI.start(logger: quiet)
            telegram.enforceRateLimits = true
            environment.merge([
                "TELEGRAM_BOT_TOKEN": telegram.token, "TELEGRAM_API_URL": telegram.url, "TELEGRAM_MODE": "webhook", "TELEGRAM_WEBHOOK_SECRET": Self.secret,
            ]) { $1 }
            defer { Task { await telegram.stop() } }
            try await run(environment: environment, http: http, result: &result) { port, index in
                let chat = 70_000_000 + Int64(index)
                let update = TelegramUpdates.message(updateID: 5000 + index, messageID: 10, chat: chat, from: chat, text: "/ai write")
                _ = try await telegram.deliver(update, to: "http://127.0.0.1:\(port)/telegram/webhook", secretToken: Self.secret)
            } read: { index in
                guard let message = telegram.messages(chat: 70_000_000 + Int64(index)).first(where: { !$0.deleted }) else { return nil }
                let now = (wall: Date(), monotonic: ContinuousClock.now)
                return (message.history + [message.current]).map { version in
                    (now.wall.addingTimeInterval(-(now.monotonic - version.at).seconds), version.text)
                }
            }
            result.refused = telegram.calls().filter { $0.status == 429 }.count
        case .slack:
            let slack = try await FakeSlackWebAPI.start(logger: quiet)
            environment.merge(["SLACK_BOT_TOKEN": slack.botToken, "SLACK_API_URL": slack.apiURL]) { $1 }
            defer { Task { await slack.stop() } }
            let signer = SlackSigner(signingSecret: SlackBench.secret)
            try await run(environment: environment, http: http, result: &result) { port, index in
                let event = SlackPayloads.appMention(
                    text: "<@\(FakeSlackWebAPI.botUserID)> ai write", user: "U0BENCH\(index)", channel: "C0BENCH\(index)",
                    ts: "1700000000.\(String(format: "%06d", index))", eventID: "Ev0BENCH\(index)", team: "T0BENCH", botUserID: FakeSlackWebAPI.botUserID)
                let body = SlackPayloads.body(event)
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/slack/events")
                request.method = .POST
                request.headers.add(name: "Content-Type", value: "application/json")
                for (name, value) in signer.headers(body: body) { request.headers.add(name: name, value: value) }
                request.body = .bytes(ByteBuffer(string: body))
                let response = try await http.execute(request, timeout: .seconds(30))
                _ = try await response.body.collect(upTo: 1 << 20)
            } read: { index in
                let channel = "C0BENCH\(index)"
                let calls = (slack.requests(path: "chat.postMessage") + slack.requests(path: "chat.update"))
                    .filter { $0["channel"]?.stringValue == channel }.sorted { $0.receivedAt < $1.receivedAt }
                guard !calls.isEmpty else { return nil }
                return calls.map { call in (call.receivedAt, Self.shown(call.body ?? .null).joined(separator: "\n")) }
            }
            let updates = slack.requests(path: "chat.update").map(\.receivedAt).sorted()
            var busiest = 0
            var start = 0
            for (index, time) in updates.enumerated() {
                while time.timeIntervalSince(updates[start]) > 60 { start += 1 }
                busiest = max(busiest, index - start + 1)
            }
            result.editsPerMinute = busiest
        case .matrix:
            let quietSink = try await ReplySink.start(logger: quiet)
            let matrix = try await MatrixSink.start(forwardingTo: quietSink, logger: quiet)
            environment.merge(matrix.environment) { $1 }
            defer {
                Task {
                    await matrix.stop()
                    await quietSink.stop()
                }
            }
            try await run(environment: environment, http: http, result: &result, connected: { await matrix.connected() }) { _, index in
                matrix.post(index, user: index, text: "!ai write")
            } read: { index in
                matrix.versions(index)
            }
        case .discord, .mattermost, .teams, .googleChat, .irc, .xmpp:
            await model.stop()
            throw BenchError("--stream runs on slack, telegram or matrix")
        }
        await model.stop()
        return result
    }

    /// Every string under a `text` key: what Slack shows of a message body.
    static func shown(_ value: JSONValue) -> [String] {
        switch value {
        case .array(let items): return items.flatMap(shown)
        case .object(let members):
            return members.flatMap { key, value -> [String] in
                if key == "text", case .string(let text) = value { return [text] }
                return shown(value)
            }
        default: return []
        }
    }

    /// Starts the relay, sends every command at once, waits until every answer shows whole (or
    /// the model's time plus two minutes passed), then reads each answer's versions.
    func run(
        environment: [String: String], http: HTTPClient, result: inout Result, connected: () async -> Void = {},
        send: @escaping @Sendable (Int, Int) async throws -> Void, read: (Int) -> [(Date, String)]?
    ) async throws {
        let relay = try await RelayProcess.start(launch(environment), http: http)
        let port = launch(environment).port
        // Telegram's limiter sends nothing in its first second (a process before it may have
        // used the bot's limits): commands sent sooner would time that second, not the relay.
        try await Task.sleep(for: .seconds(1.5))
        await connected()
        let cpuBefore = relay.cpuTime()
        let sent = Locked([Int: Date]())
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<users {
                group.addTask {
                    sent.withLock { $0[index] = Date() }
                    try? await send(port, index)
                }
            }
        }
        let last = pieces.last!.trimmingCharacters(in: .whitespaces)
        func isWhole(_ text: String) -> Bool { text.contains(last) && !text.contains(PartialAnswer.writingNote) }
        let deadline = Date().addingTimeInterval(seconds + 120)
        while Date() < deadline {
            let done = (0..<users).filter { read($0)?.last.map { isWhole($0.1) } ?? false }.count
            if done == users { break }
            try await Task.sleep(for: .milliseconds(500))
        }
        result.cpu = relay.cpuTime() - cpuBefore
        result.peakKiB = relay.peakMemoryKiB()
        relay.stop()
        let first = pieces[0].trimmingCharacters(in: .whitespaces)
        let sentAt = sent.withLock { $0 }
        if ProcessInfo.processInfo.environment["BENCH_DEBUG"] != nil, let versions = read(0), let start = sentAt[0] {
            for (at, text) in versions {
                print(String(format: "  %+.3f s  ", at.timeIntervalSince(start)) + text.prefix(60).replacingOccurrences(of: "\n", with: " "))
            }
        }
        for index in 0..<users {
            guard let versions = read(index), let start = sentAt[index], let final = versions.last, isWhole(final.1) else { continue }
            result.answered += 1
            if let shown = versions.first(where: { $0.1.contains(first) }) { result.firstText.append(shown.0.timeIntervalSince(start)) }
            result.whole.append(final.0.timeIntervalSince(start))
            result.edits.append(versions.count - 1)
        }
    }
}

/// A value behind a lock, shared by the tasks that send the commands.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) { mutex = Mutex(value) }

    func withLock<T>(_ body: (inout Value) -> T) -> T { mutex.withLock { body(&$0) } }
}
