import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One PostgreSQL cluster on disk: its temporary folder and the commands that drive it.
///
/// Everything lives in one folder (`/tmp/rhea-pg-<uuid>`): the data directory, the socket
/// directory, the password file and the server log, so removing the folder leaves nothing behind.
struct PostgresCluster: Sendable {
    let folder: String
    let binDirectory: String
    /// Set when the tests run as root: PostgreSQL refuses to run as root, so every command goes
    /// through `runuser -u postgres` and the folder belongs to that user.
    let runuser: String?
    /// Whether the server does the durability work a production server does (fsync, full page
    /// writes): off for tests, on for benchmarks.
    var durable = false

    var dataDirectory: String { folder + "/data" }
    var socketDirectory: String { folder + "/sock" }
    var logPath: String { folder + "/postgres.log" }
    var passwordFile: String { folder + "/pwfile" }

    /// Makes the folder and initialises a cluster whose superuser is `user` with `password`.
    static func create(user: String, password: String) async throws -> PostgresCluster {
        let binDirectory = try findBinDirectory()
        var runuser: String?
        var owner: (uid: uid_t, gid: gid_t)?
        if geteuid() == 0 {
            guard let account = getpwnam("postgres") else {
                throw PostgresTestServerError(step: "find the postgres user", reason: "running as root, and there is no `postgres` user to run the server")
            }
            owner = (account.pointee.pw_uid, account.pointee.pw_gid)
            runuser = try findExecutable("runuser", in: ["/usr/sbin", "/sbin", "/usr/bin", "/bin"])
        }
        let cluster = PostgresCluster(folder: "/tmp/rhea-pg-\(UUID().uuidString)", binDirectory: binDirectory, runuser: runuser)
        do {
            try FileManager.default.createDirectory(atPath: cluster.socketDirectory, withIntermediateDirectories: true)
            // 0755 so the postgres user can traverse it even before it owns it.
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: cluster.folder)
            guard FileManager.default.createFile(atPath: cluster.passwordFile, contents: Data((password + "\n").utf8), attributes: [.posixPermissions: 0o600])
            else { throw CocoaError(.fileWriteUnknown) }
            if let owner {
                for path in [cluster.folder, cluster.socketDirectory, cluster.passwordFile] where chown(path, owner.uid, owner.gid) != 0 {
                    throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
                }
            }
        } catch {
            try? FileManager.default.removeItem(atPath: cluster.folder)
            throw PostgresTestServerError(step: "prepare \(cluster.folder)", reason: "\(error)")
        }
        // Registered before initdb, so even a half-made folder is removed when the process exits.
        ClusterExitRegistry.register(cluster)
        try await cluster.initialise(user: user)
        return cluster
    }

    private func initialise(user: String) async throws {
        let common = ["-D", dataDirectory, "--auth=md5", "-U", user, "--pwfile=\(passwordFile)", "--encoding=UTF8", "--no-instructions"]
        do {
            try await run("initdb", common + ["--locale=C.UTF-8"], step: "initdb")
        } catch let first as PostgresTestServerError {
            // C.UTF-8 is missing from older C libraries; plain C sorts the same for ASCII data.
            // initdb removes the data directory it made when it fails, so it can run again.
            do {
                try await run("initdb", common + ["--locale=C"], step: "initdb")
            } catch let second as PostgresTestServerError {
                // The first failure is the informative one unless the locale was the problem.
                throw PostgresTestServerError(
                    step: "initdb", reason: "failed with --locale=C.UTF-8 and with --locale=C",
                    output: first.output + "\n--- with --locale=C ---\n" + second.output)
            }
        }
    }

    /// The server's command-line options: loopback only, its socket in our folder, and no
    /// durability work, which test data never needs. Room for 1 000 connections: the store
    /// suites run in parallel, each store with its own pool, and 300 ran out once under load
    /// ("too many clients already").
    private func serverOptions(port: Int) -> String {
        "-p \(port) -k \(socketDirectory) -c listen_addresses=127.0.0.1 -c max_connections=1000"
            + (durable ? "" : " -c fsync=off -c full_page_writes=off")
    }

    /// The postmaster's process id, from the data directory's `postmaster.pid`, while it runs.
    var postmasterPID: Int32? {
        guard let text = try? String(contentsOfFile: dataDirectory + "/postmaster.pid", encoding: .utf8) else { return nil }
        return text.split(separator: "\n").first.flatMap { Int32($0) }
    }

    /// Starts the server on a reserved loopback port (`reservedLoopbackPort`) and returns it; a
    /// failed start (something outside the tests took the port after all) tries another.
    func startOnFreePort() async throws -> Int {
        var lastError: (any Error)?
        for _ in 1...5 {
            let port = try reservedLoopbackPort()
            do {
                try await start(port: port)
                return port
            } catch {
                lastError = error
            }
        }
        throw lastError ?? PostgresTestServerError(step: "pg_ctl start", reason: "no attempt made")
    }

    func start(port: Int) async throws {
        try await run("pg_ctl", ["start", "-D", dataDirectory, "-l", logPath, "-w", "-t", "30", "-o", serverOptions(port: port)], step: "pg_ctl start")
    }

    func restart(port: Int) async throws {
        try await run(
            "pg_ctl", ["restart", "-D", dataDirectory, "-l", logPath, "-m", "fast", "-w", "-t", "30", "-o", serverOptions(port: port)], step: "pg_ctl restart")
    }

    func stop() async throws {
        try await run("pg_ctl", ["stop", "-D", dataDirectory, "-m", "fast", "-w", "-t", "30"], step: "pg_ctl stop")
    }

    /// The last `count` lines of the server log, for error messages.
    func logTail(_ count: Int = 20) -> String {
        guard let data = FileManager.default.contents(atPath: logPath) else { return "" }
        return tail(String(decoding: data, as: UTF8.self), lines: count)
    }

    /// Runs one of the cluster's tools (as the postgres user when we are root); a non-zero exit
    /// becomes an error naming `step`, with the command's output and the server log's tail.
    private func run(_ tool: String, _ arguments: [String], step: String) async throws {
        var command = [binDirectory + "/" + tool] + arguments
        if let runuser { command = [runuser, "-u", "postgres", "--"] + command }
        // pg_ctl bounds its own wait with -t 30; this only catches a tool that hangs outright.
        let output: (status: Int32, output: String)
        do {
            output = try await runProcess(command, in: folder, timeout: .seconds(120), step: step)
        } catch let error as ChildProcessError {
            throw PostgresTestServerError(step: step, reason: error.reason, output: error.output)
        }
        guard output.status == 0 else {
            var details = tail(output.output, lines: 20)
            let log = logTail()
            if !log.isEmpty { details += "\n--- server log (tail) ---\n" + log }
            throw PostgresTestServerError(step: step, reason: "exit status \(output.status)", output: details)
        }
    }

    private static func findBinDirectory() throws -> String {
        // Debian's layout keeps one folder per major version; the newest is the one to test.
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        let newest = versions.compactMap(Int.init).sorted(by: >).map { "\(root)/\($0)/bin" }
        if let directory = newest.first(where: { FileManager.default.isExecutableFile(atPath: $0 + "/initdb") }) {
            return directory
        }
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        let initdb = try findExecutable("initdb", in: path)
        // Through the symlink, so pg_ctl and postgres come from the same installation.
        return URL(fileURLWithPath: initdb).resolvingSymlinksInPath().deletingLastPathComponent().path
    }

    private static func findExecutable(_ name: String, in directories: [String]) throws -> String {
        for directory in directories where FileManager.default.isExecutableFile(atPath: directory + "/" + name) {
            return directory + "/" + name
        }
        throw PostgresTestServerError(
            step: "find \(name)", reason: "not found in \(directories.joined(separator: ":")); install PostgreSQL (apt-get install -y postgresql)")
    }
}

