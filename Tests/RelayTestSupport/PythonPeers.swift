import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The Python programs the tests run as real peers: a Matrix homeserver (Synapse) and the
/// Mattermost reference client (mattermostdriver), in one virtual environment from PyPI.
///
/// The environment is `RHEA_TEST_PEERS_VENV` when set (`.ci/run` sets it after installing),
/// else `.peers-venv` at the package's root. When it lacks a package the tests make it
/// themselves (`python3 -m venv`, then `pip install` of the pinned versions, about 30 s), so
/// no test is skipped for want of it; a lock file keeps two test processes from installing at
/// once.
public enum PythonPeers {
    /// What the tests drive, pinned to the versions ../shared/platforms.md was checked with.
    public static let packages = ["matrix-synapse==1.163.2", "mattermostdriver==7.3.2"]
    /// The modules that must import for the environment to count as ready.
    static let modules = ["synapse", "mattermostdriver"]

    private static let ready = SharedStart<String>()

    /// The environment's folder, made on the first call if needed.
    public static func venv() async throws -> String {
        try await ready.value { try await prepare() }
    }

    /// The environment's `python`.
    public static func python() async throws -> String { try await venv() + "/bin/python" }

    static var folder: String {
        if let configured = ProcessInfo.processInfo.environment["RHEA_TEST_PEERS_VENV"], !configured.isEmpty { return configured }
        // Tests/RelayTestSupport/PythonPeers.swift → the package root.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".peers-venv").path
    }

    private static func prepare() async throws -> String {
        let venv = folder
        let parent = URL(fileURLWithPath: venv).deletingLastPathComponent().path
        if try await imports(venv: venv) { return venv }
        let lock = open(venv + ".lock", O_CREAT | O_RDWR, 0o600)
        guard lock >= 0 else { throw ChildProcessError(step: "lock \(venv).lock", reason: String(cString: strerror(errno))) }
        defer { close(lock) }
        // Blocking, but only while another test process installs: then this one waits its turn.
        while flock(lock, LOCK_EX) != 0 && errno == EINTR {}
        defer { flock(lock, LOCK_UN) }
        if try await imports(venv: venv) { return venv }
        if !FileManager.default.isExecutableFile(atPath: venv + "/bin/pip") {
            try await check(runProcess(["python3", "-m", "venv", venv], in: parent, timeout: .seconds(120), step: "python3 -m venv \(venv)"))
        }
        try await check(
            runProcess(
                [venv + "/bin/pip", "install", "-q"] + packages, in: parent, timeout: .seconds(900), step: "pip install \(packages.joined(separator: " "))"))
        guard try await imports(venv: venv) else {
            throw ChildProcessError(step: "import \(modules.joined(separator: ", "))", reason: "still missing from \(venv) after pip install")
        }
        return venv
    }

    private static func imports(venv: String) async throws -> Bool {
        guard FileManager.default.isExecutableFile(atPath: venv + "/bin/python") else { return false }
        let script = "import " + modules.joined(separator: ", ")
        return try await runProcess(
            [venv + "/bin/python", "-c", script], in: URL(fileURLWithPath: venv).deletingLastPathComponent().path, timeout: .seconds(60), step: "check \(venv)"
        ).status == 0
    }

    private static func check(_ result: (status: Int32, output: String)) throws {
        guard result.status != 0 else { return }
        throw ChildProcessError(step: "prepare the Python peers", reason: "exit status \(result.status)", output: tail(result.output, lines: 20))
    }
}

extension PythonPeers {
    /// Runs `script` (Python source, written to a temporary file) with the environment's python
    /// and `arguments`, within `timeout`: its exit status and output (stdout and stderr together).
    public static func run(script: String, arguments: [String] = [], timeout: Duration = .seconds(60)) async throws -> (status: Int32, output: String) {
        let python = try await python()
        let directory = FileManager.default.temporaryDirectory.path
        let file = directory + "/rhea-peer-\(UUID().uuidString).py"
        try Data(script.utf8).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        return try await runProcess([python, file] + arguments, in: directory, timeout: timeout, step: "python \(file)")
    }
}
