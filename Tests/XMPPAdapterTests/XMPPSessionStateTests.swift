import Foundation
import Testing

@testable import XMPPAdapter

/// One session's protocol as transcripts (issue 43, point 5): what the relay answers to each
/// thing a server says, from the stream's opening to the rooms joined — no socket.
@Suite("XMPP: the session, as transcripts")
struct XMPPSessionStateTests {
    static let opening =
        "<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' id='s1' from='localhost' version='1.0'>"

    /// A session fed `xml` after a fresh stream's opening; the actions, in order.
    struct Transcript {
        var state: XMPPSessionState
        var parser = XMLStreamParser()

        init(secured: Bool = false, loopback: Bool = false, rooms: [String] = ["team@conference.localhost"]) {
            state = XMPPSessionState(
                jid: JID("rhea@localhost")!, password: "pencil", nick: "rhea", rooms: rooms, secured: secured, loopback: loopback)
        }

        mutating func server(_ xml: String, opening: Bool = false) throws -> [XMPPSessionState.Action] {
            if opening { parser = XMLStreamParser() }
            let events = try parser.feed(Array(((opening ? XMPPSessionStateTests.opening : "") + xml).utf8))
            return events.flatMap { state.receive($0) }
        }

        /// The elements sent, as XML.
        static func sent(_ actions: [XMPPSessionState.Action]) -> [String] {
            actions.compactMap { if case .send(let element) = $0 { element.xml } else { nil } }
        }
    }

    static let features = "<stream:features><starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'><required/></starttls></stream:features>"
    static func mechanisms(_ names: [String]) -> String {
        "<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>" + names.map { "<mechanism>\($0)</mechanism>" }.joined()
            + "</mechanisms></stream:features>"
    }

    @Test func startTLSThenSCRAMSHA256ThenBindThenPresenceAndTheRooms() throws {
        var session = Transcript()
        #expect(Transcript.sent(try session.server(Self.features, opening: true)) == ["<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>"])
        #expect(try session.server("<proceed xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>") == [.startTLS])
        let auth = Transcript.sent(try session.server(Self.mechanisms(["SCRAM-SHA-1", "SCRAM-SHA-256", "PLAIN"]), opening: true))
        #expect(auth.count == 1 && auth[0].contains("mechanism='SCRAM-SHA-256'"), "\(auth)")
        // The server's challenge cannot be checked without its nonce: a failure ends it here.
        let refused = try session.server(
            "<failure xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><not-authorized/><text>Unable to authorize you</text></failure>")
        #expect(refused == [.refusedCredentials("the server refused XMPP_JID's password (not-authorized: Unable to authorize you)")])
    }

