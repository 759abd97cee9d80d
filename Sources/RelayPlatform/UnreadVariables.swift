import Synchronization

/// The environment variables configuration read, so that one set with the relay's prefixes and
/// read by nothing — a misspelling (`COUNCIL_MODLES`), a name that is close but not it
/// (`COUNCIL_A_API_KEY` for `COUNCIL_A_API_KEY_ENV`) — is named in a warning at start instead of
/// being silently ignored.
public final class ConfigReadLog: Sendable {
    private let names = Mutex((variables: Set<String>(), keys: Set<String>()))

    public init() {}

    func record(_ key: String) {
        let name = ConfigValues.envName(key)
        names.withLock {
            _ = $0.variables.insert(name)
            _ = $0.keys.insert(key)
        }
    }

    /// Every variable name read so far.
    public var read: Set<String> { names.withLock { $0.variables } }
    /// The same keys as the YAML file spells them (`telegram.botToken`).
    public var keys: Set<String> { names.withLock { $0.keys } }
}

/// Warnings for variables that look like the relay's and that nothing read.
public enum UnreadVariables {
    /// The prefixes of the relay's own variables.
    public static let prefixes = [
        "TRIBUNAL_", "COUNCIL_", "STORE_", "HTTP_", "RHEA_API_", "RUNS_", "LOG_", "SHUTDOWN_", "OUTBOX_", "SLACK_", "DISCORD_", "TELEGRAM_",
        "MATRIX_", "MATTERMOST_", "LOCAL_MODEL_", "RELAY_", "CHAINS_", "COMMANDS_", "DELIVERY_",
        "TRANSCRIPTION_", "BUDGET_", "CONSOLE_",
        // Itself, not `ADMIN_`: that prefix is too common (a homeserver's `ADMIN_TOKEN` in the
        // same environment) for `serve` to stop on every variable that has it.
        "ADMIN_USERS",
        // The console's public address (a name other software uses too; the relay reads it).
        "PUBLIC_URL",
    ]

    /// Variables with one of the prefixes that other software reads, set in many environments
    /// (`serve` stops on a variable nothing reads, so these must not count).
    public static let readByOthers: Set<String> = ["HTTP_PROXY"]

    /// One line per variable in `environment` with a known prefix that is not in `read` (nor in
    /// `alsoKnown`: names read another way), with the nearest name that is read.
    public static func unread(environment: [String: String], read: Set<String>, alsoKnown: Set<String> = []) -> [String] {
        let known = read.union(alsoKnown).union(readByOthers)
        return environment.keys.sorted().compactMap { name -> String? in
            guard prefixes.contains(where: name.hasPrefix), !known.contains(name) else { return nil }
            let hint = nearest(to: name, in: known).map { " Did you mean \($0)?" } ?? ""
            return "\(name) is set, but rhea-relay reads no such variable; it is ignored.\(hint)"
        }
    }

    /// Of `candidates` starting with the same character, the one nearest `name`, when it is near
    /// enough to be what was meant (a few edits, a third of the name at most).
    public static func nearest(to name: String, in candidates: Set<String>) -> String? {
        let nearest = candidates.filter { $0.first == name.first }.min { distance(name, $0) < distance(name, $1) }
        return nearest.flatMap { distance(name, $0) <= max(3, name.count / 3) ? $0 : nil }
    }

    /// Edit distance (insertions, deletions, substitutions) between two names.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8)
        let b = Array(b.utf8)
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
