import SlackAdapter
import Testing

@Suite("Slack incoming text")
struct SlackIncomingTextTests {
    @Test(arguments: [
        ("<https://example.com/a?b=1&amp;c=2|the docs>", "the docs (https://example.com/a?b=1&c=2)"),
        ("<https://example.com/a>", "https://example.com/a"),
        ("<http://example.com|example.com>", "example.com"),
        ("<https://example.com/|https://example.com/>", "https://example.com/"),
        ("<mailto:ann@example.com|ann@example.com>", "ann@example.com"),
        ("<@U0AB12>", "@U0AB12"),
        ("<@U0AB12|ann>", "@ann"),
        ("<#C0AB12|general>", "#general"),
        ("<#C0AB12>", "#C0AB12"),
        ("<#C0AB12|>", "#C0AB12"),
        ("<!here>", "@here"),
        ("<!channel> and <!everyone>", "@channel and @everyone"),
        ("<!subteam^S0AB12|@devs>", "@devs"),
        ("<!subteam^S0AB12>", "@S0AB12"),
        ("<!date^1392734382^{date_short}|Feb 18, 2014>", "Feb 18, 2014"),
        ("a &lt; b &gt; c &amp; d", "a < b > c & d"),
        ("&amp;lt; stays an entity", "&lt; stays an entity"),
        ("café ☕️ 100% & friends", "café ☕️ 100% & friends"),
        ("unclosed < bracket", "unclosed < bracket"),
    ])
    func normalizesMarkup(_ input: String, _ expected: String) {
        #expect(SlackIncomingText.normalize(input) == expected)
    }

    @Test func stripsOnlyTheLeadingBotMention() {
        #expect(SlackIncomingText.normalizeMention("<@U0BOT> translate fr hi") == "translate fr hi")
        #expect(SlackIncomingText.normalizeMention("  <@U0BOT|rhea>   summarize <@U0ANN> said") == "summarize @U0ANN said")
        #expect(SlackIncomingText.normalizeMention("<@U0BOT>") == "")
        #expect(SlackIncomingText.normalizeMention("hey <@U0BOT> help") == "hey @U0BOT help")
        // With the bot known, someone else's leading mention stays.
        #expect(SlackIncomingText.normalizeMention("<@U0ANN> is right", botUserID: "U0BOT") == "@U0ANN is right")
        #expect(SlackIncomingText.normalizeMention("<@U0BOT> help", botUserID: "U0BOT") == "help")
    }
}
