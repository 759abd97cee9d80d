import Foundation
import Logging
import RelayCore
import RelayPipeline
import RelayPlatform

/// Google Chat's delivery primitives, for `Deliverer` (platform "google-chat").
///
/// - A reply ready while its event's request still waits goes back as that request's answer
///   (`GoogleChatEventAnswers`): the first and only part of a reply, when nothing of the run was
///   posted before it.
/// - Otherwise a reply is a new message (`spaces.messages.create`) in the command's thread, once
///   per `requestId` (the entry and the step): Google Chat returns the message the first try
///   made, so a resend after a crash shows it once — the answer need not edit a placeholder.
/// - A run's progress and an answer being written are one message, patched in place
///   (`spaces.messages.patch`); the answer replaces it.
/// - A private reply in a space is shown to the asker alone (`privateMessageViewer`); in a
///   direct message everything is theirs already.
/// - 429 waits `Retry-After`; 5xx and timeouts are retried (`PlatformCallError`).
struct GoogleChatDelivery: DeliveryPlatform {
    typealias Failure = GoogleChatAPIError
    typealias Place = Audience

    enum Route: Sendable, Hashable {
        /// The answer of the event's HTTP request, private to the asker or not.
        case eventAnswer(isPrivate: Bool)
        /// A new message in the command's thread.
        case create
        /// A new message in the command's thread that only the asker sees.
        case createPrivate
    }

    let platform = GoogleChatPlatform.name
    let api: GoogleChatAPI
    let answers: GoogleChatEventAnswers
    let logger: Logger
    let partialEdits = EditBudget(perMinute: 30 * 60, burst: 30)

    /// The Chat API takes about one write a second per space: a placeholder and its answer go a
    /// second apart there, unless the answer goes back in its event's own answer, which is no
    /// write at all.
    func minimumInterval(for entry: OutboxEntry) -> Duration {
        if entry.partsDelivered == 0, entry.replaces == nil, let slot = GoogleChatAddress.decode(entry.address)?.eventSlot, answers.isOpen(slot) {
            return .zero
        }
        return .seconds(1)
    }

    /// Google Chat counts its quotas per space and per project, not per connection, and a reply
    /// can ride its event's answer only from the replica that holds the request: so each replica
    /// sends the replies of the commands it ran (the one that took the event, nearly always), as
    /// Slack's are sent, rather than one replica all of them; a 429 past a quota waits its
    /// `Retry-After` (measured: ReplicaGoogleChatTests).
    var limitsCountPerBot: Bool { false }

    /// Every 2 s at most, 20 times at most: 15 patches in 30 s, half the space's write quota.
    func streaming(at address: String) -> StreamingPace { StreamingPace(interval: .seconds(2), maxEdits: 20) }

    /// The Chat API counts writes per project too: answers written at once share 30 patches a
    /// second, so placeholders and whole answers keep the rest.
    func admitsPartialEdit(at address: String, now: Date) -> Bool { partialEdits.take(now: now) }

    // MARK: Primitives

    func decode(_ address: String) -> GoogleChatAddress? { GoogleChatAddress.decode(address) }

    /// "Post to channel" only where the answer is private in a space.
    func render(_ reply: Reply, entryID: String, address: GoogleChatAddress) -> [GoogleChatMessage] {
        var shown = reply
        if place(of: reply, address: address) == .channel { shown.actions = shown.actions.filter { $0 != .postToChannel } }
        return GoogleChatRenderer.render(shown, entryID: entryID)
    }

    func render(_ progress: RunProgress) -> GoogleChatMessage { GoogleChatRenderer.render(progress) }

    func render(note: String) -> GoogleChatMessage { GoogleChatRenderer.render(note: note) }

    func place(of reply: Reply, address: GoogleChatAddress) -> Audience { reply.isPrivate && !address.isDirect ? .asker : .channel }

    /// A private message in a space, or any in a direct message.
    func reachesAskerAlone(_ reply: Reply, address: GoogleChatAddress) async -> Bool { reply.isPrivate || address.isDirect }

    /// The public message the earlier entry posted; a private one is never edited into an answer.
    func placeholder(address: GoogleChatAddress, earlier: OutboxEntry?) -> Placeholder<Audience>? {
        guard let ref = earlier?.platformRef.flatMap(GoogleChatMessageRef.decode), !ref.isPrivate else { return nil }
        return Placeholder(ref: ref.encoded, place: .channel)
    }

    func progressRoute(address: GoogleChatAddress) -> Route? { .create }

    /// The event's answer first, for a reply that is one message and the run's first word;
    /// then the API.
    func routes(for part: PartToSend<GoogleChatAddress, Audience>) -> [PartRoute<Route>] {
        let isPrivate = part.place == .asker
        let api: Route = isPrivate ? .createPrivate : .create
        guard part.index == 0, part.placeholder == nil, let slot = part.address.eventSlot, answers.isOpen(slot),
            render(part.reply, entryID: "", address: part.address).count == 1
        else {
            return [.post(api)]
        }
        return [.post(.eventAnswer(isPrivate: isPrivate)), .post(api)]
    }

    /// A click on a private message's button cannot edit it through the API: the note that its
    /// result was posted is skipped (the post itself went).
    func buttonMessage(address: GoogleChatAddress) -> ButtonMessage<Route> { .unreachable }

    func post(_ message: GoogleChatMessage, via route: Route, address: GoogleChatAddress, key: SendKey) async throws(GoogleChatAPIError) -> String? {
        switch route {
        case .eventAnswer(let isPrivate):
            let body = message.body(privateTo: isPrivate ? address.user : nil)
            guard let slot = address.eventSlot, answers.hand(slot, .init(body: body, entryID: key.entryID)) else {
                // The request stopped waiting: the next route posts it.
                throw .refused(endpoint: "event answer", GoogleChatRefusal(code: "event_answered", status: 410))
            }
            return nil
        case .create, .createPrivate:
            // Something goes through the API first: the answer will edit it, not ride the event.
            if let slot = address.eventSlot { answers.close(slot) }
            let isPrivate = route == .createPrivate
            let body = message.body(privateTo: isPrivate ? address.user : nil, thread: address.thread)
            let name = try await api.create(body, space: address.space, requestID: "\(key.entryID)-\(key.step)")
            return GoogleChatMessageRef(name: name, isPrivate: isPrivate).encoded
        }
    }

    func edit(_ placeholder: Placeholder<Audience>, to message: GoogleChatMessage, address: GoogleChatAddress, key: SendKey) async throws(GoogleChatAPIError) {
        guard let ref = GoogleChatMessageRef.decode(placeholder.ref) else {
            throw .invalidRequest(endpoint: "messages.patch", reason: "the stored message reference is not one the relay wrote")
        }
        try await api.patch(message.body(), name: ref.name)
    }

    func unreachable(address: GoogleChatAddress) -> String { "no way to reach Google Chat" }
}
