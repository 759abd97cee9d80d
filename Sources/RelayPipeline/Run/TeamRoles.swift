public import RelayCore
import Synchronization

import struct Foundation.Date

/// Who administers a team (docs/admin.md), asked only for a command that needs it: the
/// platform's own admins, the operator's list (`ADMIN_USERS`) and whoever an admin granted the
/// role here (`/admin grant`, in the store).
///
/// The platform is asked last, through its `ConversationReader`. A yes is kept for `ttl`: an
/// admin's commands cost one `users.info` or `getChatMember` a minute at most, and one whose
/// role is taken away there loses it here within that time. A no is not kept, so someone made an
/// admin on the platform is one at once (a no costs a call each time, for a command that is
/// refused anyway). Grants are read from the store each time (one indexed read): a revoke holds
/// at once, on every replica.
public final class TeamRoles: Sendable {
    /// Why someone is an admin.
    public enum Source: Sendable, Hashable {
        /// The platform says so (or the adapter knew already: `Event.isAdmin`).
        case platform
        /// `ADMIN_USERS` names them.
        case operatorList
        /// An admin granted the role here.
        case granted(AdminGrant)
    }

    /// How long a platform's yes is kept.
    public static let ttl: Duration = .seconds(60)
    /// The most answers kept; past it, expired ones go first, then the oldest.
    static let capacity = 10_000

    let readers: [String: any ConversationReader]
    let store: any Store
    let operators: OperatorAdmins
    let clock: any RelayClock
    /// Until when each yes is kept.
    private let answers = Mutex<[String: Date]>([:])

    init(readers: [String: any ConversationReader], store: any Store, operators: OperatorAdmins, clock: any RelayClock) {
        self.readers = readers
        self.store = store
        self.operators = operators
        self.clock = clock
    }

    /// Why the event's user administers its team, or nil when they do not.
    func source(for event: Event) async throws -> Source? {
        if event.isAdmin { return .platform }
        if operators.contains(platform: event.platform, team: event.team, user: event.user) { return .operatorList }
        if let grant = try await store.adminGrant(platform: event.platform, team: event.team, user: event.user) { return .granted(grant) }
        return await platformSays(event) ? .platform : nil
    }

    /// The platform's own answer, a yes kept for `ttl`; false where the platform has no reader
    /// or could not be asked.
    private func platformSays(_ event: Event) async -> Bool {
        guard let reader = readers[event.platform] else { return false }
        // NUL occurs in no platform's ids: the parts cannot run into each other.
        let key = [event.platform, event.team, event.user].joined(separator: "\u{0}")
        let now = clock.now
        if let expires = answers.withLock({ $0[key] }), expires > now { return true }
        guard await reader.isAdmin(event) == true else {
            answers.withLock { _ = $0.removeValue(forKey: key) }
            return false
        }
        let expires = clock.now + Self.ttl
        answers.withLock { answers in
            answers[key] = expires
            guard answers.count > Self.capacity else { return }
            answers = answers.filter { $0.value > now }
            while answers.count > Self.capacity, let oldest = answers.min(by: { $0.value < $1.value })?.key {
                answers.removeValue(forKey: oldest)
            }
        }
        return true
    }

    /// Who the platform's own admins are, for a refusal or `/admin`.
    func platformAdmins(_ platform: String) -> String {
        readers[platform]?.platformAdmins ?? "none the platform names (the relay cannot ask this one)"
    }
}