    @Test func afterAuthenticationItBindsJoinsAndAnswersPingsAndDiscovery() throws {
        var session = Transcript(secured: true, loopback: true)
        let auth = Transcript.sent(try session.server(Self.mechanisms(["PLAIN"]), opening: true))
        #expect(auth == ["<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'>\(Data("\0rhea\0pencil".utf8).base64EncodedString())</auth>"])
        #expect(try session.server("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>") == [.openStream])
        let bind = Transcript.sent(try session.server("<stream:features><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/></stream:features>", opening: true))
        #expect(
            bind == ["<iq id='bind' type='set'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><resource>rhea-relay</resource></bind></iq>"])
        let ready = try session.server(
            "<iq type='result' id='bind'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><jid>rhea@localhost/rhea-relay</jid></bind></iq>")
        #expect(ready.first == .ready(JID("rhea@localhost/rhea-relay")!))
        #expect(
            Transcript.sent(ready) == [
                "<presence/>",
                "<presence to='team@conference.localhost/rhea'><x xmlns='http://jabber.org/protocol/muc'><history maxstanzas='0'/></x></presence>",
            ])
        // The nick is taken: the next one, then the room says the relay is in.
        let conflict = try session.server(
            "<presence from='team@conference.localhost/rhea' type='error'><error type='cancel'><conflict xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></presence>"
        )
        #expect(Transcript.sent(conflict).first?.contains("to='team@conference.localhost/rhea_'") == true, "\(conflict)")
        let joined = try session.server(
            "<presence from='team@conference.localhost/rhea_'><x xmlns='http://jabber.org/protocol/muc#user'><status code='110'/><status code='201'/></x></presence>"
        )
        #expect(joined.first == .joined(room: "team@conference.localhost", nick: "rhea_"))
        #expect(Transcript.sent(joined).first?.contains("http://jabber.org/protocol/muc#owner") == true, "a room it made is opened: \(joined)")
        // Kicked: joined again, once.
        let kick =
            "<presence from='team@conference.localhost/rhea_' type='unavailable'><x xmlns='http://jabber.org/protocol/muc#user'><status code='307'/><status code='110'/></x></presence>"
        #expect(Transcript.sent(try session.server(kick)).count == 1)
        _ = try session.server(
            "<presence from='team@conference.localhost/rhea_'><x xmlns='http://jabber.org/protocol/muc#user'><status code='110'/></x></presence>")
        #expect(Transcript.sent(try session.server(kick)).isEmpty)
        // A ping, service discovery, and any other request are answered.
        #expect(
            Transcript.sent(try session.server("<iq type='get' id='p1' from='localhost'><ping xmlns='urn:xmpp:ping'/></iq>")) == [
                "<iq id='p1' to='localhost' type='result'/>"
            ])
        let disco = Transcript.sent(
            try session.server("<iq type='get' id='d1' from='ada@localhost/pc'><query xmlns='http://jabber.org/protocol/disco#info'/></iq>"))
        #expect(disco.first?.contains("urn:xmpp:ping") == true && disco.first?.contains("type='bot'") == true, "\(disco)")
        let other = Transcript.sent(try session.server("<iq type='set' id='x1' from='ada@localhost/pc'><query xmlns='jabber:iq:version'/></iq>"))
        #expect(other.first?.contains("service-unavailable") == true && other.first?.contains("type='error'") == true, "\(other)")
        // A confirmation's answer, and a message.
        #expect(
            try session.server("<iq type='result' id='rhea-7' from='localhost'/>").first
                == .answered(
                    id: "rhea-7", XMLElement(name: "iq", namespace: "jabber:client", attributes: ["type": "result", "id": "rhea-7", "from": "localhost"])))
        let message = try session.server("<message from='ada@localhost/pc' type='chat'><body>hi</body></message>")
        guard case .message(let element) = message.first else {
            Issue.record("\(message)")
            return
        }
        #expect(element.child("body")?.text == "hi")
    }

    @Test func whatCannotBeSafeEndsTheSession() throws {
        // No TLS offered by a server across a network: never signed in over plain text.
        var plain = Transcript()
        let noTLS = try plain.server(Self.mechanisms(["SCRAM-SHA-1"]), opening: true)
        #expect(noTLS.count == 1 && "\(noTLS)".contains("offers no TLS"), "\(noTLS)")
        // Only PLAIN, across a network: refused (over TLS too).
        var onlyPlain = Transcript(secured: true)
        let plainOnly = try onlyPlain.server(Self.mechanisms(["PLAIN"]), opening: true)
        #expect("\(plainOnly)".contains("neither SCRAM-SHA-256 nor SCRAM-SHA-1"), "\(plainOnly)")
        // SCRAM-SHA-1 when SHA-256 is not offered.
        var sha1 = Transcript(secured: true)
        #expect(Transcript.sent(try sha1.server(Self.mechanisms(["SCRAM-SHA-1"]), opening: true)).first?.contains("SCRAM-SHA-1") == true)
        // A stream error ends it, naming the condition.
        var errored = Transcript(secured: true)
        let error = try errored.server(
            "<stream:error><conflict xmlns='urn:ietf:params:xml:ns:xmpp-streams'/><text xmlns='urn:ietf:params:xml:ns:xmpp-streams'>Replaced by new connection</text></stream:error>",
            opening: true)
        #expect(error == [.close("the server ended the stream: conflict (Replaced by new connection)")])
    }
}
