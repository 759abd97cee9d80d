import ArgumentParser
import AsyncHTTPClient
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import RelayCore
import RelayTestSupport
import Synchronization

/// Drives signed Slack slash commands at a running `rhea-relay serve` (a separate process, so
/// its memory is its own) backed by a fake Rhea Tribunal, with the replies' `response_url`s
/// pointing at a sink in this process. Reports acks/s, replies/s, acknowledgement and
/// end-to-end latency (command sent → reply received at the response_url) and the server's peak
/// memory (VmHWM), for each backend delay. With `--slow N` it then opens N connections that
/// trickle a body a byte every few seconds (`SlowConnectionScenario`) against a fresh server and
/// reports when the server closed them, whether real commands were still answered, and the
/// server's peak memory.
///
///     swift build -c release --product rhea-relay && swift run -c release slack-bench
///     taskset -c 1 .build/release/slack-bench --server-cpus 0 --slow 2000   # server on core 0, load on core 1
@main
struct SlackBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "slack-bench", abstract: "Signed slash commands against rhea-relay serve: throughput, latency, memory.")

    @Option(help: "Slash commands per run.")
    var requests = 1000

    @Option(help: "Commands in flight at once.")
    var concurrency = 64

    @Option(help: "Backend delays to measure, in milliseconds, comma-separated.")
    var delays = "0,200"

    @Option(help: "The rhea-relay binary to serve with.")
    var relay = ".build/release/rhea-relay"

    @Option(help: "Port for the relay under test.")
    var port = 18231

    @Option(name: .customLong("server-cpus"), help: "Pin the server to these CPUs (taskset -c), e.g. 0; run the bench itself on the others.")
    var serverCPUs: String?

    @Option(help: "Slow connections to open after the flood runs (0: none).")
    var slow = 0

    @Option(help: "Seconds between two bytes of a slow connection's body.")
    var slowInterval = 2.0

    @Option(help: "The server's http.readTimeout for the slow scenario, in seconds (unset: the server's default).")
    var readTimeout: Double?

    static let secret = "bench-signing-secret"

    func run() async throws {
        guard FileManager.default.isExecutableFile(atPath: relay) else {
            throw ValidationError("\(relay) is not built: run `swift build -c release --product rhea-relay` first.")
        }
        let quiet = Logger(label: "slack-bench", factory: { _ in SwiftLogNoOpLogHandler() })
        let backend = try await FakeRheaTribunal.start(logger: quiet)
        let sink = try await ReplySink.start(logger: quiet)
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(8, concurrency))
        let http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)

        do {
            try await measure(http: http, sink: sink, backend: backend)
        } catch {
            try? await http.shutdown()
            await sink.stop()
            await backend.stop()
            throw error
        }
        try await http.shutdown()
        await sink.stop()
        await backend.stop()
    }

    func measure(http: HTTPClient, sink: ReplySink, backend: FakeRheaTribunal) async throws {
        print("slack-bench: \(requests) signed slash commands, \(concurrency) in flight, replies via response_url")
        print(String(repeating: "-", count: 110))
        for delay in delays.split(separator: ",").compactMap({ Double($0.trimmingCharacters(in: .whitespaces)) }) {
            await backend.setDelay(path: FakeRheaTribunal.quickPath, seconds: delay / 1000)
            sink.reset()
            let server = try await RelayProcess.start(
                binary: relay, port: port, backendURL: backend.url, secret: Self.secret, http: http, cpus: serverCPUs)
            defer { server.stop() }
            let result = try await load(http: http, sink: sink)
            let peak = server.peakMemoryKiB()
            server.stop()
            report(delay: delay, result, peakKiB: peak)
        }
        if slow > 0 { try await measureSlow(http: http, sink: sink, backend: backend) }
    }

    func measureSlow(http: HTTPClient, sink: ReplySink, backend: FakeRheaTribunal) async throws {
        await backend.setDelay(path: FakeRheaTribunal.quickPath, seconds: 0)
        sink.reset()
        var environment: [String: String] = [:]
        if let readTimeout { environment["HTTP_READ_TIMEOUT"] = String(readTimeout) }
        let server = try await RelayProcess.start(
            binary: relay, port: port, backendURL: backend.url, secret: Self.secret, http: http, cpus: serverCPUs, environment: environment)
        defer { server.stop() }
        let idle = server.peakMemoryKiB()
        let scenario = SlowConnectionScenario(connections: slow, interval: .seconds(slowInterval), giveUpAfter: .seconds(120), commands: 50)
        let started = ContinuousClock.now
        let result = try await scenario.run(port: port, http: http, sink: sink, secret: Self.secret)
        let peak = server.peakMemoryKiB()
        server.stop()
        let closed = result.closedAfter.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 }.sorted()
        func at(_ p: Double) -> String { closed.isEmpty ? "-" : String(format: "%.1f s", closed[Int(p * Double(closed.count - 1))]) }
        print(String(repeating: "-", count: 110))
        print(
            "slow: \(slow) connections trickling a byte every \(slowInterval) s: closed by the server \(closed.count), still open after 120 s "
                + "\(result.stillOpen), could not connect \(result.failedToConnect); closed after min \(at(0)) p50 \(at(0.5)) max \(at(1)); "
                + "meanwhile \(result.commandsAcked)/50 commands acknowledged, \(result.commandsAnswered)/50 answered; "
                + "server RSS at start \(idle.map { "\($0 / 1024) MiB" } ?? "?"), peak \(peak.map { "\($0 / 1024) MiB" } ?? "?"); "
                + "took \(ContinuousClock.now - started)")
    }

    struct RunResult {
        var started: ContinuousClock.Instant
        var sent: [ContinuousClock.Instant]
        var acked: [ContinuousClock.Instant]
        var arrivals: [Int: ContinuousClock.Instant]
        var failedAcks: Int
    }

    func load(http: HTTPClient, sink: ReplySink) async throws -> RunResult {
        let signer = SlackSigner(signingSecret: Self.secret)
        let url = "http://127.0.0.1:\(port)/slack/commands"
        let started = ContinuousClock.now
        let times = Times(count: requests, start: started)
        let total = requests
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = 0
            for _ in 0..<min(concurrency, total) {
                let index = next
                next += 1
                group.addTask { try await Self.send(index, http: http, url: url, signer: signer, sink: sink, times: times) }
            }
            while try await group.next() != nil {
                guard next < total else { continue }
                let index = next
                next += 1
                group.addTask { try await Self.send(index, http: http, url: url, signer: signer, sink: sink, times: times) }
            }
        }
        _ = await sink.waitForAll(requests, timeout: 120)
        let (sent, acked, failed) = times.lock.withLock { ($0.sent, $0.acked, $0.failed) }
        return RunResult(started: started, sent: sent, acked: acked, arrivals: sink.arrivals(), failedAcks: failed)
    }

    /// Send and acknowledgement times, per command.
    final class Times: Sendable {
        let lock: Mutex<(sent: [ContinuousClock.Instant], acked: [ContinuousClock.Instant], failed: Int)>
        init(count: Int, start: ContinuousClock.Instant) {
            lock = Mutex((Array(repeating: start, count: count), Array(repeating: start, count: count), 0))
        }
    }

    /// One signed slash command; records when it was sent and acknowledged.
    static func send(_ index: Int, http: HTTPClient, url: String, signer: SlackSigner, sink: ReplySink, times: Times) async throws {
        let body = form([
            "token": "legacy", "team_id": "T0BENCH", "team_domain": "bench", "channel_id": "C0BENCH",
            "channel_name": "bench", "user_id": "U\(index)", "user_name": "user\(index)", "command": "/rhea",
            "text": "fix teh cat number \(index)", "response_url": sink.url(for: index),
            "trigger_id": "trigger.\(index)", "api_app_id": "A0BENCH",
        ])
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        for (name, value) in signer.headers(body: body) { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(string: body))
        let sent = ContinuousClock.now
        let response = try await http.execute(request, timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 16)
        let acked = ContinuousClock.now
        times.lock.withLock { times in
            times.sent[index] = sent
            times.acked[index] = acked
            if response.status != .ok { times.failed += 1 }
        }
    }

    func report(delay: Double, _ result: RunResult, peakKiB: Int?) {
        func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }
        func percentile(_ values: [Double], _ p: Double) -> Double {
            let sorted = values.sorted()
            return sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int((p * Double(sorted.count - 1)).rounded()))]
        }
        let ackLatency = zip(result.sent, result.acked).map { seconds($0.duration(to: $1)) }
        let endToEnd = result.arrivals.map { index, arrived in seconds(result.sent[index].duration(to: arrived)) }
        let lastAck = result.acked.max() ?? result.started
        let lastReply = result.arrivals.values.max() ?? result.started
        let acksPerSecond = Double(requests) / seconds(result.started.duration(to: lastAck))
        let repliesPerSecond = Double(result.arrivals.count) / seconds(result.started.duration(to: lastReply))
        func ms(_ value: Double) -> String { String(format: "%.1f ms", value * 1000) }
        print(
            "backend \(Int(delay)) ms: acks/s \(String(format: "%.0f", acksPerSecond)), replies/s \(String(format: "%.0f", repliesPerSecond)), "
                + "ack p50 \(ms(percentile(ackLatency, 0.5))) p99 \(ms(percentile(ackLatency, 0.99))), "
                + "end-to-end p50 \(ms(percentile(endToEnd, 0.5))) p99 \(ms(percentile(endToEnd, 0.99))), "
                + "peak RSS \(peakKiB.map { "\($0 / 1024) MiB" } ?? "?"), replies \(result.arrivals.count)/\(requests), non-200 acks \(result.failedAcks)")
    }

    static func form(_ fields: [String: String]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return fields.sorted { $0.key < $1.key }
            .map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? $0.value)" }
            .joined(separator: "&")
    }
}

