import Foundation

/// A person on a real XMPP server, for the tests: `xmpp_human.py` (slixmpp, in `PythonPeers`),
/// signed in as `jid`, in `rooms` as `nick`, running a plan of steps (`XMPPHuman.Step`) and
/// recording what it received as JSON lines, which the test reads while it runs (`records`) and
/// once it is done (`finish`).
public final class XMPPHuman: Sendable {
    public enum Step: Sendable {
        case say(String, to: String)
        /// In `room`, `times` times with one id when `id` is given (a stanza the server
        /// delivered again).
        case sayInRoom(String, room: String, id: String? = nil, times: Int = 1)
        /// Until `nick` is in `room`.
        case waitJoin(String, room: String, timeout: Double = 60)
        /// Until `count` messages from `sender` (a room nick, or a bare JID) were received in all.
        case waitFrom(String, count: Int, timeout: Double = 60)
        /// Until a message from `sender` contains `text`.
        case waitText(String, from: String, timeout: Double = 90)
        case sleep(Double)
        case mark(String)
        /// Until the test makes the file (`signal`).
        case waitSignal(String, timeout: Double = 120)

        var json: [String: Any] {
            switch self {
            case .say(let text, let to): ["say": to, "text": text]
            case .sayInRoom(let text, let room, let id, let times):
                ["say_room": room, "text": text, "times": times].merging(id.map { ["id": $0] } ?? [:]) { first, _ in first }
            case .waitJoin(let nick, let room, let timeout): ["wait_join": nick, "room": room, "timeout": timeout]
            case .waitFrom(let sender, let count, let timeout): ["wait_from": sender, "count": count, "timeout": timeout]
            case .waitText(let text, let sender, let timeout): ["wait_text": sender, "contains": text, "timeout": timeout]
            case .sleep(let seconds): ["sleep": seconds]
            case .mark(let name): ["mark": name]
            case .waitSignal(let name, let timeout): ["wait_file": name, "timeout": timeout]
            }
        }
    }

    /// One thing the person saw.
    public struct Record: Sendable, Hashable {
        public var event: String
        /// A room's occupant who joined or left (`joined`, `left`).
        public var nick: String?
        /// A mark's name.
        public var name: String?
        public var type: String?
        public var from: String?
        public var sender: String?
        public var text: String?
        public var id: String?
        /// The message this one corrects (XEP-0308).
        public var replace: String?
        /// The message this one answers (XEP-0461), and whose.
        public var replyTo: String?
        public var replyFor: String?
        public var raw: String?
        public var reason: String?
        /// When the person received it (seconds since 1970).
        public var time: Double
    }

    let process: SpawnedProcess
    let output: String
    let folder: String

    public init(
        on server: ProsodyTestServer, user: String, password: String, nick: String? = nil, rooms: [String] = [], corrections: Bool = true,
        plan: [Step], limit: Duration = .seconds(180)
    ) async throws {
        let python = try await PythonPeers.python()
        guard let script = Bundle.module.url(forResource: "xmpp_human", withExtension: "py", subdirectory: "Resources/xmpp") else {
            throw ChildProcessError(step: "xmpp_human.py", reason: "not among the test resources", output: "")
        }
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("rhea-xmpp-human-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        output = folder + "/records.jsonl"
        let planData = try JSONSerialization.data(withJSONObject: plan.map(\.json))
        var command = [
            python, script.path, "--port", "\(server.port)", "--ca", server.caFile, "--jid", "\(user)@\(server.domain)", "--password", password,
            "--nick", nick ?? user, "--rooms", rooms.joined(separator: ","), "--plan", String(decoding: planData, as: UTF8.self), "--limit",
            "\(limit.components.seconds)",
        ]
        if corrections { command.append("--corrections") }
        process = try SpawnedProcess(command, in: folder, environment: ProcessInfo.processInfo.environment, output: output, errors: folder + "/errors.log")
    }

    /// Lets a `waitSignal(name)` step go on.
    public func signal(_ name: String) throws {
        try Data().write(to: URL(fileURLWithPath: folder + "/" + name))
    }

    public var records: [Record] {
        guard let text = try? String(contentsOfFile: output, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return Record(
                event: object["event"] as? String ?? "", nick: object["nick"] as? String, name: object["name"] as? String, type: object["type"] as? String,
                from: object["from"] as? String,
                sender: object["sender"] as? String, text: object["text"] as? String, id: object["id"] as? String, replace: object["replace"] as? String,
                replyTo: object["reply_to"] as? String, replyFor: object["reply_for"] as? String, raw: object["raw"] as? String,
                reason: object["reason"] as? String, time: object["t"] as? Double ?? 0)
        }
    }

    /// Messages from `sender` (a room nick or a bare JID), in order.
    public func messages(from sender: String) -> [Record] {
        records.filter { $0.event == "message" && $0.sender == sender }
    }

    /// What a client that reads corrections shows: each message as its last correction says,
    /// in the order the originals came.
    public static func shown(_ messages: [Record]) -> [String] { chains(messages).map { $0.last?.text ?? "" } }

    /// Each message with its corrections after it, in the order the originals came. A message
    /// sent again with an id already seen (a placeholder resent after a crash) is a message of
    /// its own, as a client that does not merge by id shows it — the stricter reading — and a
    /// correction applies to the latest message of its id.
    public static func chains(_ messages: [Record]) -> [[Record]] {
        var chains: [[Record]] = []
        for message in messages {
            if let original = message.replace, let index = chains.lastIndex(where: { $0.first?.id == original }) {
                chains[index].append(message)
            } else {
                chains.append([message])
            }
        }
        return chains
    }

    /// Waits until the plan is done (or failed), then returns everything it saw; a step that
    /// timed out throws with the records.
    public func finish(within limit: Duration = .seconds(240)) async throws -> [Record] {
        _ = await process.exited(within: limit)
        let seen = records
        let failure = seen.first { $0.event == "error" }
        if failure != nil || !seen.contains(where: { $0.event == "done" }) {
            let errors = (try? String(contentsOfFile: folder + "/errors.log", encoding: .utf8)) ?? ""
            throw ChildProcessError(
                step: "xmpp_human.py", reason: failure?.reason ?? "it ended without finishing its plan",
                output: seen.map { "\($0.event) \($0.sender ?? "") \($0.text ?? "") \($0.reason ?? "")" }.joined(separator: "\n") + "\n"
                    + String(errors.suffix(4_000)))
        }
        return seen
    }

    deinit {
        process.terminate()
        try? FileManager.default.removeItem(atPath: folder)
    }
}
