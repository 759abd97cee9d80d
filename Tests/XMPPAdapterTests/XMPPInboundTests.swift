import Foundation
import Testing

@testable import XMPPAdapter

/// What the relay takes as a command on XMPP (issue 43, point 6): `!word` or its room nick in a
/// room, anything one to one; never history, its own messages, corrections, errors or bodiless
/// messages.
@Suite("XMPP: what is a command")
struct XMPPInboundTests {
    static let room = "team@conference.localhost"

    static func message(_ xml: String) throws -> XMLElement {
        var parser = XMLStreamParser()
        let events = try parser.feed(
            Array(("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0'>" + xml).utf8))
        guard case .stanza(let element) = events.last else { throw XMLStreamParser.Malformed(reason: "no stanza") }
        return element
    }

    static func command(_ xml: String) throws -> XMPPInbound.Command? {
        XMPPInbound.command(
            in: try message(xml), me: JID("rhea@localhost/rhea-relay"), nick: { $0 == room ? "rhea" : nil }, roomCorrections: true)
    }

    static func inRoom(_ body: String, from nick: String = "ada", extra: String = "") -> String {
        "<message from='\(room)/\(nick)' type='groupchat' id='m1'><body>\(body)</body>\(extra)</message>"
    }

    @Test func inARoomTheRelaysWordsAndItsNickAreCommands() throws {
        let bang = try #require(try Self.command(Self.inRoom("!translate fr Good morning")))
        #expect(bang.line == "/translate fr Good morning")
        #expect(bang.address == XMPPAddress(room: Self.room, from: "\(Self.room)/ada", nick: "ada", replyTo: "m1", corrections: true))
        #expect(bang.key == "\(Self.room)/ada|m1")
        #expect(try Self.command(Self.inRoom("rhea: fix teh cat"))?.line == "/fix teh cat")
        #expect(try Self.command(Self.inRoom("Rhea, translate fr hi"))?.line == "/translate fr hi")
        #expect(try Self.command(Self.inRoom("rhea: the Moon is cheese"))?.line == "/tribunal the Moon is cheese")
        #expect(try Self.command(Self.inRoom("rhea"))?.line == "/help")
        // The room's own id is what a reply names.
        let withID = try Self.command(Self.inRoom("!ai hi", extra: "<stanza-id xmlns='urn:xmpp:sid:0' by='\(Self.room)' id='S1'/>"))
        #expect(withID?.address.replyTo == "S1")
    }

    @Test func inARoomOtherTalkHistoryAndTheRelayItselfAreNot() throws {
        #expect(try Self.command(Self.inRoom("!weather in Paris")) == nil, "another bot's word")
        #expect(try Self.command(Self.inRoom("rheanna: hi")) == nil)
        #expect(try Self.command(Self.inRoom("good morning all")) == nil)
        #expect(try Self.command(Self.inRoom("!translate fr hi", from: "rhea")) == nil, "its own message")
        #expect(try Self.command(Self.inRoom("!translate fr hi", extra: "<delay xmlns='urn:xmpp:delay' stamp='2026-12-01T10:00:00Z'/>")) == nil)
        #expect(try Self.command(Self.inRoom("!translate fr hi", extra: "<replace xmlns='urn:xmpp:message-correct:0' id='m0'/>")) == nil)
        #expect(try Self.command("<message from='other@conference.localhost/ada' type='groupchat'><body>!translate fr hi</body></message>") == nil)
        #expect(try Self.command("<message from='\(Self.room)/ada' type='groupchat'><active xmlns='http://jabber.org/protocol/chatstates'/></message>") == nil)
    }

    @Test func oneToOneAnythingIsACommand() throws {
        let plain = try #require(try Self.command("<message from='ada@localhost/phone' type='chat' id='c1'><body>translate fr Good night</body></message>"))
        #expect(plain.line == "/translate fr Good night")
        #expect(plain.address.room == nil && plain.address.from == "ada@localhost/phone" && plain.address.nick == "ada")
        #expect(plain.address.team == "dm:ada@localhost")
        #expect(try Self.command("<message from='ada@localhost/phone'><body>!fix teh cat</body></message>")?.line == "/fix teh cat")
        #expect(try Self.command("<message from='ada@localhost/phone' type='chat'><body>/fix teh cat</body></message>")?.line == "/fix teh cat")
        #expect(try Self.command("<message from='ada@localhost/phone' type='chat'><body>is water wet</body></message>")?.line == "/tribunal is water wet")
        // A room's private message: to the occupant.
        let whisper = try Self.command("<message from='\(Self.room)/bob' type='chat'><body>translate fr hi</body></message>")
        #expect(whisper?.address.room == nil && whisper?.address.from == "\(Self.room)/bob" && whisper?.address.nick == "bob")
        // Never: errors, its own account (carbons), empty bodies.
        #expect(try Self.command("<message from='ada@localhost/phone' type='error'><body>translate fr hi</body></message>") == nil)
        #expect(try Self.command("<message from='rhea@localhost/other' type='chat'><body>translate fr hi</body></message>") == nil)
        #expect(try Self.command("<message from='ada@localhost/phone' type='chat'><body>   </body></message>") == nil)
    }
}
