import Foundation
import RelayCore
import RelayStore
import RelayTestSupport

/// A relay over a scripted backend and a real SQLite store in a temporary file.
struct RelayHarness {
    let relay: Relay
    let store: any Store
    let tribunal: ScriptedTribunal

    static func with<T>(
        tribunal: ScriptedTribunal = ScriptedTribunal(), configuration: RelayConfiguration = RelayConfiguration(),
        _ body: (RelayHarness) async throws -> T
    ) async throws -> T {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("relay-\(UUID().uuidString).sqlite").path
        let store = try await SQLiteStore.open(path: path)
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let harness = RelayHarness(relay: Relay(tribunal: tribunal, store: store, configuration: configuration), store: store, tribunal: tribunal)
        do {
            let result = try await body(harness)
            try await store.close()
            return result
        } catch {
            try await store.close()
            throw error
        }
    }

    /// Sends one command line as `user` in team `t`, channel `c`.
    @discardableResult
    func send(
        _ text: String, user: String = "ada", admin: Bool = false, repliedTo: String? = nil, thread: [String] = [],
        eventKey: String? = nil, progress: @escaping @Sendable (RunProgress) async -> Void = { _ in }
    ) async -> Reply {
        let event = Event(platform: "test", team: "t", channel: "c", user: user, text: text, repliedTo: repliedTo, threadMessages: thread, eventKey: eventKey, isAdmin: admin)
        return await relay.handle(event, progress: progress) ?? Reply.info("<duplicate>")
    }
}
