public import RelayCore

public import struct Foundation.Date

/// One reply waiting to be delivered, or one run parked at shutdown to be run again at start.
///
/// Written to the store before anything is sent and marked sent after, so a restart resends
/// whatever was not confirmed (DESIGN §6). The relay never looks inside `address`: each adapter
/// writes its own (and seals anything secret in it, such as a Slack `response_url`, before it
/// reaches the store).
public struct OutboxEntry: Sendable, Hashable, Codable {
    public enum Content: Sendable, Hashable, Codable {
        /// A reply to post (or, with `replaces`, to put in place of an earlier message).
        case reply(Reply)
        /// Progress of a running chain, shown by editing one message; superseded by the next.
        case progress(RunProgress)
        /// A run that was still going at shutdown; the next start runs it again and replies.
        case parkedRun(Event)
    }

    public enum State: String, Sendable, Hashable, Codable {
        /// Waiting (or leased by a worker) to be delivered.
        case pending
        /// Delivered: the platform confirmed it.
        case sent
        /// Given up after the retry bound, or refused for good by the platform; logged and counted.
        case failed
    }

    /// Unique; also the idempotency key where the platform has one.
    public var id: String
    /// The adapter that delivers it (`slack`, `terminal`…).
    public var platform: String
    /// The rate-limit and ordering key: entries of one conversation go out one at a time, in order.
    public var conversation: String
    /// Where to deliver, in the adapter's own encoding (opaque to the relay and the store).
    public var address: String
    public var content: Content
    /// The id of an earlier entry whose posted message this one edits (progress, then the result).
    public var replaces: String?
    public var state: State
    /// Failed delivery attempts at the current part (reset when a part is accepted).
    public var attempts: Int
    /// Parts of a reply the platform has accepted, in order. A reply rendered as several
    /// messages is delivered one part per attempt; a retry resumes at part `partsDelivered`,
    /// so an accepted part is never sent again.
    public var partsDelivered: Int
    /// Not before this instant (backoff, `Retry-After`).
    public var nextAttemptAt: Date
    public var createdAt: Date
    /// The platform's id of the delivered message (Slack `ts`), for later edits; for a reply in
    /// parts, the first part's.
    public var platformRef: String?
    /// Why the last attempt failed; never holds a secret.
    public var lastError: String?

    public init(
        id: String, platform: String, conversation: String, address: String, content: Content,
        replaces: String? = nil, state: State = .pending, attempts: Int = 0, partsDelivered: Int = 0, nextAttemptAt: Date,
        createdAt: Date, platformRef: String? = nil, lastError: String? = nil
    ) {
        self.id = id
        self.platform = platform
        self.conversation = conversation
        self.address = address
        self.content = content
        self.replaces = replaces
        self.state = state
        self.attempts = attempts
        self.partsDelivered = max(0, partsDelivered)
        self.nextAttemptAt = nextAttemptAt
        self.createdAt = createdAt
        self.platformRef = platformRef
        self.lastError = lastError
    }
}