/// `rhea-relay serve` in its own process, on embedded defaults plus the bench's environment.
final class RelayProcess: Sendable {
    let process: Process
    let storePath: String

    private init(process: Process, storePath: String) {
        self.process = process
        self.storePath = storePath
    }

    /// - Parameters:
    ///   - cpus: pins the server with `taskset -c` (its own cores, away from the load).
    ///   - environment: added to the server's environment (`HTTP_READ_TIMEOUT`…).
    static func start(
        binary: String, port: Int, backendURL: String, secret: String, http: HTTPClient, cpus: String? = nil, environment extra: [String: String] = [:]
    ) async throws -> RelayProcess {
        let storePath = FileManager.default.temporaryDirectory.appendingPathComponent("slack-bench-\(UUID().uuidString).sqlite").path
        let process = Process()
        if let cpus {
            // exec'd by taskset, so the process (and its VmHWM) is the server's own.
            process.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
            process.arguments = ["-c", cpus, binary, "serve"]
        } else {
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = ["serve"]
        }
        var environment = ProcessInfo.processInfo.environment.merging(extra) { _, new in new }
        environment["HTTP_PORT"] = String(port)
        environment["STORE_PATH"] = storePath
        environment["TRIBUNAL_URL"] = backendURL
        environment["SLACK_SIGNING_SECRET"] = secret
        environment["LOG_LEVEL"] = "error"
        process.environment = environment
        process.standardError = FileHandle.nullDevice
        try process.run()
        let relay = RelayProcess(process: process, storePath: storePath)
        // Ready when /healthz answers (bounded).
        for _ in 0..<200 {
            if let response = try? await http.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/healthz"), timeout: .seconds(1)),
                response.status == .ok
            {
                return relay
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        relay.stop()
        throw ValidationError("rhea-relay serve did not start on port \(port)")
    }

    /// The process's peak resident memory (VmHWM) in KiB.
    func peakMemoryKiB() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
        else { return nil }
        return Int(line.split(separator: " ").dropFirst().first ?? "")
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: storePath + suffix) }
    }
}

