import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real XMPP server for the tests: Prosody (Debian's `prosody`, installed by `.ci/run`;
/// installed here with apt-get when missing, so no test skips for want of it), on two loopback
/// ports — client connections with STARTTLS required, and direct TLS — for the domain `localhost`
/// with a multi-user chat service at `conference.localhost`, a certificate made for it (`caFile`
/// trusts it), accounts made with `prosodyctl register`, in a folder of its own. Each test starts
/// its own and stops it; `restart()` kills it and starts it again on the same ports.
public final class ProsodyTestServer: Sendable {
    public let port: Int
    public let tlsPort: Int
    public let folder: String
    /// The certificate of both ports (self-signed, `localhost` and `conference.localhost`).
    public var caFile: String { folder + "/localhost.crt" }
    public let domain = "localhost"
    public let conference = "conference.localhost"
    private let process = Mutex<SpawnedProcess?>(nil)

    public static let binary = "/usr/bin/prosody"

    private init(port: Int, tlsPort: Int, folder: String) {
        self.port = port
        self.tlsPort = tlsPort
        self.folder = folder
    }

    public static func start() async throws -> ProsodyTestServer {
        try await installIfMissing()
        let folder = "/tmp/rhea-prosody-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder + "/data", withIntermediateDirectories: true)
        try await TestServerFiles.makeCertificate(
            in: folder, key: "localhost.key", certificate: "localhost.crt", names: ["localhost", "conference.localhost"],
            step: "openssl req (prosody's certificate)")
        var lastError: (any Error)?
        for _ in 1...3 {
            let server = ProsodyTestServer(port: try reservedLoopbackPort(), tlsPort: try reservedLoopbackPort(), folder: folder)
            do {
                try await server.launch()
                return server
            } catch {
                lastError = error
                server.stop(removing: false)
            }
        }
        try? FileManager.default.removeItem(atPath: folder)
        throw lastError ?? ChildProcessError(step: "start prosody", reason: "no attempt made", output: "")
    }

    static func installIfMissing() async throws {
        guard !FileManager.default.isExecutableFile(atPath: binary) else { return }
        _ = try? await runProcess(
            ["apt-get", "install", "-y", "--no-install-recommends", "prosody"], in: "/tmp", timeout: .seconds(300), step: "apt-get install prosody")
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw ChildProcessError(step: "apt-get install prosody", reason: "\(binary) is still missing: install prosody (Debian)", output: "")
        }
    }

    /// Prosody's configuration: loopback only, no server-to-server, STARTTLS required on the
    /// client port, hashed passwords, accounts made only by `register`, a MUC service.
    var configuration: String {
        """
        run_as_root = true
        pidfile = "\(folder)/prosody.pid"
        data_path = "\(folder)/data"
        log = { { levels = { min = "info" }, to = "console" } }
        interfaces = { "127.0.0.1" }
        c2s_ports = { \(port) }
        c2s_direct_tls_ports = { \(tlsPort) }
        s2s_ports = { }
        http_ports = { }
        https_ports = { }
        modules_enabled = { "roster"; "saslauth"; "tls"; "disco"; "ping" }
        modules_disabled = { "s2s" }
        authentication = "internal_hashed"
        c2s_require_encryption = true
        allow_registration = false
        ssl = { certificate = "\(folder)/localhost.crt"; key = "\(folder)/localhost.key" }
        VirtualHost "localhost"
        Component "conference.localhost" "muc"
            -- A room someone makes by joining opens at once, whoever comes first.
            muc_room_locking = false

        """
    }

    private func launch() async throws {
        try configuration.write(toFile: folder + "/prosody.cfg.lua", atomically: true, encoding: .utf8)
        let log = folder + "/prosody.log"
        try TestServerFiles.setAside(log)
        let spawned = try SpawnedProcess(
            [Self.binary, "--config", folder + "/prosody.cfg.lua", "-F"], in: folder, environment: ["PATH": "/usr/bin:/bin"], output: log, errors: log)
        process.withLock { $0 = spawned }
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            guard spawned.isRunning else { throw ChildProcessError(step: "start prosody", reason: "it exited", output: logTail()) }
            if (try? String(contentsOfFile: log, encoding: .utf8))?.contains("Activated service 'c2s_direct_tls'") == true { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw ChildProcessError(step: "start prosody", reason: "not ready within 30 s", output: logTail())
    }

    /// Makes the account `user@localhost` with `password`.
    public func register(_ user: String, password: String) async throws {
        let made = try await runProcess(
            ["prosodyctl", "--config", folder + "/prosody.cfg.lua", "register", user, domain, password], in: folder, timeout: .seconds(60),
            step: "prosodyctl register \(user)")
        guard made.status == 0 else { throw ChildProcessError(step: "prosodyctl register \(user)", reason: "exit \(made.status)", output: made.output) }
    }

    /// Kills the server (every client loses its connection at once) and starts it again on the
    /// same ports after `pause`.
    public func restart(after pause: Duration = .milliseconds(500)) async throws {
        if let running = process.withLock({ $0 }) {
            kill(running.processIdentifier, SIGKILL)
            _ = await running.exited(within: .seconds(10))
        }
        try await Task.sleep(for: pause)
        try await launch()
    }

    public func stop(removing: Bool = true) {
        if let running = process.withLock({ $0 }) {
            kill(running.processIdentifier, SIGKILL)
            _ = running.isRunning
        }
        if removing { try? FileManager.default.removeItem(atPath: folder) }
    }

    public func logTail(_ lines: Int = 40) -> String { TestServerFiles.tail(folder + "/prosody.log", lines: lines) }

    /// Runs `body` with a server of its own, stopped after.
    public static func with<T>(_ body: (ProsodyTestServer) async throws -> T) async throws -> T {
        let server = try await start()
        defer { server.stop() }
        return try await body(server)
    }
}
