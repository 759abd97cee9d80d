import Foundation

/// `hostile_server.py`: an XMPP server on loopback that signs the relay in and then sends what
/// XMPP does not allow (`mode`: oversized, malformed, entity, dtd, garbage), recording each
/// connection and what the relay sent before it closed.
public final class XMPPHostileServer: Sendable {
    let process: SpawnedProcess
    let folder: String
    public let port: Int

    public init(mode: String) async throws {
        guard let script = Bundle.module.url(forResource: "hostile_server", withExtension: "py", subdirectory: "Resources/xmpp") else {
            throw ChildProcessError(step: "hostile_server.py", reason: "not among the test resources", output: "")
        }
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("rhea-xmpp-hostile-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        process = try SpawnedProcess(
            ["/usr/bin/python3", script.path, mode], in: folder, environment: [:], output: folder + "/out.jsonl", errors: folder + "/err.log")
        let deadline = ContinuousClock.now + .seconds(20)
        var found: Int?
        while found == nil, ContinuousClock.now < deadline {
            found = Self.read(folder + "/out.jsonl").first { $0["port"] != nil }?["port"] as? Int
            if found == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        guard let found else { throw ChildProcessError(step: "hostile_server.py", reason: "it did not listen within 20 s", output: "") }
        port = found
    }

    /// Connections the relay made so far.
    public var connections: Int { records.filter { $0["event"] as? String == "connection" }.count }

    /// The last bytes the relay sent on each connection it closed, in order.
    public var closedTails: [String] { records.filter { $0["event"] as? String == "closed" }.compactMap { $0["tail"] as? String } }

    var records: [[String: Any]] { Self.read(folder + "/out.jsonl") }

    static func read(_ path: String) -> [[String: Any]] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    deinit {
        process.terminate()
        try? FileManager.default.removeItem(atPath: folder)
    }
}
