import RelayCore

/// Remembers the envelopes (and Events API events) recently handed on, so one delivered twice
/// is acknowledged again but not handed on again.
///
/// Slack sends an envelope again when its acknowledgement came late or was lost, for example
/// on a connection that was closing: with the same `envelope_id`, or as a retry
/// (`retry_attempt` > 0) under a new one that carries the same `event_id`. Memory is bounded:
/// the oldest keys are forgotten first.
public struct SocketModeDeduplicator: Sendable, Hashable {
    /// How many keys are remembered.
    public let capacity: Int
    private var keys: Set<String> = []
    private var order: [String] = []
    /// Where the next key goes in `order` once it is full (a ring).
    private var oldest = 0

    /// Remembers up to `capacity` keys (at least 1).
    public init(capacity: Int = 4096) {
        self.capacity = max(1, capacity)
    }

    /// Records `envelope` and returns whether it is new, i.e. should be handed on.
    public mutating func isFirstDelivery(of envelope: SocketModeEnvelope) -> Bool {
        let envelopeKey = "envelope:\(envelope.envelopeID)"
        let eventKey = envelope.eventID.map { "event:\($0)" }
        let seen = keys.contains(envelopeKey) || eventKey.map(keys.contains) == true
        remember(envelopeKey)
        if let eventKey { remember(eventKey) }
        return !seen
    }

    private mutating func remember(_ key: String) {
        guard keys.insert(key).inserted else { return }
        if order.count < capacity {
            order.append(key)
        } else {
            keys.remove(order[oldest])
            order[oldest] = key
            oldest = (oldest + 1) % capacity
        }
    }
}
