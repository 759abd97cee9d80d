import Foundation
import Logging
import RelayCore
import RelayPipeline
import RelayPlatform

/// One message of a reply on XMPP: its body, and whether it goes to the asker alone.
struct XMPPOutgoing: Sendable, Hashable {
    var body: String
    var privately: Bool
}

/// XMPP's delivery primitives, for `Deliverer` (platform "xmpp").
///
/// Every message is a `<message/>` stanza written by the one XML writer: `groupchat` in a room,
/// `chat` one to one (a private reply to someone in a room is the room's private message to
/// their occupant JID), the model's text only ever as the body's character data (no XHTML-IM).
/// The answer's first message is marked as a reply to the command (XEP-0461); in a room its
/// body starts with the asker's nick, which notifies them in every client.
///
/// **Corrections** (XEP-0308) where the address allows them (`XMPPAddress.corrections`: the
/// asker's client says it reads them, or the room allows them — `XMPP_ROOM_CORRECTIONS`): the
/// run's placeholder ("⏳ Working on !translate…") is a message, its progress and the answer
/// as it is written correct it, and the whole answer is its last correction — one message. A
/// correction sent twice (a crash) still shows one. Elsewhere: no placeholder, no progress, one
/// final message (in parts when long).
///
/// Sends are confirmed by the server (`XMPPLink`); the server shapes a client's traffic by
/// reading it slower, never by closing the stream, so no pacing is kept here.
struct XMPPDelivery: DeliveryPlatform {
    typealias Place = Audience

    enum Route: Sendable, Hashable {
        case send
    }

    struct Failure: DeliveryFailure {
        var error: XMPPLink.SendError
        var deliveryOutcome: DeliveryOutcome { .retryable(reason: reason) }
        var reason: String {
            switch error {
            case .notConnected: "not connected to the XMPP server (connecting, or reconnecting)"
            case .connectionLost: "the XMPP connection ended before the server confirmed the message"
            case .unconfirmed: "the XMPP server did not confirm the message in time"
            }
        }
    }

    let platform = XMPPPlatform.name
    let link: XMPPLink
    let logger: Logger

    /// Its replies leave on the one connection: the replica that holds it delivers them.
    var deliveryLeaseName: String { XMPPPlatform.connectionLease }

    /// Where the answer corrects its placeholder: a resend after a crash is then a correction,
    /// which shows once.
    func answersByEditingPlaceholder(at address: String) -> Bool { XMPPAddress.decode(address)?.corrections ?? false }

    /// One correction a second in a one-to-one chat, every 2 s in a room (everyone's client
    /// redraws it), 30 and 20 at most.
    func streaming(at address: String) -> StreamingPace {
        guard let address = XMPPAddress.decode(address), address.corrections else { return .none }
        return address.isPrivate ? StreamingPace(interval: .seconds(1), maxEdits: 30) : StreamingPace(interval: .seconds(2), maxEdits: 20)
    }

    // MARK: Primitives

    func decode(_ address: String) -> XMPPAddress? { XMPPAddress.decode(address) }

    func render(_ reply: Reply, entryID: String, address: XMPPAddress) -> [XMPPOutgoing] {
        let privately = place(of: reply, address: address) == .asker
        var bodies = XMPPRenderer.render(reply)
        if address.room != nil, !privately, !bodies.isEmpty {
            bodies[0] = "\(address.nick): " + bodies[0]
        }
        return bodies.map { XMPPOutgoing(body: $0, privately: privately) }
    }

    func render(_ progress: RunProgress) -> XMPPOutgoing { XMPPOutgoing(body: XMPPRenderer.line(progress), privately: false) }

    func render(note: String) -> XMPPOutgoing { XMPPOutgoing(body: note, privately: false) }

    func place(of reply: Reply, address: XMPPAddress) -> Audience { reply.isPrivate || address.isPrivate ? .asker : .channel }

    /// A private reply goes to the asker alone, not to the room.
    func reachesAskerAlone(_ reply: Reply, address: XMPPAddress) async -> Bool { reply.isPrivate || address.isPrivate }

    func placeholder(address: XMPPAddress, earlier: OutboxEntry?) -> Placeholder<Audience>? {
        guard address.corrections, let id = earlier?.platformRef else { return nil }
        return Placeholder(ref: id, place: address.isPrivate ? .asker : .channel, isPublic: !address.isPrivate)
    }

    func progressRoute(address: XMPPAddress) -> Route? { address.corrections ? .send : nil }

    func routes(for part: PartToSend<XMPPAddress, Audience>) -> [PartRoute<Route>] { [.post(.send)] }

    func post(_ message: XMPPOutgoing, via route: Route, address: XMPPAddress, key: SendKey) async throws(Failure) -> String? {
        let id = Self.messageID(key)
        try await send(Self.stanza(message, address: address, id: id, replyMarked: key.step == "0"))
        return id
    }

    func edit(_ placeholder: Placeholder<Audience>, to message: XMPPOutgoing, address: XMPPAddress, key: SendKey) async throws(Failure) {
        var stanza = Self.stanza(message, address: address, id: Self.messageID(key), replyMarked: true)
        stanza.children.append(XMLElement(name: "replace", namespace: XMPPNamespace.correction, attributes: ["id": placeholder.ref]))
        try await send(stanza)
    }

    private func send(_ stanza: XMLElement) async throws(Failure) {
        do {
            try await link.send([stanza])
        } catch {
            throw Failure(error: error)
        }
    }

    // MARK: Details

    /// The id of one send of one entry: the same send, the same id (clients that keep messages
    /// by id show a resend once).
    static func messageID(_ key: SendKey) -> String { "rr-\(key.entryID)-\(key.step)" }

    /// The stanza for `message`: to the room, or to the asker (one to one, or the room's private
    /// message); marked as a reply to the command where asked.
    static func stanza(_ message: XMPPOutgoing, address: XMPPAddress, id: String, replyMarked: Bool) -> XMLElement {
        let inRoom = address.room != nil && !message.privately
        let to = inRoom ? address.room ?? address.from : address.from
        var children = [XMLElement(name: "body", namespace: XMPPNamespace.client, text: message.body)]
        if replyMarked, let replyTo = address.replyTo, address.room == nil || inRoom {
            children.append(XMLElement(name: "reply", namespace: XMPPNamespace.reply, attributes: ["to": address.from, "id": replyTo]))
        }
        return XMLElement(
            name: "message", namespace: XMPPNamespace.client, attributes: ["to": to, "type": inRoom ? "groupchat" : "chat", "id": id],
            children: children)
    }
}
