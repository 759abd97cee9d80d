import Foundation

/// A person on a real IRC server, for the tests: `irc_human.py` (the `irc` library from PyPI,
/// in `PythonPeers`), connected as `nick`, in `channels`, running a plan of steps
/// (`IRCHuman.Step`) and recording what it received as JSON lines, which the test reads while it
/// runs (`records`) and once it is done (`finish`).
public final class IRCHuman: Sendable {
    /// One step of the plan.
    public enum Step: Sendable {
        case say(String, to: String)
        case ctcp(String, to: String)
        /// Until `nick` is in `channel`.
        case waitJoin(String, channel: String, timeout: Double = 60)
        /// Until `count` messages from `nick` were received in all.
        case waitFrom(String, count: Int, timeout: Double = 60)
        /// Until a message from `nick` contains `text`.
        case waitText(String, from: String, timeout: Double = 90)
        case sleep(Double)
        case mark(String)
        /// Until the test makes the file (`signal`).
        case waitSignal(String, timeout: Double = 120)

        var json: [String: Any] {
            switch self {
            case .say(let text, let target): ["say": target, "text": text]
            case .ctcp(let text, let target): ["ctcp": target, "text": text]
            case .waitJoin(let nick, let channel, let timeout): ["wait_join": nick, "channel": channel, "timeout": timeout]
            case .waitFrom(let nick, let count, let timeout): ["wait_from": nick, "count": count, "timeout": timeout]
            case .waitText(let text, let nick, let timeout): ["wait_text": nick, "contains": text, "timeout": timeout]
            case .sleep(let seconds): ["sleep": seconds]
            case .mark(let name): ["mark": name]
            case .waitSignal(let name, let timeout): ["wait_file": name, "timeout": timeout]
            }
        }
    }

    /// One thing the person saw.
    public struct Record: Sendable, Hashable {
        public var event: String
        public var kind: String?
        public var from: String?
        public var target: String?
        public var text: String?
        public var name: String?
        public var reason: String?
        public var time: Double
    }

    let process: SpawnedProcess
    let output: String
    let folder: String

    /// Starts the person on `server` (TLS when `tls`).
    public init(
        on server: NgircdTestServer, nick: String, channels: [String], plan: [Step], tls: Bool = false, password: String? = nil, limit: Duration = .seconds(180)
    ) async throws {
        let python = try await PythonPeers.python()
        guard let script = Bundle.module.url(forResource: "irc_human", withExtension: "py", subdirectory: "Resources/irc") else {
            throw ChildProcessError(step: "irc_human.py", reason: "not among the test resources", output: "")
        }
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("rhea-irc-human-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        output = folder + "/records.jsonl"
        let planData = try JSONSerialization.data(withJSONObject: plan.map(\.json))
        var command = [
            python, script.path, "--host", tls ? "localhost" : "127.0.0.1", "--port", "\(tls ? server.tlsPort : server.port)", "--nick", nick,
            "--channels", channels.joined(separator: ","), "--plan", String(decoding: planData, as: UTF8.self), "--limit", "\(limit.components.seconds)",
        ]
        if tls { command += ["--tls-ca", server.caFile] }
        if let password { command += ["--password", password] }
        process = try SpawnedProcess(command, in: folder, environment: ProcessInfo.processInfo.environment, output: output, errors: folder + "/errors.log")
    }

    /// Lets a `waitSignal(name)` step go on (the file is made in the person's folder, where it runs).
    public func signal(_ name: String) throws {
        try Data().write(to: URL(fileURLWithPath: folder + "/" + name))
    }

    /// What it saw so far.
    public var records: [Record] {
        guard let text = try? String(contentsOfFile: output, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return Record(
                event: object["event"] as? String ?? "", kind: object["kind"] as? String, from: object["from"] as? String, target: object["target"] as? String,
                text: object["text"] as? String, name: object["name"] as? String, reason: object["reason"] as? String, time: object["t"] as? Double ?? 0)
        }
    }

    /// Messages (PRIVMSG and NOTICE) from `nick`, in order.
    public func messages(from nick: String) -> [Record] {
        records.filter { $0.event == "message" && $0.from?.lowercased() == nick.lowercased() }
    }

    /// Waits until the plan is done (or failed), then returns everything it saw; an error step
    /// (a wait that timed out) throws with the records.
    public func finish(within limit: Duration = .seconds(240)) async throws -> [Record] {
        _ = await process.exited(within: limit)
        let seen = records
        let failure = seen.first { $0.event == "error" && ($0.reason?.contains("timed out") == true || $0.reason?.contains("limit") == true) }
        if failure != nil || !seen.contains(where: { $0.event == "done" }) {
            let errors = (try? String(contentsOfFile: folder + "/errors.log", encoding: .utf8)) ?? ""
            throw ChildProcessError(
                step: "irc_human.py", reason: failure?.reason ?? "it ended without finishing its plan",
                output: seen.map { "\($0.event) \($0.from ?? "") \($0.target ?? "") \($0.text ?? "")" }.joined(separator: "\n") + "\n" + errors)
        }
        return seen
    }

    deinit {
        process.terminate()
        try? FileManager.default.removeItem(atPath: folder)
    }
}