/// Every cluster this process made, stopped and removed when the process exits.
///
/// Tests never say when they are done with the shared cluster, so the end of the process is the
/// only moment to stop it; a server left running would hold its port and folder forever.
enum ClusterExitRegistry {
    private static let state = Mutex<(installed: Bool, clusters: [PostgresCluster])>((false, []))

    static func register(_ cluster: PostgresCluster) {
        let install = state.withLock { state in
            state.clusters.append(cluster)
            defer { state.installed = true }
            return !state.installed
        }
        if install { atexit { ClusterExitRegistry.stopAll() } }
    }

    /// Runs from `atexit`: pg_ctl is spawned and waited for on this thread, nothing asynchronous.
    private static func stopAll() {
        let clusters = state.withLock { $0.clusters }
        for cluster in clusters {
            var command = [cluster.binDirectory + "/pg_ctl", "stop", "-D", cluster.dataDirectory, "-m", "immediate", "-w", "-t", "10"]
            if let runuser = cluster.runuser { command = [runuser, "-u", "postgres", "--"] + command }
            if FileManager.default.fileExists(atPath: cluster.dataDirectory + "/postmaster.pid") { spawnQuietlyAndWait(command, in: cluster.folder) }
            try? FileManager.default.removeItem(atPath: cluster.folder)
        }
    }

    private static func spawnQuietlyAndWait(_ command: [String], in directory: String) {
        guard let pid = try? spawn(command, in: directory, output: nil, step: "stop at exit") else { return }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    }
}
