public import Logging
public import RelayCore
import Synchronization

public import struct Foundation.Date

/// The one deliverer: everything an outbox entry goes through on its way to any platform.
///
/// - **Progress** (a chain's "Running… 2/5", the placeholder "⏳ Working on /translate…", an
///   answer as the model writes it) is one message: the first is posted (`progressRoute`), later
///   ones edit it (`placeholder`).
/// - **A reply** goes one part per `deliver` call, from `entry.partsDelivered` on. Its first part
///   replaces the run's placeholder when that is seen where the reply is (a public answer in the
///   channel; a private answer in an ephemeral placeholder); otherwise, and for later parts, it
///   goes by the first of the platform's routes that the platform accepts. A route refused for
///   good hands the part to the next, so a reply is lost only when every route refuses it; a
///   failure that may pass (429, 5xx, a timeout) is returned for the outbox to retry that part.
/// - **A private answer** leaves a public placeholder saying where it went, after its last part.
/// - **A private reply to a private one** (the note that a private result was posted to the
///   channel) replaces the message that holds the button, the way the platform allows it.
/// - **Idempotency**: every send carries a `SendKey` made from the entry and the step, the same
///   for every try.
///
/// A platform gives only its primitives (`DeliveryPlatform`); its limits pass through to the
/// outbox unchanged.
public struct Deliverer<Platform: DeliveryPlatform>: ReplySender {
    public let target: Platform
    let logger: Logger
    /// Where the replies being delivered in parts were cut (`rendered`), so a reply's later parts
    /// render it once rather than search for the cut again.
    let cuts = CutMemory()

    public init(_ target: Platform, logger: Logger) {
        self.target = target
        self.logger = logger
    }

    // The platform's limits, as the outbox asks them.
    public var platform: String { target.platform }
    public func minimumInterval(for entry: OutboxEntry) -> Duration { target.minimumInterval(for: entry) }
    public var limitsCountPerBot: Bool { target.limitsCountPerBot }
    public var deliveryLeaseName: String { target.deliveryLeaseName }
    public func takeTurn(for entry: OutboxEntry, now: Date) -> Duration { target.takeTurn(for: entry, now: now) }
    public func platformWait(now: Date) -> Duration { target.platformWait(now: now) }
    public func answersByEditingPlaceholder(at address: String) -> Bool { target.answersByEditingPlaceholder(at: address) }
    public func streaming(at address: String) -> StreamingPace { target.streaming(at: address) }
    public func admitsPartialEdit(at address: String, now: Date) -> Bool { target.admitsPartialEdit(at: address, now: now) }

    public func runStarted(at address: String) async {
        guard let address = target.decode(address) else { return }
        await target.typing(at: address, true)
    }

    public func deliver(_ entry: OutboxEntry, earlier: OutboxEntry?) async -> DeliveryOutcome {
        guard let address = target.decode(entry.address) else {
            return .rejected(reason: "the stored \(platform) address cannot be read")
        }
        do throws(Platform.Failure) {
            switch entry.content {
            case .progress(let step):
                return try await deliverProgress(step, entry: entry, address: address, earlier: earlier)
            case .reply(let reply):
                if reply.isPrivate, let earlier, case .reply(let original) = earlier.content, original.isPrivate {
                    switch target.buttonMessage(address: address) {
                    case .asUsual: break
                    case .unreachable: return .sent(platformRef: nil)
                    case .replace(let route):
                        guard let message = target.render(reply, entryID: entry.id, address: address).last else { return .sent(platformRef: nil) }
                        _ = try await target.post(message, via: route, address: address, key: SendKey(entryID: entry.id, step: "button"))
                        return .sent(platformRef: nil)
                    }
                }
                // A secret goes only where the asker alone reads it; elsewhere they are told why not.
                if reply.isSecret, await !target.reachesAskerAlone(reply, address: address) {
                    return try await deliverPart(of: .secretRefused, entry: entry, address: address, earlier: earlier)
                }
                return try await deliverPart(of: reply, entry: entry, address: address, earlier: earlier)
            case .parkedRun:
                // The worker runs parked runs again; one never reaches a platform.
                return .rejected(reason: "a parked run is not a message")
            }
        } catch {
            return error.deliveryOutcome
        }
    }

