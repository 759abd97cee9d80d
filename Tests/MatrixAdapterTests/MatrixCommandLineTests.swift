import Testing

@testable import MatrixAdapter

/// Which Matrix messages are for the relay, and as what command line.
@Suite("Matrix command lines")
struct MatrixCommandLineTests {
    static let mention = MatrixMention(user: "@relay:example.org", displayName: "Rhea Relay", mentionedUsers: [], formattedBody: nil)

    static func line(_ body: String, mentioned: Bool = false, formatted: String? = nil, isReply: Bool = false) -> String? {
        var mention = Self.mention
        if mentioned { mention.mentionedUsers = ["@relay:example.org"] }
        mention.formattedBody = formatted
        return MatrixCommandLine.line(body, mention: mention, isReply: isReply)
    }

    @Test func aBangCommandOfTheRelayRunsAsTheSlashCommand() {
        #expect(Self.line("!translate fr Good morning") == "/translate fr Good morning")
        #expect(Self.line("  !tribunal The Moon is cheese ") == "/tribunal The Moon is cheese")
        #expect(Self.line("!rhea transalte fr hi") == "/rhea transalte fr hi")
    }

    @Test func aBangWordOfAnotherBotAndPlainTextAreLeftAlone() {
        #expect(Self.line("!ban @spammer:example.org") == nil)
        #expect(Self.line("translate fr hi") == nil)
        #expect(Self.line("/translate fr hi") == nil)
    }

    @Test func aMentionFollowedByACommandRunsIt() {
        #expect(Self.line("Rhea Relay: translate fr hi", mentioned: true) == "/translate fr hi")
        #expect(Self.line("Rhea Relay: !fix teh cat", mentioned: true) == "/fix teh cat")
        #expect(Self.line("relay: summarize") == "/summarize")
    }

    @Test func aMentionFollowedByWordsFactChecksThem() {
        #expect(Self.line("Rhea Relay: the Moon is cheese", mentioned: true) == "/tribunal the Moon is cheese")
        let pill = #"<a href="https://matrix.to/#/@relay:example.org">Rhea Relay</a>: water boils at 90 °C"#
        #expect(Self.line("Rhea Relay: water boils at 90 °C", formatted: pill) == "/tribunal water boils at 90 °C")
    }

    @Test func aBareMentionAsAReplyFactChecksTheRepliedMessage() {
        #expect(Self.line("Rhea Relay", mentioned: true, isReply: true) == "/tribunal")
        #expect(Self.line("Rhea Relay", mentioned: true, isReply: false) == nil)
    }

    @Test func aReplysQuotedFallbackIsNotPartOfTheCommand() {
        let body = "> <@ada:example.org> The Moon is cheese\n> second line\n\n!tribunal"
        #expect(MatrixText.withoutReplyFallback(body) == "!tribunal")
        #expect(MatrixText.withoutReplyFallback("!tribunal") == "!tribunal")
    }
}
