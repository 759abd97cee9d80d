import RelayCore
import Testing

@testable import MatrixAdapter

/// Matrix words are Matrix words (issue 47, point 7): the relay's help, errors and progress name
/// commands as a room types them, `!translate`; a Matrix client would take `/translate` as its
/// own command and never send it.
@Suite("Matrix: the relay's words name ! commands")
struct MatrixCommandWordsTests {
    @Test func helpErrorsAndProgressSayBangCommands() {
        let error = Reply.error("`/translate` needs text: add it after the command (`/translate fr Good morning`) or reply to a message with `/translate`.")
        let shown = MatrixRenderer.render(error).map(\.body).joined(separator: "\n")
        #expect(shown.contains("`!translate fr Good morning`"), "\(shown)")
        #expect(!shown.contains("/translate"), "\(shown)")
        let help = Reply(kind: .info, title: "Commands", body: "/help — this list\n/run NAME TEXT — a saved chain", notes: ["Try /tribunal The sky is blue"])
        let helpShown = MatrixRenderer.render(help).map(\.body).joined(separator: "\n")
        #expect(helpShown.contains("!help — this list") && helpShown.contains("!run NAME TEXT") && helpShown.contains("Try !tribunal"), "\(helpShown)")
        let progress = MatrixRenderer.render(RunProgress.started("/summarize"))
        #expect(progress.body.contains("!summarize") && !progress.body.contains("/summarize"), "\(progress.body)")
    }

    @Test func aModelsAnswerAndWebAddressesAreLeftAlone() {
        let answer = Reply(kind: .result, body: "Type /translate in Slack; see https://example.com/docs/help and a/b.")
        let shown = MatrixRenderer.render(answer).map(\.body).joined(separator: "\n")
        #expect(shown.contains("Type /translate in Slack"), "a model's words are its own: \(shown)")
        let info = Reply(kind: .info, body: "Read https://example.com/docs/help, or a/b, or /help.")
        let infoShown = MatrixRenderer.render(info).map(\.body).joined(separator: "\n")
        #expect(infoShown.contains("https://example.com/docs/help") && infoShown.contains("a/b") && infoShown.contains("or !help."), "\(infoShown)")
    }
}
