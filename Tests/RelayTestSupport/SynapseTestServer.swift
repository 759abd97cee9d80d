import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
public import RelayCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real Matrix homeserver for the tests: Synapse from PyPI (`PythonPeers`), on a loopback port,
/// in a folder of its own, with a configuration written here (client API only, no federation, an
/// SQLite database, relaxed rate limits, fast password hashing, a registration shared secret).
///
/// Tests share one homeserver per test process (`shared()`) and isolate themselves with users and
/// rooms of their own (`register(_:)`): starting Synapse takes a few seconds, a user a fraction
/// of one. The server is stopped and its folder removed when the test process exits.
public struct SynapseTestServer: Sendable {
    /// The homeserver's base URL, `http://127.0.0.1:<port>`.
    public let url: String
    /// The server name user ids end with (`@ada:localhost`).
    public let serverName = "localhost"
    let sharedSecret: String
    let folder: String

    private static let sharedStart = SharedStart<SynapseTestServer>()

    /// The test process's shared homeserver, started on the first call (`SharedStart`).
    public static func shared() async throws -> SynapseTestServer {
        try await sharedStart.value { try await startPrivate() }
    }

    /// Starts a homeserver of its own.
    public static func startPrivate() async throws -> SynapseTestServer {
        let python = try await PythonPeers.python()
        let folder = "/tmp/rhea-synapse-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder + "/media", withIntermediateDirectories: true)
        SynapseExitRegistry.register(folder: folder)
        let secret = UUID().uuidString
        var lastError: (any Error)?
        for _ in 1...3 {
            let port = try reservedLoopbackPort()
            try configuration(folder: folder, port: port, secret: secret).write(toFile: folder + "/homeserver.yaml", atomically: true, encoding: .utf8)
            let keys = try await runProcess(
                [python, "-m", "synapse.app.homeserver", "-c", "homeserver.yaml", "--generate-keys"], in: folder, timeout: .seconds(120),
                step: "synapse --generate-keys")
            guard keys.status == 0 else { throw ChildProcessError(step: "synapse --generate-keys", reason: "exit \(keys.status)", output: keys.output) }
            let pid = try spawn(
                [python, "-m", "synapse.app.homeserver", "-c", "homeserver.yaml"], in: folder, output: folder + "/synapse.log", step: "start synapse")
            SynapseExitRegistry.register(pid: pid)
            let server = SynapseTestServer(url: "http://127.0.0.1:\(port)", sharedSecret: secret, folder: folder)
            do {
                try await server.waitUntilUp(pid: pid)
                return server
            } catch {
                lastError = error
                kill(pid, SIGKILL)
            }
        }
        throw lastError ?? ChildProcessError(step: "start synapse", reason: "no attempt made")
    }

    /// The homeserver's configuration: loopback, client API only, nothing leaves the machine.
    static func configuration(folder: String, port: Int, secret: String) -> String {
        let relaxed = "{per_second: 10000, burst_count: 10000}"
        return """
            server_name: "localhost"
            pid_file: \(folder)/homeserver.pid
            listeners:
              - port: \(port)
                bind_addresses: ['127.0.0.1']
                type: http
                tls: false
                x_forwarded: false
                resources:
                  - names: [client, media]
                    compress: false
            database:
              name: sqlite3
              args:
                database: \(folder)/homeserver.db
            media_store_path: \(folder)/media
            signing_key_path: \(folder)/signing.key
            registration_shared_secret: "\(secret)"
            report_stats: false
            macaroon_secret_key: "\(UUID().uuidString)"
            form_secret: "\(UUID().uuidString)"
            trusted_key_servers: []
            suppress_key_server_warning: true
            bcrypt_rounds: 4
            presence:
              enabled: false
            rc_message: \(relaxed)
            rc_registration: \(relaxed)
            rc_login: {address: \(relaxed), account: \(relaxed), failed_attempts: \(relaxed)}
            rc_joins: {local: \(relaxed), remote: \(relaxed)}
            rc_invites: {per_room: \(relaxed), per_user: \(relaxed), per_issuer: \(relaxed)}
            rc_admin_redaction: \(relaxed)

            """
    }

