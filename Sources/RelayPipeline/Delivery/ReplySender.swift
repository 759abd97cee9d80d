import RelayCore

/// What became of one delivery attempt.
public enum DeliveryOutcome: Sendable, Hashable {
    /// The platform accepted it; `platformRef` identifies the posted message (Slack `ts`) if any.
    case sent(platformRef: String?)
    /// One part of a reply in several parts was accepted and more remain: the outbox records
    /// it and the entry is due again (paced like any send) for its next part. `platformRef` is
    /// the part's message id, kept when it is the first part's.
    case partDelivered(platformRef: String?)
    /// Rate limited: try again no sooner than `retryAfter` from now (HTTP 429 `Retry-After`, a
    /// JSON `retry_after`…). The whole conversation waits, not just this entry.
    case rateLimited(retryAfter: Duration, reason: String)
    /// Failed in a way that may pass (5xx, timeout, connection refused): retry with backoff.
    case retryable(reason: String)
    /// Refused for good (`channel_not_found`, an expired `response_url`): do not retry.
    case rejected(reason: String)
}

extension DeliveryOutcome {
    /// A failure that may pass: rate limited, or retryable.
    var isPassing: Bool {
        switch self {
        case .rateLimited, .retryable: true
        case .sent, .partDelivered, .rejected: false
        }
    }
}

/// The outbox worker's view of a platform's outbound side: delivers one outbox entry.
/// `Deliverer` is the one in Sources, over a platform's `DeliveryPlatform` primitives.
///
/// `earlier` is the entry named by `entry.replaces`, when there is one, so the message it posted
/// (its `platformRef`) can be edited instead of a new one posted.
///
/// A reply that the platform needs as several messages is sent one part per `deliver` call,
/// starting at `entry.partsDelivered`: the sender answers `.partDelivered` until the last part,
/// then `.sent`. A failure then holds back only the part that failed; a retry never repeats an
/// accepted one, and the outbox paces the parts like any other sends to the conversation.
public protocol ReplySender: DeliveryLimits {
    func deliver(_ entry: OutboxEntry, earlier: OutboxEntry?) async -> DeliveryOutcome
    /// A run whose replies go to `address` has started: the platform may show that the bot is
    /// at work ("typing…"). Best effort, never waited for by the run.
    func runStarted(at address: String) async
}

extension ReplySender {
    public func runStarted(at address: String) async {}
}

/// Whether the delivery under way may still send: false once this replica stopped delivering
/// its platform (it lost the platform's delivery lease to another replica).
///
/// A sender that waits for its turn inside `deliver` (a platform client pacing a bot's
/// requests) asks before each turn it would take, and gives the turn up when the permit is gone:
/// it hands the message back as rate limited, and the outbox leaves the entry to the new holder
/// without counting an attempt. Sent anyway, it would leave beside the new holder's sends, each
/// replica pacing on its own, and break the limits the platform counts per bot. A request
/// already on its way is not called back. Outside a delivery it is always held.
public enum DeliveryPermit {
    /// The question, in a class: a task-local whose value is a closure crashed every delivery
    /// of a release build (Swift 6.3: `swift_task_localValuePush` met no type metadata for the
    /// function type), while debug builds ran; a class reference is plain.
    final class Check: Sendable {
        let holds: @Sendable () -> Bool
        init(_ holds: @escaping @Sendable () -> Bool) { self.holds = holds }
    }

    @TaskLocal static var check: Check?

    /// Whether this replica still delivers the platform of the delivery under way.
    public static var isHeld: Bool { check?.holds() ?? true }
}
