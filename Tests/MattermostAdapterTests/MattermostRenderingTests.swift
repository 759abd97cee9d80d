import MattermostAdapter
import RelayCore
import Testing

@Suite("Mattermost rendering")
struct MattermostRenderingTests {
    @Test func massMentionsAreNeutralised() {
        let shown = MattermostMarkdown.escape("hi @channel and @all")
        #expect(!shown.contains("@channel"))
        #expect(MattermostMarkdown.unescape(shown) == "hi @channel and @all")
    }
}
