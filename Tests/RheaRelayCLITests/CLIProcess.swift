import Foundation

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

    /// Runs the binary on its own thread: waiting for a process must not block the cooperative
    /// pool, which also serves the in-process fake servers.
    func run(_ arguments: [String], environment: [String: String] = [:], stdin: String? = nil, timeout: TimeInterval = 60) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try runBlocking(arguments, environment: environment, stdin: stdin, timeout: timeout) })
            }.start()
        }
    }

    private func runBlocking(_ arguments: [String], environment: [String: String], stdin: String?, timeout: TimeInterval) throws -> Output {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = arguments
        process.currentDirectoryURL = directory
        // A clean environment: only what the test gives, plus PATH and HOME.
        var env = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "HOME": directory.path,
            "STORE_PATH": directory.appendingPathComponent("relay.sqlite").path,
        ]
        env.merge(environment) { _, new in new }
        process.environment = env
        let out = Pipe()
        let err = Pipe()
        let input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        // Read both pipes to the end (the process exits when it is done writing).
        let stdoutData = out.fileHandleForReading.readDataToEndOfFile()
        let stderrData = err.fileHandleForReading.readDataToEndOfFile()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning {
            process.terminate()
            throw CLIError.timedOut(arguments)
        }
        return Output(
            status: process.terminationStatus, stdout: String(decoding: stdoutData, as: UTF8.self), stderr: String(decoding: stderrData, as: UTF8.self))
    }

    enum CLIError: Error {
        case timedOut([String])
    }
}