/// The `response_url`s: records when each reply arrived.
final class ReplySink: Sendable {
    private let state = Mutex<[Int: ContinuousClock.Instant]>([:])
    private let task: Task<Void, any Error>
    let port: Int

    private init(port: Int, task: Task<Void, any Error>) {
        self.port = port
        self.task = task
    }

    func url(for index: Int) -> String { "http://127.0.0.1:\(port)/r/\(index)" }

    static func start(logger: Logger) async throws -> ReplySink {
        let box = Mutex<ReplySink?>(nil)
        let router = Router()
        router.post("r/:index") { request, context -> HTTPResponse.Status in
            let arrived = ContinuousClock.now
            _ = try await request.body.collect(upTo: 1 << 20)
            if let index = context.parameters.get("index", as: Int.self), let sink = box.withLock({ $0 }) {
                sink.state.withLock { if $0[index] == nil { $0[index] = arrived } }
            }
            return .ok
        }
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: nil),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            }, logger: logger)
        let task = Task { try await app.runService(gracefulShutdownSignals: []) }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else { throw ValidationError("the reply sink did not start") }
        let sink = ReplySink(port: port, task: task)
        box.withLock { $0 = sink }
        return sink
    }

    func reset() { state.withLock { $0.removeAll() } }
    func arrivals() -> [Int: ContinuousClock.Instant] { state.withLock { $0 } }

    /// Waits (bounded) until `count` replies arrived; returns whether they did.
    func waitForAll(_ count: Int, timeout: Double) async -> Bool {
        let end = ContinuousClock.now.advanced(by: .seconds(timeout))
        while ContinuousClock.now < end {
            if state.withLock({ $0.count }) >= count { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    func stop() async {
        task.cancel()
        _ = await task.result
    }
}
