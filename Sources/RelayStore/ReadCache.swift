import RelayCore
import Synchronization

/// The reads every command makes — a team's custom commands, a user's and a channel's settings —
/// kept in memory, so a command costs no round trip through the writer for them.
///
/// Coherent because this process is the file's only writer and every write of these goes
/// through the store, which updates or drops the cached value after its commit. Bounded: past
/// `capacity` entries of a kind, that kind is cleared and refilled on demand.
final class ReadCache: Sendable {
    static let capacity = 10_000

    private struct State {
        var customs: [String: [CustomCommand]] = [:]
        var settings: [SettingsKey: Settings] = [:]
    }

    private let state = Mutex(State())

    func customCommands(team: String) -> [CustomCommand]? {
        state.withLock { $0.customs[team] }
    }

    func setCustomCommands(_ commands: [CustomCommand], team: String) {
        state.withLock { state in
            if state.customs.count >= Self.capacity { state.customs.removeAll() }
            state.customs[team] = commands
        }
    }

    /// After a team's commands changed: read again next time.
    func dropCustomCommands(team: String) {
        _ = state.withLock { $0.customs.removeValue(forKey: team) }
    }

    func settings(_ key: SettingsKey) -> Settings? {
        state.withLock { $0.settings[key] }
    }

    func setSettings(_ settings: Settings, for key: SettingsKey) {
        state.withLock { state in
            if state.settings.count >= Self.capacity { state.settings.removeAll() }
            state.settings[key] = settings
        }
    }

    func dropSettings(_ key: SettingsKey) {
        _ = state.withLock { $0.settings.removeValue(forKey: key) }
    }

    func clear() {
        state.withLock { $0 = State() }
    }
}
