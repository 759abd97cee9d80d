public import RelayCore

public import struct Foundation.Date

/// What a platform's limits tell the outbox: how to pace its sends, and whether a new message can
/// be made idempotent. Both the worker's `ReplySender` and a platform's `DeliveryPlatform` are one.
public protocol DeliveryLimits: Sendable {
    /// The `platform` this delivers for (matches `OutboxEntry.platform`).
    var platform: String { get }
    /// Time to keep between this send and the previous one to the same conversation (Slack:
    /// about one `chat.postMessage` a second per channel; a `response_url` has no such limit).
    func minimumInterval(for entry: OutboxEntry) -> Duration
    /// Whether the platform counts its limits per bot (messages a second, per chat, route
    /// buckets), so that replicas sharing a store send its replies from one of them, the holder
    /// of its delivery lease (docs/replicas.md). True unless a platform says otherwise.
    var limitsCountPerBot: Bool { get }
    /// The lease whose holder delivers this platform's replies when its limits count per bot:
    /// `<platform>.delivery` unless a platform says otherwise. A platform whose replies leave on
    /// a connection held once among the replicas (IRC's socket) names that connection's lease,
    /// so they are sent where it is.
    var deliveryLeaseName: String { get }
    /// Asked right before the worker would start `entry`: zero when the platform's own limits
    /// (per chat, per bot) let it go now — the platform then takes that turn, so the delivery
    /// sends without waiting — else how long until it could, with nothing taken. The worker leaves
    /// an entry that must wait in its queue, holding no delivery slot, and starts others
    /// meanwhile; a platform that paced inside a send would hold a slot for the whole wait.
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
    /// unless a platform says otherwise: where the answer is an edit already (Discord's
    /// `@original`) or the platform deduplicates creates (Discord's `nonce`, Matrix's
    /// transaction ids, Mattermost's `pending_post_id`).
    func answersByEditingPlaceholder(at address: String) -> Bool
    /// How an answer going to `address` is shown while the model writes it: one edit of its
    /// message at most every `interval`, `maxEdits` at most (the whole answer's edit comes
    /// whatever); `.none` where the platform cannot edit there.
    func streaming(at address: String) -> StreamingPace
    /// Whether one more edit of an answer being written to `address` fits the platform's limits
    /// across conversations now (`EditBudget`); taken when true. A refused edit waits an
    /// interval. True unless a platform says otherwise.
    func admitsPartialEdit(at address: String, now: Date) -> Bool
}

/// How often an answer being written may be shown again, and how many times.
public struct StreamingPace: Sendable, Hashable {
    public var interval: Duration
    public var maxEdits: Int

    public init(interval: Duration, maxEdits: Int) {
        self.interval = interval
        self.maxEdits = max(0, maxEdits)
    }

    /// No streaming: the answer arrives whole (a platform without edits).
    public static let none = StreamingPace(interval: .seconds(1), maxEdits: 0)
}

extension DeliveryLimits {
    public func streaming(at address: String) -> StreamingPace { StreamingPace(interval: .seconds(1), maxEdits: 60) }
    public func minimumInterval(for entry: OutboxEntry) -> Duration { .zero }
    public var limitsCountPerBot: Bool { true }
    public var deliveryLeaseName: String { "\(platform).delivery" }
    public func takeTurn(for entry: OutboxEntry, now: Date) -> Duration { .zero }
    public func platformWait(now: Date) -> Duration { .zero }
    public func answersByEditingPlaceholder(at address: String) -> Bool { false }
    public func admitsPartialEdit(at address: String, now: Date) -> Bool { true }
}

