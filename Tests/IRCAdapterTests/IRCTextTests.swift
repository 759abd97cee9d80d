import Testing

@testable import IRCAdapter

/// What reaches an IRC line (issue 43, point 3): within 512 bytes as the server relays it, cut
/// between characters, with no formatting, CTCP or second command a model could slip in.
@Suite("IRC: lines as the server takes them")
struct IRCTextTests {
    @Test func formattingCTCPAndLineBreaksAreRemoved() {
        let hostile = "\u{02}bold\u{02} \u{03}04,12red\u{03} \u{04}FF00FFhex \u{1D}it\u{1F}\u{1E}\u{11}\u{16}\u{0F}end\u{01}ACTION x\u{01}\r\nQUIT :bye\0!"
        let cleaned = IRCText.cleaned(Substring(hostile))
        #expect(cleaned == "bold red hex itendACTION xQUIT :bye!")
        #expect(!cleaned.unicodeScalars.contains { $0.value < 0x20 })
    }

    @Test func longTextIsCutWithinTheByteLimitAtSpacesAndNeverInsideACharacter() {
        let text = String(repeating: "word ", count: 200) + String(repeating: "é", count: 500) + " " + String(repeating: "👩‍👩‍👧‍👦", count: 40)
        let lines = IRCText.lines(text, limit: 100)
        #expect(lines.allSatisfy { $0.utf8.count <= 100 }, "\(lines.map(\.utf8.count))")
        #expect(lines.joined(separator: " ").filter { $0 != " " } == text.filter { $0 != " " }, "nothing lost or doubled")
        #expect(lines.prefix(5).allSatisfy { !$0.hasSuffix(" ") && !$0.hasPrefix(" ") && $0.hasSuffix("word") })
        // A single character longer than the limit goes between its scalars.
        let zalgo = "a" + String(repeating: "\u{0301}", count: 300)
        let cut = IRCText.lines(zalgo, limit: 50)
        #expect(cut.allSatisfy { $0.utf8.count <= 50 } && cut.joined().unicodeScalars.count == zalgo.unicodeScalars.count)
    }

    @Test func membersNicksAreNotHighlighted() {
        let shown = IRCText.withoutHighlights("ada, Bob[1] and carol: ask ADA or bobby", nicks: ["Ada", "bob{1}", "Carol", "x"])
        #expect(shown == "a\u{200B}da, B\u{200B}ob[1] and c\u{200B}arol: ask A\u{200B}DA or bobby")
        // Inside a word too, and overlapping: no run of characters spells the nick.
        #expect(IRCText.withoutHighlights("xadamx aaa", nicks: ["ada", "aa"]) == "xa\u{200B}damx a\u{200B}a\u{200B}a")
    }

    @Test func messagesParseAndPrint() throws {
        let message = try #require(IRCMessage(line: "@time=x :ada!~a@host PRIVMSG #rhea :!translate fr hi there"))
        #expect(message.nick == "ada" && message.command == "PRIVMSG" && message.parameters == ["#rhea", "!translate fr hi there"])
        #expect(IRCMessage(line: "PING :irc.local")?.parameters == ["irc.local"])
        #expect(IRCMessage(line: ":irc.local 001 Rhea :Welcome")?.nick == nil)
        #expect(IRCMessage("PRIVMSG", ["#a", "hi"]).line == "PRIVMSG #a hi")
        #expect(IRCMessage("PRIVMSG", ["#a", ":)"]).line == "PRIVMSG #a ::)")
        #expect(IRCMessage("PRIVMSG", ["#a", "two words"]).line == "PRIVMSG #a :two words")
    }
}