    private func waitUntilUp(pid: pid_t) async throws {
        let deadline = ContinuousClock.now + .seconds(90)
        while ContinuousClock.now < deadline {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                throw ChildProcessError(step: "start synapse", reason: "it exited", output: logTail())
            }
            if let answer = try? await request(.GET, "/_matrix/client/versions"), answer.status == 200 { return }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw ChildProcessError(step: "start synapse", reason: "no answer within 90 s", output: logTail())
    }

    /// The end of the server's log, for error messages.
    public func logTail(_ lines: Int = 30) -> String {
        tail((FileManager.default.contents(atPath: folder + "/synapse.log")).map { String(decoding: $0, as: UTF8.self) } ?? "", lines: lines)
    }

    /// Registers a new user (`name` plus a random suffix, so tests never share one) through the
    /// shared-secret admin API, and returns it logged in.
    public func register(_ name: String, admin: Bool = false) async throws -> MatrixTestUser {
        let localpart = "\(name)-\(UUID().uuidString.prefix(8).lowercased())"
        let password = UUID().uuidString
        let nonceAnswer = try await request(.GET, "/_synapse/admin/v1/register")
        guard let nonce = nonceAnswer.json?["nonce"]?.stringValue else { throw ChildProcessError(step: "register \(name)", reason: "no nonce") }
        var message = Data()
        for (index, part) in [nonce, localpart, password, admin ? "admin" : "notadmin"].enumerated() {
            if index > 0 { message.append(0) }
            message.append(Data(part.utf8))
        }
        let mac = HMAC<Insecure.SHA1>.authenticationCode(for: message, using: SymmetricKey(data: Data(sharedSecret.utf8)))
        let body: JSONValue = [
            "nonce": .string(nonce), "username": .string(localpart), "password": .string(password), "admin": .bool(admin),
            "mac": .string(mac.map { String(format: "%02x", $0) }.joined()),
        ]
        let answer = try await request(.POST, "/_synapse/admin/v1/register", body: body)
        guard answer.status == 200, let token = answer.json?["access_token"]?.stringValue, let user = answer.json?["user_id"]?.stringValue else {
            throw ChildProcessError(step: "register \(name)", reason: "HTTP \(answer.status): \(String(decoding: answer.body, as: UTF8.self))")
        }
        return MatrixTestUser(server: self, user: user, token: token)
    }

    /// One request to the homeserver: its status and body.
    /// `bytes` of `contentType` go as the body when given (a media upload), else `body` as JSON.
    func request(
        _ method: HTTPMethod, _ path: String, token: String? = nil, body: JSONValue? = nil, bytes: [UInt8]? = nil, contentType: String? = nil
    ) async throws -> MatrixTestAnswer {
        var request = HTTPClientRequest(url: url + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let bytes {
            request.headers.add(name: "Content-Type", value: contentType ?? "application/octet-stream")
            request.body = .bytes(ByteBuffer(bytes: bytes))
        } else if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body.encoded()))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 16 * 1024 * 1024)
        return MatrixTestAnswer(status: Int(response.status.code), body: Array(bytes.readableBytesView))
    }
}

/// A homeserver's answer to a test's request.
public struct MatrixTestAnswer: Sendable {
    public var status: Int
    public var body: [UInt8]
    public var json: JSONValue? { JSONValue.parse(body) }
}

/// The homeservers this process started, stopped and their folders removed at exit.
enum SynapseExitRegistry {
    private static let state = Mutex<(installed: Bool, pids: [pid_t], folders: [String])>((false, [], []))

    static func register(pid: pid_t) {
        install { $0.pids.append(pid) }
    }

    static func register(folder: String) {
        install { $0.folders.append(folder) }
    }

    private static func install(_ change: (inout (installed: Bool, pids: [pid_t], folders: [String])) -> Void) {
        let first = state.withLock { state in
            change(&state)
            defer { state.installed = true }
            return !state.installed
        }
        if first { atexit { SynapseExitRegistry.stopAll() } }
    }

    /// Runs from `atexit`: a SIGTERM, a short wait, then SIGKILL.
    private static func stopAll() {
        let (pids, folders) = state.withLock { ($0.pids, $0.folders) }
        for pid in pids { kill(pid, SIGTERM) }
        for pid in pids {
            var status: Int32 = 0
            var waited = 0
            while waitpid(pid, &status, WNOHANG) == 0 && waited < 50 {
                usleep(100_000)
                waited += 1
            }
            if waited >= 50 {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
            }
        }
        for folder in folders { try? FileManager.default.removeItem(atPath: folder) }
    }
}
