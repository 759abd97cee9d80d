import AsyncHTTPClient
import Foundation
import Glibc
import NIOCore
import NIOHTTP1
import RelayCore
import RelayTestSupport

/// `rhea-relay serve` replicas on one store, pointed at the fakes, as an operator runs several
/// (issue 24): started, killed with SIGKILL, stopped with SIGTERM, restarted; and Slack's
/// requests to them, signed as Slack signs them.
final class ServeReplicas {
    static let signingSecret = "8f742231b10e8888abcd99yyyzzz85a5"
    /// Every replica's `HTTP_ADMIN_TOKEN`, for the detailed `/readyz`.
    static let adminToken = "replica-tests-admin-token-5f1c"

    let environment: [String: String]
    let directory: URL
    var processes: [ServeProcess]

    /// Replicas of a Slack app on `database`, answering through the fake backend and Web API.
    static func slack(
        _ count: Int, database: PostgresTestDatabase, tribunal: FakeRheaTribunal, slack: FakeSlackWebAPI
    ) async throws -> ServeReplicas {
        try await ServeReplicas(
            count: count,
            environment: [
                "STORE_URL": database.url, "TRIBUNAL_URL": tribunal.url, "SLACK_SIGNING_SECRET": signingSecret,
                "SLACK_API_URL": slack.apiURL, "SLACK_BOT_TOKEN": slack.botToken, "LOG_LEVEL": "warning",
            ])
    }

    init(count: Int, environment: [String: String]) async throws {
        var environment = environment
        environment["HTTP_ADMIN_TOKEN"] = Self.adminToken
        self.environment = environment
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rhea-replicas-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        processes = []
        for _ in 0..<count { processes.append(try await ServeProcess(environment: environment, directory: directory)) }
    }

    /// SIGKILL: no graceful shutdown, leases left to lapse.
    func kill9(_ index: Int) async {
        kill(processes[index].process.processIdentifier, SIGKILL)
        await processes[index].exited()
    }

    func restart(_ index: Int) async throws {
        processes[index] = try await ServeProcess(environment: environment, directory: directory)
    }

    /// The replica with process id `pid`, if it is one of these.
    func index(ofProcess pid: Int32) -> Int? {
        processes.firstIndex { $0.process.processIdentifier == pid }
    }

    /// The detailed `/readyz` of replica `index`: its status (200 ready, 503 not) and report;
    /// nil when no answer came within `timeout`.
    func readiness(_ index: Int, timeout: Duration = .seconds(10)) async -> (status: Int, report: JSONValue?)? {
        await Self.readiness(port: processes[index].port, timeout: timeout)
    }

    /// The status of every running replica's `/readyz`, asked at once (nil: no answer).
    func readinessStatuses(timeout: Duration = .seconds(10)) async -> [Int?] {
        let ports = processes.filter(\.process.isRunning).map(\.port)
        return await withTaskGroup(of: (Int, Int?).self) { group in
            for (index, port) in ports.enumerated() { group.addTask { (index, await Self.readiness(port: port, timeout: timeout)?.status) } }
            var statuses = [Int?](repeating: nil, count: ports.count)
            for await (index, status) in group { statuses[index] = status }
            return statuses
        }
    }

    static func readiness(port: Int, timeout: Duration) async -> (status: Int, report: JSONValue?)? {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/readyz")
        request.headers.add(name: "Authorization", value: "Bearer \(Self.adminToken)")
        guard let response = try? await HTTPClient.shared.execute(request, timeout: Self.timeAmount(timeout)),
            let body = try? await response.body.collect(upTo: 1 << 20)
        else { return nil }
        return (Int(response.status.code), JSONValue.parse(Array(body.readableBytesView)))
    }

