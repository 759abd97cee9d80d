public import ArgumentParser
import Foundation
import Glibc
public import RelayTestSupport

/// Where the relays under test keep their store.
public enum BenchStore: String, CaseIterable, Sendable, ExpressibleByArgument {
    /// A SQLite file per server: the embedded default.
    case sqlite
    /// One PostgreSQL database the replicas share (`STORE_URL`), a fresh one per run.
    case postgres
}

/// A PostgreSQL server of the bench's own, run as in production (fsync and full page writes on,
/// `synchronous_commit` on) and pinned to the server's CPUs: the store's work, which SQLite does
/// inside the relay's process, is done here, so its CPU time counts in the cost of a command.
public struct PostgresUnderBench: Sendable {
    public let server: PostgresTestServer

    public static func start(cpus: String?) async throws -> PostgresUnderBench {
        let server = try await PostgresTestServer.startPrivate(durable: true)
        let bench = PostgresUnderBench(server: server)
        if let cpus {
            // Backends forked later inherit the postmaster's affinity; those running now are pinned one by one.
            for pid in bench.processes() { try bench.pin(pid, cpus: cpus) }
        }
        return bench
    }

    /// A new empty database, and its `STORE_URL`.
    public func newDatabase() async throws -> PostgresTestDatabase {
        try await server.createDatabase()
    }

    /// The postmaster and every process it started.
    public func processes() -> [Int32] {
        guard let postmaster = server.postmasterPID else { return [] }
        let children = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap(Int32.init).filter { pid in
            Self.stat(pid).flatMap { $0.count > 1 ? Int32($0[1]) : nil } == postmaster
        }
        return [postmaster] + children
    }

    /// CPU time of the server so far: the postmaster's own and that of its children it reaped
    /// (backends whose connection closed), plus each live child's.
    public func cpuTime() -> Duration {
        guard let postmaster = server.postmasterPID else { return .zero }
        var ticks = 0
        for pid in processes() {
            guard let fields = Self.stat(pid), fields.count > 14 else { continue }
            // After the command's closing parenthesis: state is 0, ppid 1, utime 11, stime 12, cutime 13, cstime 14.
            ticks += (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
            if pid == postmaster { ticks += (Int(fields[13]) ?? 0) + (Int(fields[14]) ?? 0) }
        }
        return .seconds(Double(ticks) / Double(sysconf(Int32(_SC_CLK_TCK))))
    }

    public func stop() async {
        try? await server.stop()
    }

    private func pin(_ pid: Int32, cpus: String) throws {
        let taskset = Process()
        taskset.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
        taskset.arguments = ["-a", "-p", "-c", cpus, String(pid)]
        taskset.standardOutput = FileHandle.nullDevice
        try taskset.run()
        taskset.waitUntilExit()
    }

    /// `/proc/<pid>/stat` fields after the command's closing parenthesis.
    private static func stat(_ pid: Int32) -> [Substring]? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(separator: " ")
    }
}
