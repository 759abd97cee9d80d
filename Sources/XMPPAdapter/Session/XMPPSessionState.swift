import Foundation

/// One XMPP connection's protocol state, from the stream's opening to its end (RFC 6120):
/// STARTTLS, SASL (SCRAM-SHA-256 where offered, else SCRAM-SHA-1), resource binding, presence,
/// joining the rooms (XEP-0045) with a fallback nick, and what must be answered (pings, service
/// discovery, any other request). Pure: each event of the stream goes in (`receive`), what to
/// do comes out — elements to send, a TLS upgrade, messages for the relay — so a transcript
/// tests it without a socket.
struct XMPPSessionState: Sendable {
    enum Phase: Sendable, Hashable {
        /// Waiting for the server's stream header and its features.
        case negotiating
        /// `<starttls/>` sent: waiting for `<proceed/>`.
        case startingTLS
        /// SASL under way.
        case authenticating
        /// `<bind/>` (or the old `<session/>`) asked.
        case binding
        case sessioning
        /// Bound: presence sent, rooms joined or joining.
        case ready
    }

    /// What the connection does after an event.
    enum Action: Sendable, Hashable {
        case send(XMLElement)
        /// Open a new stream (after TLS or authentication): a fresh parser, then the header.
        case openStream
        /// Put TLS under the stream (the server said `<proceed/>`), then open a new stream.
        case startTLS
        /// Bound as `jid`: the session can send.
        case ready(JID)
        /// Joined `room` as `nick`.
        case joined(room: String, nick: String)
        /// The room refused the relay (`reason`: the error's condition); the others go on.
        case notJoined(room: String, reason: String)
        /// A `<message/>` from someone, for `XMPPInbound`.
        case message(XMLElement)
        /// The answer (result or error) to a request the relay sent with `id`.
        case answered(id: String, XMLElement)
        /// The server refused the password: stop, say so.
        case refusedCredentials(String)
        /// The stream cannot go on (a stream error, a refused step).
        case close(String)
    }

    struct Room: Sendable, Hashable {
        var nick: String
        var attempt = 0
        var joined = false
        var rejoinedAfterKick = false
    }

    let jid: JID
    let password: String
    let resource: String
    let configuredNick: String
    /// The stream runs over TLS already (direct TLS), or will once STARTTLS is done.
    private(set) var secured: Bool
    /// A server on this machine: the only one the relay authenticates to without TLS, and the
    /// only one it sends PLAIN to.
    let loopback: Bool

    private(set) var phase = Phase.negotiating
    private(set) var authenticated = false
    private(set) var boundJID: JID?
    private var scram: SCRAMClient?
    /// The joined (or joining) rooms, by bare room JID.
    private(set) var rooms: [String: Room] = [:]

    init(jid: JID, password: String, resource: String = "rhea-relay", nick: String, rooms: [String], secured: Bool, loopback: Bool) {
        self.jid = jid
        self.password = password
        self.resource = resource
        self.configuredNick = nick
        self.secured = secured
        self.loopback = loopback
        for room in rooms { self.rooms[room] = Room(nick: nick) }
    }

    /// The header that opens each stream (RFC 6120 §4.2); the XML declaration first.
    var streamHeader: String {
        "<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='\(XMPPNamespace.stream)' to='\(XMLText.attribute(jid.domain))' "
            + "from='\(XMLText.attribute(jid.bare.description))' version='1.0'>"
    }

    var isReady: Bool { phase == .ready }

    /// The nick the relay has in `room` (a bare room JID).
    func nick(in room: String) -> String? { rooms[room]?.nick }

    mutating func receive(_ event: XMLStreamParser.Event) -> [Action] {
        switch event {
        case .streamOpened(let header):
            guard header[attribute: "version"].map({ $0.hasPrefix("1.") }) ?? false else {
                return [.close("the server speaks no XMPP 1.0 stream")]
            }
            return []
        case .streamClosed:
            return [.close("the server closed the stream")]
        case .stanza(let element):
            return stanza(element)
        }
    }

