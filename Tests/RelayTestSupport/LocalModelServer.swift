import Foundation

/// The real OpenAI-compatible model the council and first-run tests talk to: llama.cpp serving
/// SmolLM2-135M, as a newcomer starts it (`scripts/local-model start`).
///
/// `RHEA_TEST_LLM_URL` names one already running (`.ci/run` starts it and sets it). Otherwise the
/// first test that needs it runs the script itself — on port 18082 with its venv in `.llm-venv`
/// at the package's root, with a prebuilt wheel when the machine keeps one beside the clone
/// (CI's machines do, in `shared/llm`) —
/// so no test is skipped for want of it. The script is idempotent (a server already answering
/// is reused) and leaves the server running for the next run: `scripts/local-model stop --dir
/// .llm-venv` stops it.
public enum LocalModelServer {
    /// The model's name as the server serves it.
    public static let model = "smollm2-135m-instruct"

    private static let started = SharedStart<String>()

    /// The server's `/v1` base URL, started first when needed.
    public static func url() async throws -> String {
        if let configured = ProcessInfo.processInfo.environment["RHEA_TEST_LLM_URL"], !configured.isEmpty { return configured }
        return try await started.value { try await start() }
    }

    private static func start() async throws -> String {
        // Tests/RelayTestSupport/LocalModelServer.swift → the package root.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var command = [
            root.appendingPathComponent("scripts/local-model").path, "start", "--port", "18082", "--dir", root.appendingPathComponent(".llm-venv").path,
        ]
        let wheels = root.deletingLastPathComponent().appendingPathComponent("shared/llm").path
        if FileManager.default.fileExists(atPath: wheels) { command += ["--find-links", wheels] }
        // Compiling llama.cpp from source, when no wheel is at hand, takes 11+ minutes on two cores.
        let result = try await runProcess(command, in: root.path, timeout: .seconds(2400), step: "scripts/local-model start")
        let lines = result.output.split(separator: "\n").map(String.init)
        guard result.status == 0, let url = lines.last(where: { $0.hasPrefix("http://") }) else {
            throw ChildProcessError(step: "scripts/local-model start", reason: "exit status \(result.status)", output: tail(result.output, lines: 20))
        }
        return url
    }
}