/// What a platform gives `Deliverer`, the one component every reply goes through: its
/// primitives (render, post, edit) and its limits. What a reply goes through — the placeholder
/// and progress edits, parts, public and private routing, the note a private answer leaves in the
/// channel, replacing the message that holds a button, idempotency keys — is decided once, in
/// `Deliverer`; a platform says only how each step is done in its API (docs/architecture.md).
///
/// A platform with no edits at all (IRC) has no placeholder (`placeholder` nil), posts every
/// part as a new message and never has `edit` called.
public protocol DeliveryPlatform: DeliveryLimits {
    /// Where a reply goes, as the adapter wrote it in `OutboxEntry.address`, decoded.
    associatedtype Address: Sendable
    /// One rendered message, within the platform's limits.
    associatedtype Message: Sendable
    /// One way to post a new message: a channel post, a slash command's `response_url`, a
    /// follow-up, a DM.
    associatedtype Route: Sendable, Hashable
    /// Where a message is seen: a placeholder seen where an answer goes takes that answer.
    associatedtype Place: Sendable, Hashable
    /// What a call to the platform throws.
    associatedtype Failure: DeliveryFailure

    /// The stored address, or nil when it cannot be read (the entry is refused for good).
    func decode(_ address: String) -> Address?
    /// `reply` as messages, one per part. `entryID` names the entry, for buttons that refer to it
    /// ("Post to channel").
    func render(_ reply: Reply, entryID: String, address: Address) -> [Message]
    func render(_ progress: RunProgress) -> Message
    /// A short plain sentence as a message (the note a private answer leaves).
    func render(note: String) -> Message

    /// Where `reply` is seen: the channel, or the asker alone (a private reply), or the chat or
    /// room it goes to.
    func place(of reply: Reply, address: Address) async throws(Failure) -> Place
    /// Whether `reply` would reach the asker alone here — a private reply the platform shows
    /// only to them (an ephemeral message, a direct message), or any reply in a conversation
    /// with nobody else — so that a secret reply (`Reply.isSecret`: a sign-in link) may go.
    /// False when unsure: the asker is then told to ask in a direct message.
    func reachesAskerAlone(_ reply: Reply, address: Address) async -> Bool
    /// The message the run shows its progress in and its public answer replaces — the message
    /// `earlier` (the entry this one replaces) posted, or one the platform made for the run
    /// itself (Discord's deferred `@original`) — when there is one the bot can edit.
    func placeholder(address: Address, earlier: OutboxEntry?) -> Placeholder<Place>?
    /// How a run's first progress message is posted when there is no placeholder yet; nil when
    /// the platform shows no progress there (no bot to post with).
    func progressRoute(address: Address) -> Route?
    /// The same for an answer being written (`RunProgress.partial`), where it may go another way
    /// than a chain's progress (Slack: a slash command's `response_url`). As `progressRoute` unless
    /// a platform says otherwise.
    func partialRoute(address: Address) -> Route?
    /// The ways to post part `part.index` of a reply, best first, after the placeholder's edit
    /// that `Deliverer` tries first where the part can take it. A route may be `.placeholder`
    /// too, as a fallback (an error shown in the group when the private chat refused it).
    func routes(for part: PartToSend<Address, Place>) -> [PartRoute<Route>]
    /// How a private reply replaces an earlier private one (the note that a private result was
    /// posted to the channel, in place of the message holding the button).
    func buttonMessage(address: Address) -> ButtonMessage<Route>
    /// Posts `message`; returns the new message's reference when the bot can edit it later.
    /// `key` is the same for every try of one send, for platforms that deduplicate creates.
    func post(_ message: Message, via route: Route, address: Address, key: SendKey) async throws(Failure) -> String?
    /// Puts `message` in place of the placeholder's.
    func edit(_ placeholder: Placeholder<Place>, to message: Message, address: Address, key: SendKey) async throws(Failure)
    /// Messages one reply may take here; a longer one is cut (`LongReply`). `LongReply.maxParts`
    /// unless a platform says otherwise.
    var maxParts: Int { get }
    /// The reason a part could go nowhere (no route at all), naming what to configure.
    func unreachable(address: Address) -> String
    /// Shows or stops the "typing…" indicator where the run's command was; best effort.
    func typing(at address: Address, _ on: Bool) async
}

