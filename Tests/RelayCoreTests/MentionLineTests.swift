import RelayCore
import Testing

/// The words after a mention of the bot, as Mattermost, Telegram and Teams read them
/// (`CommandTable.lineAfterMention`): a built-in runs, a `/word` is the command meant (so a typo
/// is answered with "did you mean", and a team's custom command runs), other words are a claim.
@Suite("The words after a mention")
struct MentionLineTests {
    @Test(arguments: [
        ("translate fr hi", "/translate fr hi"),
        ("Translate fr hi", "/Translate fr hi"),
        ("/translate fr hi", "/translate fr hi"),
        ("/transalte fr hi", "/transalte fr hi"),
        ("/eli5 gravity", "/eli5 gravity"),
        ("transalte fr hi", "/tribunal transalte fr hi"),
        ("The Moon is made of cheese", "/tribunal The Moon is made of cheese"),
        ("/ alone", "/tribunal / alone"),
    ])
    func wordsAfterAMention(rest: String, line: String) {
        #expect(CommandTable.lineAfterMention(rest) == line)
    }

    /// A `/word` the relay does not know is answered with the command it likely meant.
    @Test func aTypoAfterASlashIsAnsweredWithDidYouMean() {
        guard case .failure(let error) = CommandParser.read(CommandTable.lineAfterMention("/transalte fr hi")).resolved(customCommands: []) else {
            Issue.record("parsed")
            return
        }
        #expect(error.message.contains("Did you mean `/translate`?"))
    }
}
