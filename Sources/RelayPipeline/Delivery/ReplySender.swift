import RelayCore

public import struct Foundation.Date

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

/// An adapter's outbound side: delivers one outbox entry to its platform.
///
/// `earlier` is the entry named by `entry.replaces`, when there is one, so an adapter can edit
/// the message it posted (its `platformRef`) instead of posting a new one.
///
/// A reply that the platform needs as several messages is sent one part per `deliver` call,
/// starting at `entry.partsDelivered`: the sender answers `.partDelivered` until the last part,
/// then `.sent`. A failure then holds back only the part that failed; a retry never repeats an
/// accepted one, and the outbox paces the parts like any other sends to the conversation.
public protocol ReplySender: Sendable {
    /// The `platform` this sender delivers for (matches `OutboxEntry.platform`).
    var platform: String { get }
    /// Time to keep between this send and the previous one to the same conversation (Slack:
    /// about one `chat.postMessage` a second per channel; a `response_url` has no such limit).
    func minimumInterval(for entry: OutboxEntry) -> Duration
    /// Whether the platform counts its limits per bot (messages a second, per chat, route
    /// buckets), so that replicas sharing a store send its replies from one of them, the holder
    /// of its delivery lease (docs/replicas.md). True unless a sender says otherwise.
    var limitsCountPerBot: Bool { get }
    /// Asked right before the worker would start `entry`: zero when the platform's own limits
    /// (per chat, per bot) let it go now — the sender then takes that turn, so `deliver` sends
    /// without waiting — else how long until it could, with nothing taken. The worker leaves an
    /// entry that must wait in its queue, holding no delivery slot, and starts others meanwhile;
    /// a sender that paced inside `deliver` would hold a slot for the whole wait.
    func takeTurn(for entry: OutboxEntry, now: Date) -> Duration
    /// How long until any entry of this platform can be sent (a limit across the whole bot),
    /// zero when that depends on the entry. Asked once per look at the queue, so a long queue of
    /// one platform that must wait costs no look at each entry.
    func platformWait(now: Date) -> Duration
    /// Whether the answer to a run whose replies go to `address` (the route's, in this
    /// platform's encoding) would reach the platform as a new message that it cannot make
    /// idempotent — Telegram's `sendMessage`, Slack's `chat.postMessage` — so that a resend
    /// after a crash (the platform took it, the process died before the outbox marked it sent)
    /// would show it twice. The run then posts a placeholder as it starts ("⏳ Working on
    /// /translate…", an outbox entry that is the run's progress message) and its answer is an
    /// edit of that message: an edit sent twice still shows one message (docs/serving.md). False
    /// unless a sender says otherwise: where the answer is an edit already (Discord's
    /// `@original`) or the platform deduplicates creates (Discord's `nonce`, Matrix's
    /// transaction ids, Mattermost's `pending_post_id`).
    func answersByEditingPlaceholder(at address: String) -> Bool
    func deliver(_ entry: OutboxEntry, earlier: OutboxEntry?) async -> DeliveryOutcome
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
    @TaskLocal static var check: @Sendable () -> Bool = { true }

    /// Whether this replica still delivers the platform of the delivery under way.
    public static var isHeld: Bool { check() }
}

extension ReplySender {
    public var limitsCountPerBot: Bool { true }
    public func takeTurn(for entry: OutboxEntry, now: Date) -> Duration { .zero }
    public func platformWait(now: Date) -> Duration { .zero }
    public func answersByEditingPlaceholder(at address: String) -> Bool { false }
}
