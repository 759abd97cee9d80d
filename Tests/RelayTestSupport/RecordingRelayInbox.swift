public import RelayCore
public import RelayPipeline
import Synchronization

/// The relay's inbox as an adapter's routes see it, in an adapter's own tests: records what is
/// submitted and posted (each `onceAs` key taken once, as the store takes it), and answers
/// `outboxEntry` from what a test keeps in it.
public final class RecordingRelayInbox: RelayInbox {
    private struct State {
        var submissions: [(Event, ReplyRoute)] = []
        var posts: [(Reply, ReplyRoute, String?, String?)] = []
        var entries: [String: OutboxEntry] = [:]
        var onceKeys: Set<String> = []
    }

    private let state = Mutex(State())

    public init() {}

    public var submissions: [(Event, ReplyRoute)] { state.withLock { $0.submissions } }
    public var posts: [(reply: Reply, route: ReplyRoute, onceAs: String?, replacing: String?)] {
        state.withLock { $0.posts.map { ($0.0, $0.1, $0.2, $0.3) } }
    }

    /// Keeps `entry`, for `outboxEntry(id:)`.
    public func keep(_ entry: OutboxEntry) { state.withLock { $0.entries[entry.id] = entry } }

    public func submit(_ event: Event, route: ReplyRoute) async -> Submission {
        state.withLock { $0.submissions.append((event, route)) }
        return .accepted(ahead: 0)
    }

    public func post(_ reply: Reply, route: ReplyRoute, onceAs key: String?, replacing: String?) async throws -> Bool {
        state.withLock { state in
            if let key {
                guard state.onceKeys.insert(key).inserted else { return false }
            }
            state.posts.append((reply, route, key, replacing))
            return true
        }
    }

    public func outboxEntry(id: String) async throws -> OutboxEntry? { state.withLock { $0.entries[id] } }
}
