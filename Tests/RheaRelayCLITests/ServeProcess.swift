import AsyncHTTPClient
import Foundation
import Glibc
import NIOCore
import NIOHTTP1
import RelayTestSupport

/// `rhea-relay serve` as a child process on a loopback port the system chose (`HTTP_PORT=0`;
/// "serving on" names it), for tests that need the real server as an operator runs it (its
/// environment, its probes, its access to configuration).
final class ServeProcess {
    let process: SpawnedProcess
    private(set) var port = 0
    /// stderr goes to a file, so a chatty log can never fill a pipe and stall the server.
    let stderrFile: URL

    /// Starts the built binary with exactly `environment` (plus PATH and HOME), under `umask`
    /// (octal, `000`) when given, and waits until `/healthz` answers, or throws with what the
    /// process printed.
    init(environment: [String: String], directory: URL, umask: String? = nil) async throws {
        var env = environment
        env["HTTP_PORT"] = "0"
        env["PATH"] = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        env["HOME"] = directory.path
        // The umask is the process's own: set it in a shell that then becomes the relay.
        let command =
            umask.map { ["/bin/sh", "-c", "umask \($0) && exec \"$0\" serve", CLIProcess.executable.path] } ?? [CLIProcess.executable.path, "serve"]
        stderrFile = directory.appendingPathComponent("serve-\(UUID().uuidString).stderr")
        process = try SpawnedProcess(command, in: directory.path, environment: env, output: nil, errors: stderrFile.path)
        // Up to 60 s: serve migrates its store first, beside PostgreSQL, Synapse and other tests.
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if port == 0 { port = Self.listeningPort(in: (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? "") ?? 0 }
            if port != 0, (try? await get("/healthz").status) == 200 { return }
            if !process.isRunning { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let said = await stop()
        throw ServeError("rhea-relay serve did not answer /healthz (on port \(port == 0 ? "none said" : String(port))): \(said)")
    }

    /// The port in `serve`'s "serving on http://127.0.0.1:<port> (…" line, once printed.
    static func listeningPort(in stderr: String) -> Int? {
        guard let line = stderr.split(separator: "\n").first(where: { $0.contains(" serving on http://") }),
            let address = line.split(separator: " serving on http://").last?.split(separator: " ").first,
            let port = address.split(separator: ":").last.flatMap({ Int($0) }), port > 0
        else { return nil }
        return port
    }

    /// GETs a path on the server.
    func get(_ path: String, timeout: TimeAmount = .seconds(2)) async throws -> (status: Int, body: String) {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)"), timeout: timeout)
        let body = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), String(buffer: body))
    }

    /// Sends SIGTERM, waits for the exit (SIGKILL after 30 s), and returns what it printed on
    /// stderr. It polls with `Task.sleep`: a blocking wait would hold one of the few threads every
    /// test in the process shares, and stall their servers and deadlines meanwhile.
    @discardableResult
    func stop() async -> String {
        if process.isRunning { process.terminate() }
        await exited(within: .seconds(30))
        return (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? ""
    }

    /// Returns once the process has exited (SIGKILL after `within`), polling.
    func exited(within limit: Duration = .seconds(30)) async {
        await process.exited(within: limit)
    }
}

struct ServeError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
