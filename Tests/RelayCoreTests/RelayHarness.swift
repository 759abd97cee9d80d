import RelayCore
import RelayPipeline
import RelayStore
import RelayTestSupport

/// A relay over a scripted backend and an in-memory store (it behaves as the SQLite one does, and
/// the store's own tests hold it to that; here it saves opening a file per test). `ada`
/// administers team `t` (the operator's list names her); `bob` and the others do not.
struct RelayHarness {
    /// The operator's list of these tests: `ada` of team `t`.
    static let admins = try! OperatorAdmins(parsing: "test:t:ada", platforms: ["test"])

    let relay: Relay
    let store: any Store
    let tribunal: ScriptedTribunal

    static func with<T>(
        tribunal: ScriptedTribunal = ScriptedTribunal(), configuration: RelayConfiguration = RelayConfiguration(),
        _ body: (RelayHarness) async throws -> T
    ) async throws -> T {
        let store = MemoryStore()
        var configuration = configuration
        configuration.operatorAdmins = admins
        let harness = RelayHarness(
            relay: Relay(tribunal: tribunal, store: store, configuration: configuration), store: store,
            tribunal: tribunal)
        return try await body(harness)
    }

    /// Sends one command line as `user` in team `t`, channel `c`.
    @discardableResult
    func send(
        _ text: String, user: String = "ada", admin: Bool = false, repliedTo: String? = nil, thread: [String] = [],
        eventKey: String? = nil, mentions: [MentionedUser] = [], progress: @escaping @Sendable (RunProgress) async -> Void = { _ in }
    ) async -> Reply {
        let event = Event(
            platform: "test", team: "t", channel: "c", user: user, text: text, repliedTo: repliedTo, threadMessages: thread, eventKey: eventKey, isAdmin: admin,
            mentions: mentions)
        return await relay.handle(event, progress: progress) ?? Reply.info("<duplicate>")
    }
}