    private mutating func stanza(_ element: XMLElement) -> [Action] {
        switch (element.namespace, element.name) {
        case (XMPPNamespace.stream, "error"):
            let condition = element.children.first { $0.namespace == XMPPNamespace.streams }?.name ?? "undefined-condition"
            let text = element.child("text", namespace: XMPPNamespace.streams)?.text
            return [.close("the server ended the stream: \(condition)\(text.map { " (\($0))" } ?? "")")]
        case (XMPPNamespace.stream, "features"):
            return features(element)
        case (XMPPNamespace.tls, "proceed"):
            guard phase == .startingTLS else { return [.close("an unasked <proceed/>")] }
            secured = true
            phase = .negotiating
            return [.startTLS]
        case (XMPPNamespace.tls, "failure"):
            return [.close("the server could not start TLS")]
        case (XMPPNamespace.sasl, _):
            return sasl(element)
        case (XMPPNamespace.client, "iq"):
            return iq(element)
        case (XMPPNamespace.client, "presence"):
            return presence(element)
        case (XMPPNamespace.client, "message"):
            return phase == .ready ? [.message(element)] : []
        default:
            return []
        }
    }

    // MARK: Negotiation

    private mutating func features(_ features: XMLElement) -> [Action] {
        if !secured {
            if features.child("starttls", namespace: XMPPNamespace.tls) != nil {
                phase = .startingTLS
                return [.send(XMLElement(name: "starttls", namespace: XMPPNamespace.tls))]
            }
            guard loopback else {
                return [.close("the server offers no TLS (STARTTLS): the relay does not sign in over plain text except on this machine")]
            }
        }
        if !authenticated {
            let offered = Set(features.child("mechanisms", namespace: XMPPNamespace.sasl)?.children.map(\.text) ?? [])
            if let hash = [SCRAMClient.Hash.sha256, .sha1].first(where: { offered.contains($0.rawValue) }) {
                var client = SCRAMClient(hash: hash, user: jid.local ?? "", password: password)
                let first = client.first()
                scram = client
                phase = .authenticating
                return [.send(Self.sasl("auth", Data(first.utf8).base64EncodedString(), mechanism: hash.rawValue))]
            }
            if offered.contains("PLAIN") && loopback {
                phase = .authenticating
                let plain = "\0\(jid.local ?? "")\0\(password)"
                return [.send(Self.sasl("auth", Data(plain.utf8).base64EncodedString(), mechanism: "PLAIN"))]
            }
            let names = offered.sorted().joined(separator: ", ")
            return [
                .close(
                    "the server offers neither SCRAM-SHA-256 nor SCRAM-SHA-1 (it offers \(names.isEmpty ? "nothing" : names)); PLAIN is sent only to a server on this machine"
                )
            ]
        }
        if features.child("bind", namespace: XMPPNamespace.bind) != nil {
            phase = .binding
            let bind = XMLElement(
                name: "bind", namespace: XMPPNamespace.bind, children: [XMLElement(name: "resource", namespace: XMPPNamespace.bind, text: resource)])
            sessionRequired = features.child("session", namespace: XMPPNamespace.session).map { $0.child("optional") == nil } ?? false
            return [.send(Self.iq("set", id: "bind", children: [bind]))]
        }
        return [.close("the server offers no resource binding")]
    }

    /// RFC 3921's session, where a server still requires it (no `<optional/>`).
    private var sessionRequired = false

    private mutating func sasl(_ element: XMLElement) -> [Action] {
        guard phase == .authenticating else { return [.close("an unasked SASL \(element.name)")] }
        switch element.name {
        case "challenge":
            guard var client = scram, let data = Data(base64Encoded: element.text), let challenge = String(data: data, encoding: .utf8) else {
                return [.close("a SASL challenge that cannot be read")]
            }
            do {
                let response = try client.final(serverFirst: challenge)
                scram = client
                return [.send(Self.sasl("response", Data(response.utf8).base64EncodedString()))]
            } catch {
                return [.close("\(error)")]
            }
        case "success":
            if let client = scram {
                let data = Data(base64Encoded: element.text) ?? Data()
                do {
                    try client.verify(serverFinal: String(decoding: data, as: UTF8.self))
                } catch {
                    return [.close("\(error)")]
                }
            }
            scram = nil
            authenticated = true
            phase = .negotiating
            return [.openStream]
        case "failure":
            let condition = element.children.first { $0.name != "text" }?.name ?? "not-authorized"
            let text = element.child("text")?.text
            return [.refusedCredentials("the server refused XMPP_JID's password (\(condition)\(text.map { ": \($0)" } ?? ""))")]
        default:
            return []
        }
    }

