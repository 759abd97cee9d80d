import Foundation
import Hummingbird
import HummingbirdTesting
import RelayCore
import RelayTestSupport
import Testing

/// Issue 47, point 3: each platform's body cap is derived from its own limit in characters,
/// after its encoding. A command at the platform's maximum length in any script — here `a`, `é`,
/// `日` and `😀`, which take 1 to 4 bytes of UTF-8 — is accepted, in the largest encoding the
/// platform may send it (a URL-encoded form, or JSON that escapes what is not ASCII); a body one
/// byte over the derived cap is 413. (Mattermost's is tested in MattermostEndToEndTests.)
@Suite("Body caps in each platform's own units")
struct BodyCapTests {
    static let scripts = ["a", "é", "日", "😀"]

    /// Slack's message limit: 40 000 characters.
    @Test func slackCommandsAndEventsAtSlacksMaximumAreTakenInAnyScript() async throws {
        try await SlackFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                for (index, rune) in Self.scripts.enumerated() {
                    let words = String(repeating: rune, count: 40_000 - 3)
                    // A slash command: its text URL-encoded, as Slack writes the form.
                    let command = try await relay.slashCommand("/translate", text: "fr " + words, responseURL: relay.slack.makeResponseURL())
                    #expect(command.status == .ok, "\(rune): \(String(buffer: command.body).prefix(200))")
                    // A mention: the text, and the same words in its rich_text block, escaped.
                    var mention = try #require(
                        SlackFakes.mention("translate fr " + words, eventID: "Ev0CAP\(index)", ts: "1700000000.00010\(index)").objectValue)
                    var event = try #require(mention["event"]?.objectValue)
                    event["blocks"] = [
                        [
                            "type": "rich_text", "block_id": .string("b\(index)"),
                            "elements": [["type": "rich_text_section", "elements": [["type": "text", "text": .string("translate fr " + words)]]]],
                        ]
                    ]
                    mention["event"] = .object(event)
                    let body = ASCIIJSON.escaped(SlackPayloads.body(.object(mention)))
                    let posted = try await relay.post("/slack/events", body: body, contentType: "application/json")
                    #expect(posted.status == .ok, "\(rune) (\(body.utf8.count) bytes): \(String(buffer: posted.body).prefix(200))")
                }
                try await relay.settled()
            }
            // One byte over each route's cap: 413, naming it (each on a relay of its own: the
            // server closes the connection after a 413).
            for (path, cap) in [
                ("/slack/commands", 40_000 * 12 + 8 * 1024), ("/slack/events", 80_000 * 12 + 64 * 1024), ("/slack/interactive", 16_000 * 16 + 32 * 1024),
            ] {
                try await fakes.withRelay(fakes.configuration()) { relay in
                    let over = try await relay.post(
                        path, body: "text=" + String(repeating: "a", count: cap + 1 - 5), contentType: "application/x-www-form-urlencoded")
                    #expect(over.status == .contentTooLarge, "\(path)")
                    #expect(String(buffer: over.body).contains("at most \(cap) bytes"), "\(path): \(String(buffer: over.body))")
                }
            }
        }
    }

    /// Discord's: a message's content (4 000 characters with Nitro) and embeds (6 000), for the
    /// message a "Fact-check" is on and the one it replies to.
    @Test func aDiscordFactCheckOnTheLargestMessageIsTakenInAnyScript() async throws {
        try await DiscordFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                for (index, rune) in Self.scripts.enumerated() {
                    let content = String(repeating: rune, count: 4_000)
                    let embed: JSONValue = ["description": .string(String(repeating: rune, count: 6_000))]
                    let target = "14000000000000000\(index)0"
                    var interaction = try #require(
                        FakeDiscordInteractions.messageCommand(
                            "Fact-check", message: target, content: content, id: "13000000000000099\(index)", token: "cap-\(index)"
                        )
                        .objectValue)
                    var data = try #require(interaction["data"]?.objectValue)
                    var message = try #require(data["resolved"]?["messages"]?[target]?.objectValue)
                    message["embeds"] = [embed]
                    message["referenced_message"] = ["id": "1", "channel_id": "2", "content": .string(content), "embeds": [embed], "author": ["id": "3"]]
                    data["resolved"] = ["messages": [target: .object(message)]]
                    interaction["data"] = .object(data)
                    let body = ASCIIJSON.escaped(String(decoding: JSONValue.object(interaction).encoded(), as: UTF8.self))
                    let ack = try await relay.interact(body: body)
                    #expect(ack.status == .ok, "\(rune) (\(body.utf8.count) bytes): \(String(buffer: ack.body).prefix(200))")
                }
                try await relay.settled()
                let cap = 20_000 * 12 + 32 * 1024
                let over = try await relay.interact(body: "{\"type\":1,\"x\":\"" + String(repeating: "a", count: cap + 1 - 17) + "\"}")
                #expect(over.status == .contentTooLarge)
                #expect(String(buffer: over.body).contains("at most \(cap) bytes"), "\(String(buffer: over.body))")
            }
        }
    }

    /// Telegram's: a message of 4 096 characters replying to another of 4 096, with a quote of
    /// 1 024, as the Bot API escapes JSON.
    @Test func aTelegramCommandOnTheLargestMessagesIsTakenInAnyScript() async throws {
        try await TelegramFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                for (index, rune) in Self.scripts.enumerated() {
                    let update = relay.message(
                        "/translate fr " + String(repeating: rune, count: 4_096 - 14), update: 900 + index, id: 900 + index,
                        replyTo: (messageID: 800 + index, text: String(repeating: rune, count: 4_096), fromID: TelegramFakes.alice + 1, isBot: false))
                    var fields = try #require(update.objectValue)
                    var message = try #require(fields["message"]?.objectValue)
                    message["quote"] = ["text": .string(String(repeating: rune, count: 1_024)), "position": 0, "is_manual": true]
                    fields["message"] = .object(message)
                    let body = ASCIIJSON.escaped(String(decoding: JSONValue.object(fields).encoded(), as: UTF8.self))
                    let delivered = try await relay.deliver(body: body)
                    #expect(delivered.status == .ok, "\(rune) (\(body.utf8.count) bytes): \(String(buffer: delivered.body).prefix(200))")
                }
                try await relay.settled()
                let cap = (4_096 + 4_096 + 1_024) * 12 + 32 * 1024
                let over = try await relay.deliver(body: "{\"update_id\":1,\"x\":\"" + String(repeating: "a", count: cap + 1 - 22) + "\"}")
                #expect(over.status == .contentTooLarge)
                #expect(String(buffer: over.body).contains("at most \(cap) bytes"), "\(String(buffer: over.body))")
            }
        }
    }
}