    private func deliverProgress(_ step: RunProgress, entry: OutboxEntry, address: Platform.Address, earlier: OutboxEntry?) async throws(Platform.Failure)
        -> DeliveryOutcome
    {
        let message: Platform.Message
        if let partial = step.partial {
            // The answer so far, rendered (and escaped) as the whole answer is; only its first
            // part while it is written: the rest comes in parts with the whole answer.
            guard let first = target.render(partial.reply, entryID: entry.id, address: address).first else { return .sent(platformRef: nil) }
            message = first
        } else {
            message = target.render(step)
        }
        if let placeholder = target.placeholder(address: address, earlier: earlier) {
            try await target.edit(placeholder, to: message, address: address, key: SendKey(entryID: entry.id, step: "edit"))
            return .sent(platformRef: placeholder.ref)
        }
        // No bot to post with: no progress shown; the answer comes all the same.
        guard let route = step.partial == nil ? target.progressRoute(address: address) : target.partialRoute(address: address) else {
            return .sent(platformRef: nil)
        }
        return .sent(platformRef: try await target.post(message, via: route, address: address, key: SendKey(entryID: entry.id, step: "0")))
    }

    /// Sends part `entry.partsDelivered` of `reply`: `.partDelivered` while more remain, `.sent`
    /// after the last (with the first part's reference, which the outbox then keeps).
    private func deliverPart(of reply: Reply, entry: OutboxEntry, address: Platform.Address, earlier: OutboxEntry?) async throws(Platform.Failure)
        -> DeliveryOutcome
    {
        let messages = rendered(reply, entryID: entry.id, address: address)
        let index = entry.partsDelivered
        guard index < messages.count else { return .sent(platformRef: nil) }
        let place = try await target.place(of: reply, address: address)
        let placeholder = target.placeholder(address: address, earlier: earlier)
        let part = PartToSend(reply: reply, index: index, address: address, place: place, placeholder: placeholder, firstPartRef: entry.platformRef)
        // Nor does a secret ever take the place of a message others see (the run's placeholder,
        // as a fallback route).
        let routes = Self.routes(for: part, platform: target).filter { !(reply.isSecret && $0 == .placeholder && placeholder?.isPublic != false) }
        let sent = await send(messages[index], routes: routes, part: part, entry: entry)
        // A secret no way to the asker alone took (a direct message the person never opened, an
        // ephemeral post the bot may not make): they are told why, rather than left waiting.
        if reply.isSecret, case .rejected(let reason) = sent.outcome {
            logger.notice("\(platform): a secret reply reached no private way; the asker is told", metadata: ["reason": "\(reason)"])
            return try await deliverPart(of: .secretRefused, entry: entry, address: address, earlier: earlier)
        }
        guard case .sent(let ref) = sent.outcome else { return sent.outcome }
        let isLast = index == messages.count - 1
        guard isLast else { return .partDelivered(platformRef: ref) }
        // Where the answer went privately, the public placeholder says so rather than "⏳".
        let placeholderTookAPart = index == 0 ? sent.intoPlaceholder : entry.platformRef != nil && entry.platformRef == placeholder?.ref
        if reply.isPrivate, let placeholder, placeholder.isPublic, !placeholderTookAPart {
            await tidy(placeholder, entry: entry, address: address)
        }
        await target.typing(at: address, false)
        // A later part's reference must not replace the first part's, which later edits refer to.
        return .sent(platformRef: index == 0 ? ref : nil)
    }

    /// `reply` as the platform's messages, at most `maxParts` of them: a longer body is cut
    /// (`LongReply.cut`). The same reply always gives the same messages, so every part of one
    /// entry, in any try and on any replica, comes from one cut.
    func rendered(_ reply: Reply, entryID: String, address: Platform.Address) -> [Platform.Message] {
        let bound = max(1, target.maxParts)
        // Found for an earlier part of this reply: the same cut (it depends on nothing else).
        if let keeping = cuts.keeping(for: entryID, body: reply.body.count) {
            return target.render(LongReply.cut(reply, keeping: keeping, maxParts: bound), entryID: entryID, address: address)
        }
        // No platform holds more than 25 000 characters a message: a longer body is cut anyway,
        // and is not rendered whole (a 300 KB answer would be, once for each part).
        let longest = bound * 25_000
        var keeping = reply.body.count
        var messages: [Platform.Message] = []
        if keeping <= longest {
            messages = target.render(reply, entryID: entryID, address: address)
            if messages.count <= bound { return messages }
        } else {
            keeping = longest
            messages = target.render(LongReply.cut(reply, keeping: keeping, maxParts: bound), entryID: entryID, address: address)
        }
        // In proportion to what is over (a message's worth spare for the note), and at least a
        // tenth less each time: two or three renders, not one per tenth.
        while messages.count > bound && keeping > 0 {
            keeping = min(keeping * 9 / 10, keeping * bound / (messages.count + 1))
            messages = target.render(LongReply.cut(reply, keeping: keeping, maxParts: bound), entryID: entryID, address: address)
        }
        cuts.remember(keeping, for: entryID, body: reply.body.count)
        return messages
    }

