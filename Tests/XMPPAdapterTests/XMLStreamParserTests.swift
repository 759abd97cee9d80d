import RelayCore
import RelayTestSupport
import Testing

@testable import XMPPAdapter

/// XMPP's stream read as it arrives (issue 43, point 7): stanzas whole however the bytes are cut,
/// namespaces resolved, and anything XMPP forbids, or too big, refused without growing a buffer.
@Suite("XMPP: the XML stream, read incrementally")
struct XMLStreamParserTests {
    static let opening =
        "<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' id='s1' from='localhost' version='1.0' xml:lang='en'>"
    static let message =
        "<message from='ada@localhost/pc' to='rhea@localhost' type='chat' id='m&amp;1'><body>!translate fr &lt;hi&gt; &#x1F600; caf&#233;</body><active xmlns='http://jabber.org/protocol/chatstates'/></message>"

    @Test func stanzasComeWholeHoweverTheBytesAreCut() throws {
        let stream = Array((Self.opening + Self.message + " \n<presence/>" + "</stream:stream>").utf8)
        // Every cut of the stream into two pieces, and byte by byte.
        for cut in [1, 7, 50, 180, 200, 260, stream.count - 3] + Array(stride(from: 0, to: stream.count, by: 37)) {
            var parser = XMLStreamParser()
            let events = try parser.feed(stream[..<cut]) + parser.feed(stream[cut...])
            #expect(events.count == 4, "cut at \(cut): \(events)")
        }
        var parser = XMLStreamParser()
        var events: [XMLStreamParser.Event] = []
        for byte in stream { events += try parser.feed([byte]) }
        guard case .streamOpened(let stream) = events.first, case .stanza(let message) = events[1], case .stanza(let presence) = events[2] else {
            Issue.record("\(events)")
            return
        }
        #expect(stream.attributes["id"] == "s1" && stream.attributes["xml:lang"] == "en")
        #expect(message.name == "message" && message.namespace == "jabber:client" && message[attribute: "id"] == "m&1")
        #expect(message.child("body")?.text == "!translate fr <hi> 😀 café")
        #expect(message.child("active")?.namespace == "http://jabber.org/protocol/chatstates")
        #expect(presence.name == "presence" && presence.namespace == "jabber:client")
        #expect(events.last == .streamClosed)
    }

    @Test(arguments: [
        ("<!-- a comment -->", "a comment"), ("<?php x?>", "a processing instruction"), ("<!DOCTYPE x>", "a DTD"),
        ("<message><body>&bomb;</body></message>", "the entity &bomb;"), ("<message><body>&#0;</body></message>", "character reference"),
        ("<message><body>a</bodyx></message>", "closing"), ("<x:message/>", "undeclared prefix"), ("loose text", "outside a stanza"),
        ("<message a='1' a='2'/>", "twice"), ("<message a=1/>", "without quotes"),
    ])
    func whatXMPPForbidsIsRefused(xml: String, says: String) throws {
        var parser = XMLStreamParser()
        _ = try parser.feed(Array(Self.opening.utf8))
        let error = #expect(throws: XMLStreamParser.Malformed.self) { _ = try parser.feed(Array(xml.utf8)) }
        #expect(error?.reason.contains(says) == true, "\(error?.reason ?? "")")
    }

    @Test func anOversizedOrEndlessStanzaOrDeepNestingIsRefusedWithinItsBound() throws {
        var parser = XMLStreamParser()
        _ = try parser.feed(Array(Self.opening.utf8))
        _ = try parser.feed(Array("<message><body>".utf8))
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 64 * 1024)
        var refused = false
        for _ in 0..<8 {
            do { _ = try parser.feed(chunk) } catch {
                refused = true
                break
            }
        }
        #expect(refused, "a body past 256 KB")
        var deep = XMLStreamParser()
        _ = try deep.feed(Array(Self.opening.utf8))
        let error = #expect(throws: XMLStreamParser.Malformed.self) { _ = try deep.feed(Array(String(repeating: "<a>", count: 100).utf8)) }
        #expect(error?.reason.contains("deeper") == true)
        var endless = XMLStreamParser()
        _ = try endless.feed(Array(Self.opening.utf8))
        #expect(throws: XMLStreamParser.Malformed.self) {
            for _ in 0..<8 { _ = try endless.feed(Array(("<message to='" + String(repeating: "x", count: 64 * 1024)).utf8)) }
        }
    }
}

extension XMLStreamParserTests {
    /// Whatever a server sends — pieces of XML in any order, cut anywhere — the parser returns
    /// events or a `Malformed`, never traps, and holds no more than its bound.
    @Test func hostileStreamsEndCleanly() throws {
        let alphabet = [
            "<", ">", "/", "='", "'", "\"", "&", "&amp;", "&#x0;", "&#xD800;", "&lt;", ";", "<![CDATA[", "]]>", "<!--", "-->", "<?", "?>", "<message>",
            "</message>", "<body>", "</body>", "<a xmlns='x'>", "</a>", "<p:q>", "xmlns:p='u'", " ", "\n", "é", "😀", "\u{0}", "</stream:stream>",
            "<presence/>", "text",
        ]
        var random = SplitMix64(seed: 0x5EED_0043)
        for _ in 0..<20_000 {
            var parser = XMLStreamParser()
            _ = try parser.feed(Array(Self.opening.utf8))
            var bytes: [UInt8] = []
            for _ in 0..<(1 + random.below(30)) { bytes += Array(alphabet[random.below(alphabet.count)].utf8) }
            // Invalid UTF-8 too.
            if random.below(10) == 0 { bytes.insert(0xFF, at: random.below(bytes.count + 1)) }
            var cursor = 0
            do {
                while cursor < bytes.count {
                    let next = min(bytes.count, cursor + 1 + random.below(8))
                    _ = try parser.feed(bytes[cursor..<next])
                    cursor = next
                }
            } catch {
                continue
            }
        }
    }

    /// Found by the hostile-text property test: a combining mark after `&gt;` (or after an
    /// attribute's opening quote) joins it into one grapheme, and a reader by `Character` saw no
    /// `;` (no quote) and ended the session — anyone could have cut the relay off with one
    /// message. Read by scalars, it is text like any other.
    @Test func aCombiningMarkAfterAnEntityOrAQuoteIsText() throws {
        var parser = XMLStreamParser()
        let xml = Self.opening + "<message id='\u{301}x' from='ada@localhost/pc' type='chat'><body>a &gt;\u{301} &lt;\u{301}b &amp;\u{20DD}</body></message>"
        let events = try parser.feed(Array(xml.utf8))
        guard case .stanza(let message) = events.last else {
            Issue.record("\(events)")
            return
        }
        #expect(message.child("body")?.text == "a >\u{301} <\u{301}b &\u{20DD}")
        #expect(message[attribute: "id"] == "\u{301}x")
    }
}