    // MARK: Requests

    private mutating func iq(_ iq: XMLElement) -> [Action] {
        let id = iq[attribute: "id"] ?? ""
        let type = iq[attribute: "type"] ?? ""
        switch type {
        case "result", "error":
            if phase == .binding, id == "bind" {
                guard type == "result", let text = iq.child("bind", namespace: XMPPNamespace.bind)?.child("jid")?.text, let bound = JID(text) else {
                    return [.close("the server refused to bind the resource")]
                }
                boundJID = bound
                if sessionRequired {
                    phase = .sessioning
                    return [.send(Self.iq("set", id: "session", children: [XMLElement(name: "session", namespace: XMPPNamespace.session)]))]
                }
                return becomeReady()
            }
            if phase == .sessioning, id == "session" {
                guard type == "result" else { return [.close("the server refused the session")] }
                return becomeReady()
            }
            return [.answered(id: id, iq)]
        case "get", "set":
            guard phase == .ready else { return [] }
            // Every request is answered (RFC 6120 §8.2.3): a ping and service discovery by what
            // they ask, anything else as not offered.
            let payload = iq.children.first
            if type == "get", payload?.name == "ping", payload?.namespace == XMPPNamespace.ping {
                return [.send(Self.answer(to: iq, children: []))]
            }
            if type == "get", payload?.name == "query", payload?.namespace == XMPPNamespace.discoInfo, payload?[attribute: "node"] == nil {
                return [.send(Self.answer(to: iq, children: [Self.discoInfo]))]
            }
            return [.send(Self.refusal(of: iq))]
        default:
            return []
        }
    }

    /// What the relay is and does (XEP-0030), for a client asking.
    static let discoInfo = XMLElement(
        name: "query", namespace: XMPPNamespace.discoInfo,
        children: [XMLElement(name: "identity", namespace: XMPPNamespace.discoInfo, attributes: ["category": "client", "type": "bot", "name": "Rhea Relay"])]
            + [XMPPNamespace.discoInfo, XMPPNamespace.ping, XMPPNamespace.muc, XMPPNamespace.correction, XMPPNamespace.reply].map {
                XMLElement(name: "feature", namespace: XMPPNamespace.discoInfo, attributes: ["var": $0])
            })

    private mutating func becomeReady() -> [Action] {
        phase = .ready
        guard let bound = boundJID else { return [.close("no bound address")] }
        var actions: [Action] = [.ready(bound), .send(XMLElement(name: "presence", namespace: XMPPNamespace.client))]
        for room in rooms.keys.sorted() { actions.append(.send(join(room))) }
        return actions
    }

    // MARK: Rooms

    /// The presence that joins `room` as its current nick, asking for no history: what was said
    /// before the relay came is not its to answer.
    private func join(_ room: String) -> XMLElement {
        let nick = rooms[room]?.nick ?? configuredNick
        let history = XMLElement(name: "history", namespace: XMPPNamespace.muc, attributes: ["maxstanzas": "0"])
        return XMLElement(
            name: "presence", namespace: XMPPNamespace.client, attributes: ["to": "\(room)/\(nick)"],
            children: [XMLElement(name: "x", namespace: XMPPNamespace.muc, children: [history])])
    }

    /// The nick to try after `attempt` taken ones: `rhea_`, `rhea__`, then `rhea1`…`rhea9`.
    static func fallbackNick(_ nick: String, attempt: Int) -> String? {
        switch attempt {
        case 0: nick
        case 1: nick + "_"
        case 2: nick + "__"
        case 3...11: nick + "\(attempt - 2)"
        default: nil
        }
    }

