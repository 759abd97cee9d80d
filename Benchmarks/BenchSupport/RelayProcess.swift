public import AsyncHTTPClient
public import Foundation
import Glibc
import NIOCore
import NIOHTTP1

/// `rhea-relay serve` in its own process, on embedded defaults plus the bench's environment, so
/// its memory and CPU time are its own. It can be killed with SIGKILL and started again on the
/// same store, as a crash would leave it.
public final class RelayProcess: Sendable {
    public let process: Process
    public let storePath: String
    /// From launch to the first answered `/healthz`.
    public let startToReady: Duration

    private init(process: Process, storePath: String, startToReady: Duration) {
        self.process = process
        self.storePath = storePath
        self.startToReady = startToReady
    }

    public struct Launch: Sendable {
        public var binary: String
        public var port: Int
        public var backendURL: String
        /// The Slack signing secret; nil leaves Slack off (a Discord run).
        public var secret: String?
        /// Pins the server with `taskset -c` (its own cores, away from the load).
        public var cpus: String?
        /// Added to the server's environment (`HTTP_READ_TIMEOUT`…; `LOG_LEVEL` is `error` unless given).
        public var environment: [String: String] = [:]
        /// Where the server's output goes (appended); nowhere when nil.
        public var log: String?

        public init(
            binary: String, port: Int, backendURL: String, secret: String? = nil, cpus: String? = nil, environment: [String: String] = [:],
            log: String? = nil
        ) {
            self.binary = binary
            self.port = port
            self.backendURL = backendURL
            self.secret = secret
            self.cpus = cpus
            self.environment = environment
            self.log = log
        }
    }

    /// Starts a server on a new store, or on `storePath` (a restart after a crash).
    public static func start(_ launch: Launch, http: HTTPClient, storePath: String? = nil) async throws -> RelayProcess {
        let storePath = storePath ?? FileManager.default.temporaryDirectory.appendingPathComponent("slack-bench-\(UUID().uuidString).sqlite").path
        let process = Process()
        if let cpus = launch.cpus {
            // exec'd by taskset, so the process (its VmHWM, its CPU time) is the server's own.
            process.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
            process.arguments = ["-c", cpus, launch.binary, "serve"]
        } else {
            process.executableURL = URL(fileURLWithPath: launch.binary)
            process.arguments = ["serve"]
        }
        var environment = ProcessInfo.processInfo.environment.merging(launch.environment) { _, new in new }
        environment["HTTP_PORT"] = String(launch.port)
        environment["STORE_PATH"] = storePath
        environment["TRIBUNAL_URL"] = launch.backendURL
        if let secret = launch.secret { environment["SLACK_SIGNING_SECRET"] = secret }
        if launch.environment["LOG_LEVEL"] == nil { environment["LOG_LEVEL"] = "error" }
        process.environment = environment
        process.standardError = FileHandle.nullDevice
        if let log = launch.log {
            if !FileManager.default.fileExists(atPath: log) { _ = FileManager.default.createFile(atPath: log, contents: nil) }
            if let handle = FileHandle(forWritingAtPath: log) {
                handle.seekToEndOfFile()
                process.standardError = handle
                process.standardOutput = handle
            }
        }
        let launched = ContinuousClock.now
        try process.run()
        // Ready when /healthz answers (bounded), polled often so start-to-ready is measured finely.
        for _ in 0..<2000 {
            if let response = try? await http.execute(HTTPClientRequest(url: "http://127.0.0.1:\(launch.port)/healthz"), timeout: .seconds(1)),
                response.status == .ok
            {
                return RelayProcess(process: process, storePath: storePath, startToReady: ContinuousClock.now - launched)
            }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        let failed = RelayProcess(process: process, storePath: storePath, startToReady: .zero)
        failed.stop()
        throw BenchError("rhea-relay serve did not start on port \(launch.port)")
    }

    private func status(_ field: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") })
        else { return nil }
        return Int(line.split(separator: " ").dropFirst().first ?? "")
    }

    /// Peak resident memory (VmHWM) in KiB.
    public func peakMemoryKiB() -> Int? { status("VmHWM") }
    /// Resident memory now (VmRSS) in KiB.
    public func memoryKiB() -> Int? { status("VmRSS") }

    /// User + system CPU time the server has used so far.
    public func cpuTime() -> Duration {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return .zero }
        // Fields after the command's closing parenthesis; utime and stime are the 14th and 15th.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Int(fields[11]), let system = Int(fields[12]) else { return .zero }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return .seconds(Double(user + system) / ticks)
    }

    /// SIGKILL: no graceful shutdown, as a crash or an OOM kill would end it. The store stays.
    public func kill() {
        guard process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// SIGTERM, then the store's files (and the key file the relay keeps beside it) are removed.
    public func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        for suffix in ["", "-wal", "-shm", ".key"] { try? FileManager.default.removeItem(atPath: storePath + suffix) }
    }
}

public struct BenchError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
