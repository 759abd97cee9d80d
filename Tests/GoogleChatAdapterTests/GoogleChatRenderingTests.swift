import Foundation
import RelayCore
import RelayTestSupport
import Testing

@testable import GoogleChatAdapter

@Suite("Google Chat: rendering and the commands file")
struct GoogleChatRenderingTests {
    @Test func aResultIsACardWithItsFooterAndButtons() throws {
        let footer = AgreementFooter(
            ConsensusResult(
                answer: "Yes", verdict: .true, agreement: 1, answered: 3, asked: 3, dissent: [], elapsed: .seconds(2)))
        let reply = Reply(
            kind: .result, title: "Tribunal <users/all>", body: "Line one & <b>two</b>\nLine three", footer: footer,
            actions: [.runAgain(commandLine: "/tribunal The sky is blue")])
        let messages = GoogleChatRenderer.render(reply, entryID: "e1")
        #expect(messages.count == 1)
        guard case .card(_, let card, let fallback) = try #require(messages.first) else {
            Issue.record("not a card")
            return
        }
        #expect(card["header"]?["title"]?.stringValue == "Tribunal <users/all>", "a card's header is plain text and pings no one")
        #expect(!fallback.contains("<users/"), "the notification's text cannot ping")
        let shown = FakeGoogleChatMessage.seen(messages[0].body())
        #expect(shown.contains("Line one & <b>two</b>\nLine three"))
        #expect(shown.contains("Agreement 100%"))
        let raw = FakeGoogleChatMessage.raw(messages[0].body())
        #expect(raw.contains("Line one &amp; &lt;b&gt;two&lt;/b&gt;<br>Line three"))
        let button = card["sections"]?.arrayValue?.last?["widgets"]?.arrayValue?.first?["buttonList"]?["buttons"]?.arrayValue?.first
        #expect(button?["text"]?.stringValue == "Run again")
        #expect(button?["onClick"]?["action"]?["function"]?.stringValue == GoogleChatInbound.runAgainFunction)
        #expect(button?["onClick"]?["action"]?["parameters"] == [["key": "line", "value": "/tribunal The sky is blue"]])
    }

    @Test func textIsTextAndALongReplyIsCutIntoMessagesThatFit() {
        let long = Reply(kind: .info, body: String(repeating: "word ", count: 12_000), isPrivate: false)
        let messages = GoogleChatRenderer.render(long, entryID: "e")
        #expect(messages.count > 1)
        for message in messages {
            guard case .text(let text) = message else {
                Issue.record("not text")
                continue
            }
            #expect(text.utf8.count <= GoogleChatLimits.messageBytes)
        }
        let error = GoogleChatRenderer.render(Reply(kind: .error, body: "No such command <users/all>", isPrivate: true), entryID: "e")
        #expect(error == [.text("⚠️ No such command <\u{2060}users/all>")])
    }

    /// `bots/google-chat/commands.md` is what the relay declares; every name is a built-in.
    @Test func theCommandsFileMatchesTheTable() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let file = try String(contentsOf: root.appendingPathComponent("bots/google-chat/commands.md"), encoding: .utf8)
        #expect(
            file == GoogleChatCommands.fileContents(), "run: swift test --filter theCommandsFileMatchesTheTable, then copy GoogleChatCommands.fileContents()")
        for name in GoogleChatCommands.names { #expect(CommandTable.spec(named: name) != nil, "\(name)") }
        #expect(GoogleChatCommands.name(id: "1") == "translate")
        #expect(GoogleChatCommands.name(id: "0") == nil)
        #expect(GoogleChatCommands.name(id: "9999") == nil)
    }

    @Test func configurationNamesWhatIsWrong() throws {
        #expect(GoogleChatAudience("314159265358") == .projectNumber("314159265358"))
        #expect(GoogleChatAudience("https://relay.example.com/google-chat/events") == .endpointURL("https://relay.example.com/google-chat/events"))
        #expect(GoogleChatAudience("http://relay.example.com/x") == nil)
        #expect(GoogleChatAudience("my-project") == nil)
        #expect(throws: (any Error).self) { try GoogleServiceAccount(json: "{}", variable: "GOOGLE_CHAT_SERVICE_ACCOUNT") }
        #expect(throws: (any Error).self) {
            try GoogleServiceAccount(
                json:
                    #"{"type":"service_account","client_email":"a@b","private_key_id":"k","private_key":"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"}"#,
                variable: "GOOGLE_CHAT_SERVICE_ACCOUNT")
        }
        let account = try GoogleServiceAccount(json: GoogleServiceAccount.madeUpExample(), variable: "x")
        #expect("\(account)".contains("PRIVATE") == false)
    }
}
