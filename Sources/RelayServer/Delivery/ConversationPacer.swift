import Synchronization

/// Spaces the sends of one conversation (Slack allows about one message per second per
/// channel) and holds a conversation back after the platform said 429.
///
/// Thread-safe; the map is pruned of past instants so it does not grow with every channel seen.
final class ConversationPacer: Sendable {
    private let next = Mutex<[String: ContinuousClock.Instant]>([:])

    /// Takes the conversation's next send slot; returns how long to wait before using it.
    func reserve(_ conversation: String, interval: Double, now: ContinuousClock.Instant = .now) -> Duration {
        next.withLock { slots in
            if slots.count > 4096 { slots = slots.filter { $0.value > now } }
            let start = max(now, slots[conversation] ?? now)
            slots[conversation] = start.advanced(by: .seconds(max(0, interval)))
            return now.duration(to: start)
        }
    }

    /// Nothing goes to this conversation for `seconds` (a `Retry-After`).
    func hold(_ conversation: String, seconds: Double, now: ContinuousClock.Instant = .now) {
        let until = now.advanced(by: .seconds(max(0, seconds)))
        next.withLock { slots in
            slots[conversation] = max(slots[conversation] ?? until, until)
        }
    }
}
