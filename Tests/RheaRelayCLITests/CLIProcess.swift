import Foundation
import Glibc
import RelayTestSupport

/// Runs the built `rhea-relay` executable and captures what a user would see.
struct CLIProcess {
    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The executable beside this test bundle (SwiftPM builds it because the tests depend on it).
    static var executable: URL {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("rhea-relay")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
        // Fallback: the package's default build folder.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/rhea-relay")
    }

    /// A fresh working folder with its own database, removed by `cleanup()`.
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rhea-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func cleanup() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs the binary with `arguments` to its end (SIGKILL after `timeout`, then `timedOut`).
    /// Its stdin, stdout and stderr are files in `directory`; the wait polls (`SpawnedProcess`),
    /// holding no thread of the cooperative pool, which also serves the in-process fake servers.
    /// `during`: run beside the process with its pid (to send it a signal midway, say); the
    /// process is waited for after it returns.
    func run(
        _ arguments: [String], environment: [String: String] = [:], stdin: String? = nil, timeout: TimeInterval = 60,
        during: (@Sendable (pid_t) async throws -> Void)? = nil
    ) async throws -> Output {
        // A clean environment: only what the test gives, plus PATH and HOME.
        var env = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "HOME": directory.path,
            "STORE_PATH": directory.appendingPathComponent("relay.sqlite").path,
        ]
        env.merge(environment) { _, new in new }
        let files = directory.appendingPathComponent("run-\(UUID().uuidString)").path
        defer { for suffix in [".in", ".out", ".err"] { try? FileManager.default.removeItem(atPath: files + suffix) } }
        guard FileManager.default.createFile(atPath: files + ".in", contents: Data((stdin ?? "").utf8)) else {
            throw CLIError.couldNotWrite(files + ".in")
        }
        let process = try SpawnedProcess(
            [Self.executable.path] + arguments, in: directory.path, environment: env, input: files + ".in", output: files + ".out",
            errors: files + ".err")
        if let during { try await during(process.processIdentifier) }
        guard await process.waitForExit(within: .milliseconds(Int64(timeout * 1000))) else {
            await process.exited(within: .zero)
            throw CLIError.timedOut(arguments)
        }
        let read = { (suffix: String) in FileManager.default.contents(atPath: files + suffix).map { String(decoding: $0, as: UTF8.self) } ?? "" }
        return Output(status: process.terminationStatus, stdout: read(".out"), stderr: read(".err"))
    }

    enum CLIError: Error {
        case timedOut([String])
        case couldNotWrite(String)
    }
}