    /// Waits until no replica has a run in flight and nothing waits in the outbox, seen twice in
    /// a row 300 ms apart: then nothing more will be sent. Throws after `limit`.
    func waitUntilIdle(within limit: Duration = .seconds(60)) async throws {
        let deadline = ContinuousClock.now + limit
        var quiet = 0
        while quiet < 2 {
            guard ContinuousClock.now < deadline else { throw ServeError("the replicas did not become idle within \(limit)") }
            var busy = false
            for index in processes.indices where processes[index].process.isRunning {
                let report = await readiness(index)?.report
                if report?["runs"]?["inFlight"]?.intValue != 0 || report?["store"]?["outboxDepth"]?.intValue != 0 { busy = true }
            }
            quiet = busy ? 0 : quiet + 1
            try await Task.sleep(for: .milliseconds(300))
        }
    }

    /// SIGTERM to every replica at once, waiting without blocking a thread of the tests' pool;
    /// what they printed.
    func stopAll() async -> String {
        for replica in processes where replica.process.isRunning { replica.process.terminate() }
        var said: [String] = []
        for replica in processes {
            await replica.exited(within: .seconds(30))
            said.append(await replica.stop())
        }
        try? FileManager.default.removeItem(at: directory)
        return said.joined(separator: "\n---\n")
    }

    /// Runs `body` with the replicas, then stops them; when `body` throws, what they printed is
    /// recorded with the error.
    func run<T>(_ body: () async throws -> T) async throws -> (T, said: String) {
        let result: T
        do {
            result = try await body()
        } catch {
            let said = await stopAll()
            throw ServeError("\(error); the replicas said: \(said.suffix(4000))")
        }
        return (result, await stopAll())
    }
}

/// What a replica answered to a request.
struct ReplicaAnswer: Sendable {
    var status: Int
    var body: String
    /// From sending the request to the whole answer.
    var elapsed: Duration
}

extension ServeReplicas {
    /// POSTs `body` to `path` on the replica at `port`, signed as Slack signs it; nil when no
    /// answer came within `timeout` (refused, or the process gone).
    static func postFromSlack(
        port: Int, path: String, body: String, contentType: String, headers: [String: String] = [:], timeout: Duration = .seconds(30)
    ) async -> ReplicaAnswer? {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: contentType)
        for (name, value) in SlackSigner(signingSecret: signingSecret).headers(body: body) { request.headers.add(name: name, value: value) }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(string: body))
        let start = ContinuousClock.now
        guard let response = try? await HTTPClient.shared.execute(request, timeout: timeAmount(timeout)),
            let answered = try? await response.body.collect(upTo: 1 << 20)
        else { return nil }
        return ReplicaAnswer(status: Int(response.status.code), body: String(buffer: answered), elapsed: start.duration(to: .now))
    }

    static func timeAmount(_ duration: Duration) -> TimeAmount {
        .milliseconds(Int64(duration / .milliseconds(1)))
    }

    /// A slash command as Slack POSTs it, with a trigger id of its own (the relay dedupes by it).
    static func slashCommand(
        port: Int, command: String = "/translate", text: String, responseURL: String, channel: String, user: String = "U0FAULT",
        timeout: Duration = .seconds(30)
    ) async -> ReplicaAnswer? {
        let body = SlackPayloads.slashCommand(
            command: command, text: text, responseURL: responseURL, team: "T0FAULT", channel: channel, user: user,
            triggerID: "trigger-\(UUID().uuidString)")
        return await postFromSlack(
            port: port, path: "/slack/commands", body: body, contentType: "application/x-www-form-urlencoded", timeout: timeout)
    }

    /// An Events API body as Slack POSTs it; `retry` adds the headers of Slack's redeliveries.
    static func event(port: Int, _ event: JSONValue, retry: Int? = nil, timeout: Duration = .seconds(30)) async -> ReplicaAnswer? {
        var headers: [String: String] = [:]
        if let retry {
            headers["X-Slack-Retry-Num"] = String(retry)
            headers["X-Slack-Retry-Reason"] = "http_timeout"
        }
        return await postFromSlack(
            port: port, path: "/slack/events", body: SlackPayloads.body(event), contentType: "application/json", headers: headers, timeout: timeout)
    }
}
