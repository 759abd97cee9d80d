import RelayCore
import RelayPipeline
import RelayPlatform

import struct Foundation.Date

/// Matrix's delivery primitives, for `Deliverer` (platform "matrix"): `m.notice` messages.
///
/// Every message is sent with `PUT …/send/m.room.message/{txnId}`, the transaction id made from
/// the outbox entry and its step (`rr.<entry>.<part>`, `….edit`, `….tidy`). The homeserver
/// keeps transaction ids per access token and answers a repeated one with the event it already
/// made, so a delivery repeated after a crash, a timeout or a lost answer shows once: exactly
/// once, for free.
///
/// A run's progress is one message, edited (`m.replace`) as blocks finish; the answer replaces
/// it the same way, so a chain leaves one message. A private reply (a result kept private, an
/// error) goes to the asker's direct room (`MatrixDirectRooms`). Rate limits
/// (`M_LIMIT_EXCEEDED`) are handed to the outbox to wait out.
///
/// `platformRef` is a `MatrixMessageRef`: where the message is, for the edit that follows.
struct MatrixDelivery: DeliveryPlatform {
    typealias Failure = MatrixAPIError

    /// A new message in `room`, as a reply to `replyTo`, in `thread` when given.
    struct Route: Sendable, Hashable {
        var room: String
        var replyTo: String?
        var thread: String?
    }

    let platform = MatrixPlatform.name
    let api: any MatrixAPI
    let identity: MatrixIdentity
    let rooms: MatrixDirectRooms
    let partialEdits = EditBudget(perMinute: 6, burst: 5)

    /// Synapse limits a sender's messages, edits included (`rc_message`: 0.2 a second with bursts
    /// of 10 by default): every 3 s at most, 10 times at most.
    func streaming(at address: String) -> StreamingPace { StreamingPace(interval: .seconds(3), maxEdits: 10) }

    /// Synapse limits a sender's events across every room (`rc_message`, 0.2 a second with
    /// bursts of 10 by default): answers written at once share half of it, 6 a minute with
    /// bursts of 5.
    func admitsPartialEdit(at address: String, now: Date) -> Bool { partialEdits.take(now: now) }

    // MARK: Primitives

    func decode(_ address: String) -> MatrixAddress? { MatrixAddress.decode(address) }

    func render(_ reply: Reply, entryID: String, address: MatrixAddress) -> [MatrixMessage] { MatrixRenderer.render(reply) }

    func render(_ progress: RunProgress) -> MatrixMessage { MatrixRenderer.render(progress) }

    func render(note: String) -> MatrixMessage { MatrixMessage(body: note, html: MatrixHTML.escape(note)) }

    /// The room the reply is seen in: the command's, or for a private reply the asker's direct
    /// room (the command's room itself when it is that).
    func place(of reply: Reply, address: MatrixAddress) async throws(MatrixAPIError) -> String {
        guard reply.isPrivate, !address.user.isEmpty else { return address.room }
        if try await rooms.isDirect(address.room, with: address.user) { return address.room }
        return try await rooms.room(with: address.user)
    }

    /// A private reply goes to the asker's direct room (`place(of:address:)`).
    func reachesAskerAlone(_ reply: Reply, address: MatrixAddress) async -> Bool { reply.isPrivate && !address.user.isEmpty }

    func placeholder(address: MatrixAddress, earlier: OutboxEntry?) -> Placeholder<String>? {
        guard let reference = earlier?.platformRef, let message = MatrixMessageRef(stored: reference) else { return nil }
        return Placeholder(ref: reference, place: message.room, isPublic: message.room == address.room)
    }

    func progressRoute(address: MatrixAddress) -> Route? {
        Route(room: address.room, replyTo: address.replyTo, thread: address.thread)
    }

    /// In the reply's room; as a reply to the command, and in its thread, where that is the
    /// command's room.
    func routes(for part: PartToSend<MatrixAddress, String>) -> [PartRoute<Route>] {
        let inPlace = part.place == part.address.room
        let replyTo = part.index == 0 && inPlace ? part.address.replyTo : nil
        return [.post(Route(room: part.place, replyTo: replyTo, thread: inPlace ? part.address.thread : nil))]
    }

    func post(_ message: MatrixMessage, via route: Route, address: MatrixAddress, key: SendKey) async throws(MatrixAPIError) -> String? {
        let event = try await api.send(
            room: route.room, type: "m.room.message", transaction: Self.transaction(key), content: message.content(replyTo: route.replyTo, thread: route.thread)
        )
        return MatrixMessageRef(room: route.room, event: event).stored
    }

    func edit(_ placeholder: Placeholder<String>, to message: MatrixMessage, address: MatrixAddress, key: SendKey) async throws(MatrixAPIError) {
        guard let posted = MatrixMessageRef(stored: placeholder.ref) else {
            throw .invalidRequest(endpoint: "send", reason: "the stored message reference cannot be read")
        }
        _ = try await api.send(
            room: posted.room, type: "m.room.message", transaction: Self.transaction(key), content: message.editContent(of: posted.event))
    }

    /// Where the command was, whichever room the answer goes to.
    func typing(at address: MatrixAddress, _ on: Bool) async {
        guard let me = await identity.current()?.user else { return }
        try? await api.typing(room: address.room, user: me, on: on)
    }

    // MARK: Details

    /// The transaction id of one send of one entry: the same send of the same entry, the same id.
    static func transaction(_ key: SendKey) -> String { "rr.\(key.entryID).\(key.step)" }
}