extension DeliveryPlatform {
    public func buttonMessage(address: Address) -> ButtonMessage<Route> { .asUsual }
    public func partialRoute(address: Address) -> Route? { progressRoute(address: address) }
    public var maxParts: Int { LongReply.maxParts }
    public func unreachable(address: Address) -> String { "no way to reach \(platform)" }
    public func typing(at address: Address, _ on: Bool) async {}
}

/// Where a message is seen on a platform that shows a private reply to the asker inside the
/// conversation (an ephemeral message): by everyone in the channel, or by the asker alone.
public enum Audience: Sendable, Hashable {
    case channel
    case asker
}

/// A platform call's failure, as the outbox acts on it.
public protocol DeliveryFailure: Error {
    /// What the outbox does next: wait, retry, or give up (`.rejected` also passes a part to its
    /// next route).
    var deliveryOutcome: DeliveryOutcome { get }
    /// One line for logs; never a secret.
    var reason: String { get }
}

/// The message a run's trace is in: its progress message or placeholder, or the platform's own
/// (Discord's deferred `@original`).
public struct Placeholder<Place: Sendable & Hashable>: Sendable, Hashable {
    /// The platform's reference to the message (what `OutboxEntry.platformRef` holds).
    public var ref: String
    /// Where it is seen.
    public var place: Place
    /// Everyone in the conversation sees it: when the answer goes privately, it is left saying so.
    public var isPublic: Bool

    public init(ref: String, place: Place, isPublic: Bool = true) {
        self.ref = ref
        self.place = place
        self.isPublic = isPublic
    }
}

/// One way a part of a reply can go.
public enum PartRoute<Route: Sendable & Hashable>: Sendable, Hashable {
    /// The edit of the run's placeholder.
    case placeholder
    /// A new message by the platform's route.
    case post(Route)
}

/// What a platform knows when it picks the routes of one part of a reply.
public struct PartToSend<Address: Sendable, Place: Sendable & Hashable>: Sendable {
    public var reply: Reply
    /// Which part (from 0).
    public var index: Int
    public var address: Address
    /// Where the reply is seen (`DeliveryPlatform.place(of:address:)`).
    public var place: Place
    /// The run's placeholder, if any; the part edits it first when `editsPlaceholder`.
    public var placeholder: Placeholder<Place>?
    /// The reference the entry's first part recorded, for the later parts.
    public var firstPartRef: String?

    public init(reply: Reply, index: Int, address: Address, place: Place, placeholder: Placeholder<Place>?, firstPartRef: String?) {
        self.reply = reply
        self.index = index
        self.address = address
        self.place = place
        self.placeholder = placeholder
        self.firstPartRef = firstPartRef
    }

    /// The first part goes into the placeholder when that is seen where the reply is: a public
    /// answer in a public placeholder, a private one in an ephemeral placeholder or in the
    /// asker's own chat.
    public var editsPlaceholder: Bool { index == 0 && placeholder?.place == place }
}

/// How a private reply replaces the earlier private reply whose button was pressed.
public enum ButtonMessage<Route: Sendable & Hashable>: Sendable, Hashable {
    /// As any reply: edits the earlier message (a chat the bot can edit in).
    case asUsual
    /// Only through `route` (a click's `response_url`, its interaction webhook).
    case replace(via: Route)
    /// It cannot be reached any more (the click's URL expired): skipped, nothing lost.
    case unreachable
}

/// The key of one send of one entry: the same for every try of it, so a platform that
/// deduplicates creates (Discord's nonce, Matrix's transaction id, Mattermost's
/// `pending_post_id`) shows a resent message once.
public struct SendKey: Sendable, Hashable {
    public var entryID: String
    /// The part's number ("0", "1"…), or "edit" and "tidy" for the placeholder's edits.
    public var step: String

    public init(entryID: String, step: String) {
        self.entryID = entryID
        self.step = step
    }
}
