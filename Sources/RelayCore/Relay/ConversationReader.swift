/// What the relay may ask a platform about an event's surroundings, and only when the command
/// needs it: who may change team-wide things, and what a thread says.
///
/// Asked lazily, from the run (never on an adapter's acknowledgement path), so a platform's
/// slow API never delays the acknowledgement and a command that needs neither pays nothing.
/// Implementations cache what they can and bound what they read.
public protocol ConversationReader: Sendable {
    /// Whether the event's user administers the team (Slack: a workspace admin or owner).
    /// False when the platform cannot tell.
    func isAdmin(_ event: Event) async -> Bool
    /// The texts of the thread `event.thread`, oldest first, at most `limit` messages; empty when
    /// there is no thread or it cannot be read.
    func threadMessages(_ event: Event, limit: Int) async -> [String]
}
