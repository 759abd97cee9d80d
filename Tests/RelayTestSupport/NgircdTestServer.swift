import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real IRC server for the tests: ngIRCd (Debian's `ngircd`, installed by `.ci/run`; installed
/// here with apt-get when missing, so no test skips for want of it), on two loopback ports —
/// plain text and TLS, with a certificate for `localhost` made for it (`caFile` trusts it) — in
/// a folder of its own, with ngIRCd's default flood limits. Each test starts its own (it is up
/// in a fraction of a second) and stops it; `restart()` kills it and starts it again on the same
/// ports, as an operator's restart looks to the clients.
public final class NgircdTestServer: Sendable {
    public let port: Int
    public let tlsPort: Int
    /// The certificate of the server's TLS port (self-signed, `localhost`).
    public let caFile: String
    public let folder: String
    /// ngIRCd's server password, when the test gave one.
    public let password: String?
    private let process: ProcessBox

    public static let binary = "/usr/sbin/ngircd"

    private init(port: Int, tlsPort: Int, folder: String, password: String?, process: ProcessBox) {
        self.port = port
        self.tlsPort = tlsPort
        self.caFile = folder + "/cert.pem"
        self.folder = folder
        self.password = password
        self.process = process
    }

    /// Starts a server; `password` makes it ask every client for one (PASS).
    public static func start(password: String? = nil) async throws -> NgircdTestServer {
        try await installIfMissing()
        let folder = "/tmp/rhea-ngircd-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // ngIRCd drops root for `nobody`, who must read its files.
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder)
        try await TestServerFiles.makeCertificate(
            in: folder, key: "key.pem", certificate: "cert.pem", names: ["localhost"], step: "openssl req (ngircd's certificate)")
        var lastError: (any Error)?
        for _ in 1...3 {
            let (port, tlsPort) = (try reservedLoopbackPort(), try reservedLoopbackPort())
            let server = NgircdTestServer(port: port, tlsPort: tlsPort, folder: folder, password: password, process: ProcessBox())
            do {
                try await server.launch()
                return server
            } catch {
                lastError = error
                server.stop()
            }
        }
        throw lastError ?? ChildProcessError(step: "start ngircd", reason: "no attempt made")
    }

    static func installIfMissing() async throws {
        guard !FileManager.default.isExecutableFile(atPath: binary) else { return }
        _ = try? await runProcess(
            ["apt-get", "install", "-y", "--no-install-recommends", "ngircd"], in: "/tmp", timeout: .seconds(300), step: "apt-get install ngircd")
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw ChildProcessError(step: "apt-get install ngircd", reason: "\(binary) is still missing: install ngircd (Debian)", output: "")
        }
    }

    var configuration: String {
        """
        [Global]
        Name = irc.rhea.test
        Info = Rhea Relay test server
        AdminInfo1 = Rhea Relay tests
        AdminInfo2 = loopback
        AdminEMail = tests@rhea.invalid
        Listen = 127.0.0.1
        Ports = \(port)
        MotdPhrase = "Rhea Relay tests"
        \(password.map { "Password = \($0)" } ?? "")
        [Options]
        DNS = no
        Ident = no
        PAM = no
        [SSL]
        CertFile = \(folder)/cert.pem
        KeyFile = \(folder)/key.pem
        Ports = \(tlsPort)

        """
    }

    private func launch() async throws {
        // A restart's log goes beside the last one's (`logs` reads them all).
        try TestServerFiles.setAside(folder + "/ngircd.log")
        try configuration.write(toFile: folder + "/ngircd.conf", atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: folder + "/ngircd.conf")
        let spawned = try SpawnedProcess(
            [Self.binary, "-n", "-f", folder + "/ngircd.conf"], in: folder, environment: [:], output: folder + "/ngircd.log", errors: folder + "/ngircd.log")
        process.set(spawned)
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            guard spawned.isRunning else { throw ChildProcessError(step: "start ngircd", reason: "it exited", output: logTail()) }
            if (try? String(contentsOfFile: folder + "/ngircd.log", encoding: .utf8))?.contains("ready.") == true { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw ChildProcessError(step: "start ngircd", reason: "not ready within 30 s", output: logTail())
    }

    /// Kills the server (every client loses its connection at once) and starts it again on the
    /// same ports after `pause`.
    public func restart(after pause: Duration = .milliseconds(500)) async throws {
        if let running = process.current {
            kill(running.processIdentifier, SIGKILL)
            _ = await running.exited(within: .seconds(10))
        }
        try await Task.sleep(for: pause)
        try await launch()
    }

    public func stop() {
        if let running = process.current {
            kill(running.processIdentifier, SIGKILL)
            _ = running.isRunning
        }
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Every log the server wrote, its restarts' included, oldest first.
    public var logs: String {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasPrefix("ngircd") && $0.hasSuffix(".log") }
        let paths = names.map { folder + "/" + $0 }.sorted { path, other in
            let first = (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date) ?? .distantPast
            let second = (try? FileManager.default.attributesOfItem(atPath: other)[.modificationDate] as? Date) ?? .distantPast
            return first < second
        }
        return paths.compactMap { try? String(contentsOfFile: $0, encoding: .utf8) }.joined(separator: "\n")
    }

    public func logTail(_ lines: Int = 40) -> String { TestServerFiles.tail(folder + "/ngircd.log", lines: lines) }

    /// Runs `body` with a server of its own, stopped after.
    public static func with<T>(password: String? = nil, _ body: (NgircdTestServer) async throws -> T) async throws -> T {
        let server = try await start(password: password)
        defer { server.stop() }
        return try await body(server)
    }
}

/// The server's current process, replaced on a restart.
private final class ProcessBox: Sendable {
    private let box = Mutex<SpawnedProcess?>(nil)
    var current: SpawnedProcess? { box.withLock { $0 } }
    func set(_ process: SpawnedProcess) { box.withLock { $0 = process } }
}