    /// The routes of one part, best first: the placeholder's edit where the part takes it, then
    /// the platform's routes.
    public static func routes(for part: PartToSend<Platform.Address, Platform.Place>, platform: Platform) -> [PartRoute<Platform.Route>] {
        var routes: [PartRoute<Platform.Route>] = part.editsPlaceholder ? [.placeholder] : []
        for route in platform.routes(for: part) where !routes.contains(route) {
            // A placeholder route needs a placeholder.
            if route == .placeholder && part.placeholder == nil { continue }
            routes.append(route)
        }
        return routes
    }

    /// Tries `routes` in order until the platform accepts `message`. A route refused for good
    /// passes it to the next; a passing failure is returned for the outbox to retry.
    private func send(_ message: Platform.Message, routes: [PartRoute<Platform.Route>], part: PartToSend<Platform.Address, Platform.Place>, entry: OutboxEntry)
        async -> (outcome: DeliveryOutcome, intoPlaceholder: Bool)
    {
        var refusals: [String] = []
        for route in routes {
            do throws(Platform.Failure) {
                switch route {
                case .placeholder:
                    guard let placeholder = part.placeholder else { continue }
                    try await target.edit(placeholder, to: message, address: part.address, key: SendKey(entryID: entry.id, step: "edit"))
                    return (.sent(platformRef: placeholder.ref), true)
                case .post(let route):
                    let ref = try await target.post(message, via: route, address: part.address, key: SendKey(entryID: entry.id, step: String(part.index)))
                    return (.sent(platformRef: ref), false)
                }
            } catch {
                guard case .rejected(let reason) = error.deliveryOutcome else { return (error.deliveryOutcome, false) }
                refusals.append(reason)
                if route != routes.last {
                    logger.notice("\(platform): a route refused a reply; trying the next one", metadata: ["reason": "\(reason)"])
                }
            }
        }
        guard !refusals.isEmpty else { return (.rejected(reason: target.unreachable(address: part.address)), false) }
        return (.rejected(reason: refusals.joined(separator: "; then ")), false)
    }

    /// The note a private answer leaves in the public placeholder. Best effort: the answer was
    /// delivered; a stale placeholder is only cosmetic.
    private func tidy(_ placeholder: Placeholder<Platform.Place>, entry: OutboxEntry, address: Platform.Address) async {
        let note = target.render(note: Self.sentPrivately)
        do throws(Platform.Failure) {
            try await target.edit(placeholder, to: note, address: address, key: SendKey(entryID: entry.id, step: "tidy"))
        } catch {
            logger.notice("\(platform): could not say in the placeholder where a private answer went", metadata: ["reason": "\(error.reason)"])
        }
    }

    /// What a public placeholder says once the answer went privately.
    public static var sentPrivately: String { "Finished — the result was sent privately to the person who asked." }
}

/// The cuts of the last few long replies, by outbox entry: a reply is delivered one part per
/// call, and finding its cut takes two or three renders of a long text. Only a shortcut: a
/// replica or a restart that has not seen the reply finds the same cut again.
final class CutMemory: Sendable {
    private struct Cut {
        var entryID: String
        var body: Int
        var keeping: Int
    }

    private let cuts = Mutex<[Cut]>([])
    private static let kept = 32

    func keeping(for entryID: String, body: Int) -> Int? {
        cuts.withLock { $0.last { $0.entryID == entryID && $0.body == body }?.keeping }
    }

    func remember(_ keeping: Int, for entryID: String, body: Int) {
        cuts.withLock { cuts in
            cuts.append(Cut(entryID: entryID, body: body, keeping: keeping))
            if cuts.count > Self.kept { cuts.removeFirst(cuts.count - Self.kept) }
        }
    }
}
