public import RelayCore
import Synchronization

public import struct Foundation.Date

/// Spaces the sends of one conversation (Slack allows about one message per second per
/// channel) and holds a conversation back after the platform said 429.
///
/// Thread-safe; the map is pruned of past instants so it does not grow with every channel seen.
/// Time comes from the caller (the worker's clock), so tests decide it.
final class ConversationPacer: Sendable {
    private let next = Mutex<[String: Date]>([:])

    /// Takes the conversation's next send slot; returns how long to wait before using it.
    func reserve(_ conversation: String, interval: Duration, now: Date) -> Duration {
        next.withLock { slots in
            if slots.count > 4096 { slots = slots.filter { $0.value > now } }
            let start = max(now, slots[conversation] ?? now)
            slots[conversation] = start + max(.zero, interval)
            return start.duration(since: now)
        }
    }

    /// Nothing goes to this conversation for `duration` (a `Retry-After`).
    func hold(_ conversation: String, for duration: Duration, now: Date) {
        let until = now + max(.zero, duration)
        next.withLock { slots in
            slots[conversation] = max(slots[conversation] ?? until, until)
        }
    }
}
