import RelayCore
import Synchronization

/// A settings scope as its primary-key columns.
struct SettingsKey: Hashable, Sendable, CustomStringConvertible {
    let kind: String
    let team: String
    let subject: String

    init(_ scope: SettingsScope) {
        switch scope {
        case .user(let team, let user): (kind, self.team, subject) = ("user", team, user)
        case .channel(let team, let channel): (kind, self.team, subject) = ("channel", team, channel)
        // A team's own settings: the platform in the subject, as a team id means something only there.
        case .team(let platform, let team): (kind, self.team, subject) = ("team", team, platform)
        }
    }

    var description: String { "\(kind) \(subject) in team \(team)" }
}

/// The reads every command makes — a team's custom commands, a user's and a channel's settings —
/// kept in memory, so a command costs no round trip through the writer for them.
///
/// SQLiteStore's is coherent because its process is the file's only writer and every write of
/// these goes through the store, which drops the cached value. PostgresStore's is coherent while
/// it hears the other replicas' writes (``PostgresListener``) and unused meanwhile. Bounded: past
/// `capacity` entries of a kind, that kind is cleared and refilled on demand.
final class ReadCache: Sendable {
    static let capacity = 10_000

    private struct State {
        var customs: [String: [CustomCommand]] = [:]
        var settings: [SettingsKey: Settings] = [:]
        /// Counts drops: a value read before a drop may be older than the write that caused it,
        /// so it is not cached (`readAt`).
        var generation = 0
    }

    private let state = Mutex(State())

    func customCommands(team: String) -> [CustomCommand]? {
        state.withLock { $0.customs[team] }
    }

    /// The generation to pass to a `set` for what is read from now on.
    var generation: Int { state.withLock { $0.generation } }

    func setCustomCommands(_ commands: [CustomCommand], team: String, readAt generation: Int? = nil) {
        state.withLock { state in
            if let generation, generation != state.generation { return }
            if state.customs.count >= Self.capacity { state.customs.removeAll() }
            state.customs[team] = commands
        }
    }

    /// After a team's commands changed: read again next time.
    func dropCustomCommands(team: String) {
        state.withLock { state in
            state.customs.removeValue(forKey: team)
            state.generation += 1
        }
    }

    func settings(_ key: SettingsKey) -> Settings? {
        state.withLock { $0.settings[key] }
    }

    func setSettings(_ settings: Settings, for key: SettingsKey, readAt generation: Int? = nil) {
        state.withLock { state in
            if let generation, generation != state.generation { return }
            if state.settings.count >= Self.capacity { state.settings.removeAll() }
            state.settings[key] = settings
        }
    }

    func dropSettings(_ key: SettingsKey) {
        state.withLock { state in
            state.settings.removeValue(forKey: key)
            state.generation += 1
        }
    }

    /// Another replica changed a team's settings or commands: all of that team is read again.
    func dropTeam(_ team: String) {
        state.withLock { state in
            state.customs.removeValue(forKey: team)
            state.settings = state.settings.filter { $0.key.team != team }
            state.generation += 1
        }
    }

    func clear() {
        state.withLock { state in state = State(generation: state.generation + 1) }
    }
}
