import Foundation
import Logging
import RelayCore
import RelayPipeline
import RelayTestSupport
import Testing

@testable import XMPPAdapter

/// Replies as stanzas (issue 43, point 6): the right type and recipient, marked as a reply,
/// corrections where the address allows them and nothing of the kind where it does not.
@Suite("XMPP: replies as stanzas")
struct XMPPDeliveryTests {
    let delivery = XMPPDelivery(link: XMPPLink(clock: ManualClock()), logger: Logger(label: "test"))
    static let room = XMPPAddress(room: "team@conference.localhost", from: "team@conference.localhost/ada", nick: "ada", replyTo: "m1", corrections: true)
    static let direct = XMPPAddress(room: nil, from: "ada@localhost/phone", nick: "ada", replyTo: "c1", corrections: false)

    @Test func aRoomsAnswerIsAGroupchatReplyThatStartsWithTheAskersNick() {
        let reply = Reply(
            kind: .result, title: "Translation · French", body: "[translate:fr] Good morning", notes: ["fake-mini · 0.1 s"], models: ["fake-mini"])
        let messages = delivery.render(reply, entryID: "e1", address: Self.room)
        #expect(messages == [XMPPOutgoing(body: "ada: [translate:fr] Good morning", privately: false)])
        let stanza = XMPPDelivery.stanza(messages[0], address: Self.room, id: "rr-e1-0", replyMarked: true)
        #expect(
            stanza.xml
                == "<message id='rr-e1-0' to='team@conference.localhost' type='groupchat'><body>ada: [translate:fr] Good morning</body><reply xmlns='urn:xmpp:reply:0' id='m1' to='team@conference.localhost/ada'/></message>"
        )
        #expect(delivery.answersByEditingPlaceholder(at: Self.room.route.address))
        #expect(delivery.streaming(at: Self.room.route.address) == StreamingPace(interval: .seconds(2), maxEdits: 20))
        #expect(delivery.progressRoute(address: Self.room) == .send)
    }

    @Test func aPrivateAnswerInARoomIsTheRoomsPrivateMessageToTheAsker() {
        let reply = Reply(kind: .error, title: "Unknown command", body: "Try /translate.", isPrivate: true)
        let messages = delivery.render(reply, entryID: "e2", address: Self.room)
        #expect(messages.count == 1 && messages[0].privately && !messages[0].body.hasPrefix("ada: "))
        #expect(messages[0].body.contains("!translate"), "the relay's words name `!` commands: \(messages[0].body)")
        let stanza = XMPPDelivery.stanza(messages[0], address: Self.room, id: "rr-e2-0", replyMarked: true)
        #expect(stanza[attribute: "to"] == "team@conference.localhost/ada" && stanza[attribute: "type"] == "chat")
        #expect(stanza.child("reply") == nil, "a reply marker names a room's message: not in a private chat")
    }

    @Test func oneToOneWithoutCorrectionsThereIsNoPlaceholderNoProgressNoStreaming() {
        #expect(!delivery.answersByEditingPlaceholder(at: Self.direct.route.address))
        #expect(delivery.streaming(at: Self.direct.route.address) == .none)
        #expect(delivery.progressRoute(address: Self.direct) == nil)
        let stanza = XMPPDelivery.stanza(XMPPOutgoing(body: "hi", privately: false), address: Self.direct, id: "rr-e3-0", replyMarked: true)
        #expect(stanza[attribute: "to"] == "ada@localhost/phone" && stanza[attribute: "type"] == "chat")
        #expect(stanza.child("reply", namespace: "urn:xmpp:reply:0")?[attribute: "id"] == "c1")
    }

    @Test func aLongAnswerIsSplitWithinTheMessageSizeAndKeepsEveryWord() {
        let words = (1...5_000).map { "mot\($0)<é>" }
        let reply = Reply(kind: .result, title: nil, body: words.joined(separator: " "), models: ["m"])
        let messages = delivery.render(reply, entryID: "e4", address: Self.room)
        #expect(messages.count > 3)
        for message in messages { #expect(XMLText.characterData(message.body).utf8.count <= XMPPRenderer.messageBytes + 10) }
        let shown = messages.map(\.body).joined(separator: " ").dropFirst("ada: ".count)
        #expect(shown.split(whereSeparator: \.isWhitespace).map(String.init) == words)
    }
}