    private mutating func presence(_ presence: XMLElement) -> [Action] {
        guard phase == .ready, let from = presence[attribute: "from"].flatMap(JID.init), let room = rooms[from.bare.description] else { return [] }
        let roomName = from.bare.description
        let statuses = Set(presence.child("x", namespace: XMPPNamespace.mucUser)?.children.compactMap { $0[attribute: "code"] } ?? [])
        switch presence[attribute: "type"] {
        case "error":
            guard from.resource == room.nick else { return [] }
            let condition = presence.child("error")?.children.first { $0.namespace == XMPPNamespace.stanzas }?.name
            if condition == "conflict", let next = Self.fallbackNick(configuredNick, attempt: room.attempt + 1) {
                rooms[roomName]?.attempt += 1
                rooms[roomName]?.nick = next
                return [.send(join(roomName))]
            }
            return [.notJoined(room: roomName, reason: condition ?? "refused")]
        case "unavailable":
            guard statuses.contains("110") || from.resource == room.nick else { return [] }
            rooms[roomName]?.joined = false
            // Kicked (307) or removed by a change of the room: joined again, once.
            if statuses.contains("307") || statuses.contains("321") || statuses.contains("322") || statuses.contains("332") {
                guard !room.rejoinedAfterKick else { return [] }
                rooms[roomName]?.rejoinedAfterKick = true
                return [.send(join(roomName))]
            }
            return []
        default:
            guard statuses.contains("110") || from.resource == room.nick else { return [] }
            // The room may have changed the nick (210): the one it says is the relay's.
            if let nick = from.resource { rooms[roomName]?.nick = nick }
            let wasJoined = room.joined
            rooms[roomName]?.joined = true
            var actions: [Action] = wasJoined ? [] : [.joined(room: roomName, nick: from.resource ?? room.nick)]
            if statuses.contains("201") {
                // The relay made the room: it stays locked to others until configured, and the
                // relay takes the defaults (an instant room, XEP-0045 §10.1.2).
                let form = XMLElement(name: "x", namespace: "jabber:x:data", attributes: ["type": "submit"])
                let query = XMLElement(name: "query", namespace: XMPPNamespace.muc + "#owner", children: [form])
                actions.append(.send(Self.iq("set", id: "instant:\(roomName)", to: roomName, children: [query])))
            }
            return actions
        }
    }

    // MARK: Elements

    static func iq(_ type: String, id: String, to: String? = nil, children: [XMLElement]) -> XMLElement {
        var attributes = ["type": type, "id": id]
        if let to { attributes["to"] = to }
        return XMLElement(name: "iq", namespace: XMPPNamespace.client, attributes: attributes, children: children)
    }

    static func ping(id: String, to: String) -> XMLElement {
        iq("get", id: id, to: to, children: [XMLElement(name: "ping", namespace: XMPPNamespace.ping)])
    }

    static func answer(to request: XMLElement, children: [XMLElement]) -> XMLElement {
        var attributes = ["type": "result", "id": request[attribute: "id"] ?? ""]
        if let from = request[attribute: "from"] { attributes["to"] = from }
        return XMLElement(name: "iq", namespace: XMPPNamespace.client, attributes: attributes, children: children)
    }

    /// `service-unavailable`: what a client says to a request it does not handle.
    static func refusal(of request: XMLElement) -> XMLElement {
        var attributes = ["type": "error", "id": request[attribute: "id"] ?? ""]
        if let from = request[attribute: "from"] { attributes["to"] = from }
        let error = XMLElement(
            name: "error", namespace: XMPPNamespace.client, attributes: ["type": "cancel"],
            children: [XMLElement(name: "service-unavailable", namespace: XMPPNamespace.stanzas)])
        return XMLElement(name: "iq", namespace: XMPPNamespace.client, attributes: attributes, children: [error])
    }

    private static func sasl(_ name: String, _ payload: String, mechanism: String? = nil) -> XMLElement {
        XMLElement(name: name, namespace: XMPPNamespace.sasl, attributes: mechanism.map { ["mechanism": $0] } ?? [:], text: payload.isEmpty ? "=" : payload)
    }
}
