import Foundation
import RelayCore
import RelayTestSupport
import Testing

@testable import XMPPAdapter

/// Hostile model text on XMPP (issue 43, points 6 and 10): whatever a model writes, each message
/// the relay writes is one stanza, read back by an XML reader as exactly that message with the
/// model's text as its body's character data — no second stanza, no element of the model's, no
/// XHTML-IM — the text unchanged but for the characters XML cannot carry.
@Suite("XMPP: hostile model text")
struct XMPPOutputSafetyPropertyTests {
    static let alphabet = [
        "<", ">", "&", "'", "\"", "</body>", "</message>", "<message to='x'>", "<body>", "]]>", "<![CDATA[", "&amp;", "&lt;", "&#0;", "&#x1F600;",
        "<html xmlns='http://jabber.org/protocol/xhtml-im'>", "<!--", "-->", "<?xml", "<!DOCTYPE x>", "\u{0}", "\u{01}", "\u{0B}", "\u{1B}",
        "\u{7F}", "\u{FFFE}", "\u{FFFF}", "\r", "\n", "\t", " ", "a", "😀", "👩‍👩‍👧‍👦", "日本", "é", "\u{301}", "\u{202E}", "/", "!", "ada",
    ]

    @Test func aHundredThousandHostileStringsStayOneStanzaOfCharacterData() async throws {
        let failures = try await offThePool { Self.hundredThousandStrings() }
        #expect(failures.isEmpty, "\(failures.prefix(10).joined(separator: "\n"))")
    }

    static func hundredThousandStrings() -> [String] {
        var random = SplitMix64(seed: 0x0A3B_0001)
        var failures: [String] = []
        let address = XMPPAddress(room: "team@conference.localhost", from: "team@conference.localhost/ada", nick: "ada", replyTo: "m'1", corrections: true)
        for _ in 0..<100_000 {
            let text = random.text(from: Self.alphabet, tokens: 12)
            let stanza = XMPPDelivery.stanza(XMPPOutgoing(body: text, privately: false), address: address, id: "rr-1-0", replyMarked: true)
            var parser = XMLStreamParser()
            let stream = "<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0'>" + stanza.xml
            do {
                let events = try parser.feed(Array(stream.utf8))
                guard events.count == 2, case .stanza(let read) = events[1] else {
                    failures.append("\(events.count - 1) stanzas from \(text.debugDescription)")
                    continue
                }
                let expected = String(String.UnicodeScalarView(text.unicodeScalars.filter(XMLStreamParser.isXMLCharacter)))
                if read.name != "message" || read.children.map(\.name) != ["body", "reply"] { failures.append("elements \(read.children.map(\.name))") }
                if read.child("body")?.text != expected {
                    failures.append("body \(read.child("body")?.text.debugDescription ?? "nil") for \(text.debugDescription)")
                }
                if read[attribute: "to"] != "team@conference.localhost" { failures.append("to \(read[attribute: "to"] ?? "nil")") }
            } catch {
                failures.append("\(error) for \(text.debugDescription)")
            }
            if failures.count > 10 { break }
        }
        return failures
    }
}
