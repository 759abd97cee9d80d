import Foundation
import MattermostAdapter
import RelayCore
import Testing

@Suite("Mattermost rendering and inbound text")
struct MattermostRenderingTests {
    @Test func massMentionsAreNeutralisedButAddressesStay() {
        let shown = MattermostMarkdown.escape("hi @channel, @all and @here; mail ada@example.com or see https://example.com/a_b#c.")
        #expect(!shown.contains("@channel") && !shown.contains("@all") && !shown.contains("@here"))
        #expect(shown.contains("ada@example.com"))
        #expect(shown.contains("https://example.com/a_b#c."), "\(shown)")
        #expect(MattermostMarkdown.unescape(shown) == "hi @channel, @all and @here; mail ada@example.com or see https://example.com/a_b#c.")
    }

    @Test func slackStyleLinksAndHTMLBecomeText() {
        let shown = MattermostMarkdown.escape("<!channel> <https://evil.example|your bank> [bank](https://evil.example)")
        #expect(!shown.contains("<") && !shown.contains(">"))
        #expect(shown.contains("\\[bank\\]"))
    }

    @Test func aLongAnswerIsSplitAt16383Runes() {
        let body = String(repeating: "word ", count: 8000)  // 40 000 runes
        let posts = MattermostRenderer.render(Reply(kind: .result, title: "Long", body: body))
        #expect(posts.count == 3)
        #expect(posts.allSatisfy { $0.unicodeScalars.count <= MattermostLimits.postRunes })
        #expect(posts[0].hasPrefix("**Long**\n"))
        #expect(posts.joined().filter { $0 == "w" }.count == 8000)
    }

    @Test func theFactCheckNumberReadsBackFromTheRenderedFooter() {
        var footer = AgreementFooter(ConsensusResult(answer: "No", verdict: .false, agreement: 1, answered: 3, asked: 3, dissent: [], elapsed: .seconds(2)))
        footer.ledgerID = 12
        let post = MattermostRenderer.render(Reply(kind: .result, body: "No", footer: footer)).joined()
        #expect(LedgerReference.id(in: MattermostMarkdown.unescape(post)) == 12)
    }

    @Test func theCheckedInCommandListIsTheOneRegistered() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let url = root.appendingPathComponent("bots/mattermost/commands.json")
        if ProcessInfo.processInfo.environment["RHEA_WRITE_MATTERMOST_COMMANDS"] == "1" {
            try MattermostCommands.fileContents().write(to: url, atomically: true, encoding: .utf8)
        }
        let file = try String(contentsOf: url, encoding: .utf8)
        #expect(
            file == MattermostCommands.fileContents(),
            "bots/mattermost/commands.json differs from what register sends: RHEA_WRITE_MATTERMOST_COMMANDS=1 swift test --filter MattermostRendering")
        #expect(!MattermostCommands.triggers.contains("help") && !MattermostCommands.triggers.contains("settings"), "Mattermost's own commands")
        #expect(MattermostCommands.triggers.allSatisfy { CommandTable.spec(named: $0) != nil || $0 == "rhea" })
    }

    @Test func theWebsocketSessionAuthenticatesThenPassesEvents() {
        var session = MattermostSocketSession()
        let post = #"{"id":"p1","user_id":"u1","channel_id":"c1","root_id":"","message":"@rhea fix teh","type":""}"#
        let posted = #"{"event":"posted","data":{"channel_type":"O","team_id":"t1","post":"# + Self.jsonString(post) + #"},"seq":1}"#
        #expect(session.receive(posted) == .none, "no event before authentication")
        #expect(session.receive(#"{"event":"hello","data":{"server_version":"9"},"seq":0}"#) == .ready)
        #expect(session.receive(#"{"status":"OK","seq_reply":1}"#) == .none)
        guard case .event(.posted(let decoded, let type, let team)) = session.receive(posted) else {
            Issue.record("the posted event was not passed on")
            return
        }
        #expect(decoded.message == "@rhea fix teh" && type == "O" && team == "t1")
        // Frames that do not decode are dropped (logged and counted by the client), and the
        // session goes on: a frame that is no JSON object, a post that is no JSON.
        #expect(session.receive("not json") == .dropped(PayloadProblem("Mattermost websocket frame", "not valid JSON")))
        #expect(session.receive("[1]") == .dropped(PayloadProblem("Mattermost websocket frame", "the payload is not an object")))
        #expect(
            session.receive(#"{"event":"posted","data":{"post":"{not json"},"seq":2}"#) == .dropped(PayloadProblem("Mattermost post", "not valid JSON")))
        #expect(
            session.receive(#"{"event":"posted","data":{"post":7},"seq":3}"#)
                == .dropped(PayloadProblem("Mattermost posted event", "missing field `data.post`")))
        guard case .event(.posted) = session.receive(posted) else {
            Issue.record("a good event after the dropped ones was not passed on")
            return
        }
        var refused = MattermostSocketSession()
        #expect(
            refused.receive(#"{"status":"FAIL","seq_reply":1,"error":{"id":"api.web_socket_router.not_authenticated.app_error"}}"#)
                == .refused("api.web_socket_router.not_authenticated.app_error"))
    }

    static func jsonString(_ text: String) -> String {
        String(decoding: JSONValue.string(text).encoded(), as: UTF8.self)
    }
}

/// Issue 47, point 1: an address Mattermost does not link (a host with `_`) is text, so a mention
/// in it must be broken.
@Suite("Mattermost: mentions in addresses Mattermost does not link")
struct MattermostUnlinkedAddressTests {
    @Test func aMentionInAnAddressWithAnUnderscoreHostIsBroken() {
        for text in ["hey https://a_b/@channel", "see https://x_y.example.com/@channel now"] {
            let shown = MattermostMarkdown.escape(text)
            #expect(!shown.contains("@channel"), "\(shown)")
            #expect(MattermostMarkdown.unescape(shown) == text)
        }
        // A host Mattermost links keeps its address whole.
        #expect(MattermostMarkdown.escape("see https://example.com/a_b#c") == "see https://example.com/a_b#c")
    }
}
