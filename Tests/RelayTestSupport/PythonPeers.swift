import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The Python programs the tests run as real peers: a Matrix homeserver (Synapse), the
/// Mattermost reference client (mattermostdriver), Microsoft's Bot Framework SDK (botbuilder-core,
/// with aiohttp, which its connector imports) and Google's libraries (google-auth, and
/// google-apps-chat's message types), the IRC and XMPP clients people use (irc, slixmpp) and
/// Selenium (the console's browser test; 4.45: later versions need a newer certifi than the
/// package index here has), in one virtual environment from PyPI.
///
/// The environment is `RHEA_TEST_PEERS_VENV` when set (`.ci/run` sets it after installing),
/// else `.peers-venv` at the package's root. When it lacks a package the tests make it
/// themselves (`python3 -m venv`, then `pip install` of the pinned versions, about 30 s), so
/// no test is skipped for want of it; a lock file keeps two test processes from installing at
/// once.
public enum PythonPeers {
    /// What the tests drive, pinned to the versions these tests were written against.
    public static let packages = [
        "matrix-synapse==1.163.2", "mattermostdriver==7.3.2", "botbuilder-core==4.17.1", "aiohttp==3.14.5", "google-auth==2.62.2",
        "google-apps-chat==0.10.7", "irc==20.5.0", "slixmpp==1.17.0", "selenium==4.45.0",
    ]
    /// The modules that must import for the environment to count as ready.
    static let modules = ["synapse", "mattermostdriver", "botbuilder.core", "google.auth", "google.apps.chat_v1", "irc.client", "slixmpp", "selenium"]

    private static let ready = SharedStart<String>()

    /// The environment's folder, made on the first call if needed.
    public static func venv() async throws -> String {
        try await ready.value { try await prepare() }
    }

    /// The environment's `python`.
    public static func python() async throws -> String { try await venv() + "/bin/python" }

    static var folder: String { PythonVenv.folder(variable: "RHEA_TEST_PEERS_VENV", name: ".peers-venv") }

    private static func prepare() async throws -> String {
        try await PythonVenv(folder: folder, packages: packages, modules: modules, purpose: "the Python peers").prepare()
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
