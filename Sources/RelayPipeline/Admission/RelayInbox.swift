public import RelayCore

public import struct Foundation.Date

/// Where a run's replies go, as the adapter that received the event describes it.
public struct ReplyRoute: Sendable, Hashable, Codable {
    /// The adapter (`slack`…) whose `ReplySender` delivers.
    public var platform: String
    /// Pacing and ordering key: replies to one conversation go one at a time, in order.
    public var conversation: String
    /// The adapter's own encoding of where to post (secrets sealed).
    public var address: String

    public init(platform: String, conversation: String, address: String) {
        self.platform = platform
        self.conversation = conversation
        self.address = address
    }
}

/// Where an adapter hands what arrives: runs go to the background and their replies through the
/// outbox, so the adapter can acknowledge its platform at once.
public protocol RelayInbox: Sendable {
    /// Accepts `event` to run in the background — committed to the store before this returns,
    /// so the adapter acknowledges its platform only after — or refuses it as a retry already
    /// accepted, or as one too many while the relay is busy. Its progress and reply go to `route`.
    /// Throws when the event could not be stored: the adapter then answers with an error, so the
    /// platform or the person tries again.
    @discardableResult
    func submit(_ event: Event, route: ReplyRoute) async throws -> Submission
    /// Queues a ready reply for `route` (e.g. "Post to channel" on an earlier private result).
    ///
    /// - Parameters:
    ///   - onceAs: an idempotency key: the reply is queued at most once under it, however
    ///     often a button is clicked or its request replayed. Nil queues it every time.
    ///   - replacing: the id of an earlier entry whose delivered message this reply edits.
    /// - Returns: false when a reply under `onceAs` was queued before (nothing is queued now).
    @discardableResult
    func post(_ reply: Reply, route: ReplyRoute, onceAs key: String?, replacing: String?) async throws -> Bool
    /// An earlier outbox entry, e.g. the private result a button refers to.
    func outboxEntry(id: String) async throws -> OutboxEntry?
    /// Runs a quick action (translate, fix, rewrite) at once and returns its reply, outside the
    /// queue and the outbox: for inline answers (Telegram's inline mode), which the person
    /// inserts and sends themselves, so nothing is posted and nothing waits to be delivered.
    /// Nil for any other command (chains, tribunals…), which never run this way.
    func answerNow(_ event: Event) async -> Reply?
    /// The message `message` (an `Event.sourceMessage`) of `platform` was deleted or redacted:
    /// its command is withdrawn. It is not run if it has not started, its answer is not queued
    /// if it is running (here or on another replica), and an answer queued and not yet sent is
    /// dropped; a "working on it" message already shown says the command was deleted. An answer
    /// already on its way (being sent) is not called back. Marks are kept as long as platform
    /// retries are remembered (`dedupeLifetime`), so a deletion seen before its command arrives
    /// withdraws it too.
    func withdraw(platform: String, message: String) async throws
}

extension RelayInbox {
    /// Platforms without inline answers need not run anything at once.
    public func answerNow(_ event: Event) async -> Reply? { nil }

    /// An inbox that runs nothing later has nothing to withdraw.
    public func withdraw(platform: String, message: String) async throws {}

    /// Queues a ready reply for `route`, every time it is called.
    public func post(_ reply: Reply, route: ReplyRoute) async throws {
        try await post(reply, route: route, onceAs: nil, replacing: nil)
    }
}

/// What became of a submitted event.
public enum Submission: Sendable, Hashable {
    /// Stored; it runs when its turn comes, after `ahead` others waiting.
    case accepted(ahead: Int)
    /// A platform's retry of an event already accepted: nothing more happens.
    case duplicate
    /// Not stored: the relay has `ahead` commands waiting already, beyond its configured depth.
    /// The adapter tells the person at once (``busyMessage``), in its acknowledgement when the
    /// platform allows, else as a reply.
    case busy(ahead: Int)

    /// What a person is told when their command was refused as one too many.
    public var busyMessage: String? {
        guard case .busy(let ahead) = self else { return nil }
        return "Rhea Relay is busy right now: \(ahead) commands ahead of you. Nothing was run; please send it again in a minute."
    }
}

/// An accepted event waiting in the inbox, or running.
public struct InboxItem: Sendable, Hashable {
    public var id: Int64
    public var event: Event
    public var route: ReplyRoute
    public var acceptedAt: Date

    /// What an item's budget columns say admission decided: over, or holding its estimate
    /// (within), or neither (unchecked: its run looks when it starts).
    public static func budget(over: Bool, reserved: Double) -> BudgetAdmission {
        over ? .over : reserved > 0 ? .within : .unchecked
    }

    public init(id: Int64, event: Event, route: ReplyRoute, acceptedAt: Date) {
        self.id = id
        self.event = event
        self.route = route
        self.acceptedAt = acceptedAt
    }
}

/// What the scheduler keeps in memory of an item waiting in the inbox: its id and its team (for
/// fairness across teams) — the event itself stays in the store.
public struct InboxTicket: Sendable, Hashable {
    public var id: Int64
    public var team: String

    public init(id: Int64, team: String) {
        self.id = id
        self.team = team
    }
}
