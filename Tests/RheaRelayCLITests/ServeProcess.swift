import AsyncHTTPClient
import Foundation
import Glibc
import NIOCore
import NIOHTTP1

/// `rhea-relay serve` as a child process on a free loopback port, for tests that need the real
/// server as an operator runs it (its environment, its probes, its access to configuration).
final class ServeProcess {
    let process = Process()
    let port: Int
    /// stderr goes to a file, so a chatty log can never fill a pipe and stall the server.
    let stderrFile: URL

    /// Starts the built binary with exactly `environment` (plus PATH and HOME) and waits until
    /// `/healthz` answers, or throws with what the process printed.
    init(environment: [String: String], directory: URL) async throws {
        port = try Self.freePort()
        var env = environment
        env["HTTP_PORT"] = String(port)
        env["PATH"] = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        env["HOME"] = directory.path
        process.executableURL = CLIProcess.executable
        process.arguments = ["serve"]
        process.currentDirectoryURL = directory
        process.environment = env
        stderrFile = directory.appendingPathComponent("serve-\(port).stderr")
        FileManager.default.createFile(atPath: stderrFile.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: stderrFile)
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        for _ in 0..<300 {
            if (try? await get("/healthz").status) == 200 { return }
            if !process.isRunning { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let said = stop()
        throw ServeError("rhea-relay serve did not answer /healthz on port \(port): \(said)")
    }

    /// GETs a path on the server.
    func get(_ path: String) async throws -> (status: Int, body: String) {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)"), timeout: .seconds(2))
        let body = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), String(buffer: body))
    }

    /// Sends SIGTERM, waits for the exit (SIGKILL after 30 s), and returns what it printed on stderr.
    @discardableResult
    func stop() -> String {
        if process.isRunning {
            process.terminate()
            let deadline = Date().addingTimeInterval(30)
            while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        process.waitUntilExit()
        return (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? ""
    }

    /// A port nothing listens on now: bound to 0 by the kernel, then released.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ServeError("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw ServeError("could not find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

struct ServeError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
