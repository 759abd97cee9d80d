import DiscordAdapter
import Foundation
import Hummingbird
import HummingbirdTesting
import RelayCore
import RelayServer
import RelayTestSupport
import Testing

/// A hostile model cannot make the relay ping anyone on Discord, through the real server: the
/// model's answer is full of mass mentions, user, role and channel mentions, masked links and
/// spoilers, some glued by Unicode "Prepend" and "Extend" scalars into one grapheme cluster with
/// the `<` or `@` they hide. What the fake Discord API received is checked: every message says
/// `allowed_mentions: {"parse": []}`, and no shown text holds mention or masked-link syntax.
@Suite("Discord output safety, through the server")
struct DiscordOutputSafetyTests {
    /// What a hostile model answers with.
    static let hostile = [
        "@everyone @here <@123456789012345678> <@!123456789012345678> <@&42> <#1> [bank.com](https://evil.example) ||x|| </help:1> <t:1:R>",
        // Prepend scalars before `<` and `@`, Extend scalars after them: one cluster each.
        "\u{600}<@&42>\u{301} \u{110BD}@everyone\u{FE0F} \u{D4A}<\u{301}@123456789012345678> \u{605}@here\u{20E3} <\u{200D}#1>",
        "\u{600}[bank.com]\u{301}(https://evil.example) |\u{301}|x|\u{FE0F}| @\u{301}everyone \u{110BD}</help:1>",
    ]

    /// The routes that carry a message to a channel or an interaction.
    static let messageRoutes = [FakeDiscordAPI.editOriginal, FakeDiscordAPI.followup, FakeDiscordAPI.createMessage, FakeDiscordAPI.editMessage]

    @Test(arguments: hostile)
    func aHostileAnswerToASlashCommandCannotPing(answer: String) async throws {
        try await DiscordFakes.with { fakes in
            await fakes.tribunal.setQuickAnswer { _ in answer }
            try await fakes.withRelay(fakes.configuration()) { relay in
                let command = FakeDiscordInteractions.command(
                    "ai", options: [("prompt", "say something")], id: "1300000000000009001", token: "token-hostile-ai")
                #expect(try await relay.interact(command).json == ["type": 5])
                _ = try #require(await relay.discord.next(FakeDiscordAPI.editOriginal))
                try await relay.settled()
                let shown = try Self.checkEveryMessage(relay)
                #expect(shown.contains { $0.range(of: "everyone", options: .literal) != nil }, "the answer is shown, not dropped: \(shown)")
            }
        }
    }

    /// The claim is echoed by every model, into the consensus and the dissent fields.
    @Test func aHostileClaimEchoedByTheTribunalCannotPing() async throws {
        try await DiscordFakes.with { fakes in
            await fakes.tribunal.setDefaultAgreement(0.5)
            try await fakes.withRelay(fakes.configuration()) { relay in
                let command = FakeDiscordInteractions.command(
                    "tribunal", options: [("claim", .string(Self.hostile[0] + " " + Self.hostile[1]))], id: "1300000000000009002",
                    token: "token-hostile-tribunal")
                #expect(try await relay.interact(command).json == ["type": 5])
                let edit = try #require(await relay.discord.next(FakeDiscordAPI.editOriginal))
                try await relay.settled()
                let fields = edit["embeds"]?[0]?["fields"]?.arrayValue ?? []
                #expect(!fields.isEmpty, "a dissent field echoes the claim: \(edit.rawBody)")
                _ = try Self.checkEveryMessage(relay)
            }
        }
    }

    /// A mention over the gateway is answered with the bot token in the channel.
    @Test func aHostileAnswerToAMentionCannotPing() async throws {
        try await DiscordFakes.with { fakes in
            await fakes.tribunal.setQuickAnswer { _ in Self.hostile.joined(separator: "\n") }
            try await fakes.withRelay(fakes.configuration(gateway: true)) { relay in
                _ = try #require(await relay.gateway.next(FakeDiscordGateway.identify))
                try await relay.gateway.dispatch("MESSAGE_CREATE", FakeDiscordInteractions.mention("ai say something", id: "1500000000000009003"))
                let reply = try #require(await relay.discord.next(FakeDiscordAPI.createMessage))
                try await relay.settled()
                #expect(reply["message_reference"]?["message_id"]?.stringValue == "1500000000000009003")
                let shown = try Self.checkEveryMessage(relay)
                #expect(shown.contains { $0.contains("evil.example") }, "\(shown)")
            }
        }
    }

    /// A private answer posted to the channel with "Post to channel" is a new public message.
    @Test func aHostileAnswerPostedToTheChannelCannotPing() async throws {
        try await DiscordFakes.with { fakes in
            await fakes.tribunal.setQuickAnswer { _ in Self.hostile[2] + " " + Self.hostile[0] }
            try await fakes.withRelay(fakes.configuration()) { relay in
                let command = FakeDiscordInteractions.command(
                    "ai", options: [("prompt", "say something"), ("private", true)], id: "1300000000000009004", token: "token-hostile-private")
                _ = try await relay.interact(command)
                let result = try #require(await relay.discord.next(FakeDiscordAPI.editOriginal))
                try await relay.settled()
                let buttons = result["components"]?[0]?["components"]?.arrayValue ?? []
                let customID = try #require(buttons.compactMap { $0["custom_id"]?.stringValue }.first { $0.hasPrefix("rhea:post:") })
                let click = FakeDiscordInteractions.click(customID, id: "1300000000000009005", token: "token-hostile-post")
                #expect(try await relay.interact(click).json == ["type": 6])
                _ = try #require(await relay.discord.next(FakeDiscordAPI.followup))
                try await relay.settled()
                _ = try Self.checkEveryMessage(relay)
            }
        }
    }

    /// The check below finds what it looks for: in every hostile text as the model wrote it, in
    /// none once escaped.
    @Test(arguments: hostile)
    func theCheckCatchesRawSyntaxAndPassesEscapedText(answer: String) {
        #expect(Self.problem(in: answer) != nil)
        #expect(Self.problem(in: DiscordMarkdown.escape(answer)) == nil, "\(DiscordMarkdown.escape(answer).debugDescription)")
    }

    // MARK: Reading what Discord received

    /// Checks every message the fake Discord API received and returns the texts it shows.
    static func checkEveryMessage(_ relay: DiscordRelay, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String] {
        let messages = messageRoutes.flatMap { relay.discord.requests($0) }
        #expect(!messages.isEmpty, sourceLocation: sourceLocation)
        var shown: [String] = []
        for message in messages {
            let body = try #require(message.body, sourceLocation: sourceLocation)
            #expect(body["allowed_mentions"] == ["parse": []], "\(message.path): \(message.rawBody)", sourceLocation: sourceLocation)
            for text in markdownTexts(body) {
                if let problem = problem(in: text) {
                    Issue.record("\(problem) in \(text.debugDescription) sent to \(message.path)", sourceLocation: sourceLocation)
                }
                shown.append(text)
            }
            // Footers show no markdown (and no mention ever renders in one): still, no model
            // text reaches them unescaped.
            for footer in (body["embeds"]?.arrayValue ?? []).compactMap({ $0["footer"]?["text"]?.stringValue }) {
                #expect(!footer.unicodeScalars.contains("<") && !footer.unicodeScalars.contains("@"), "\(footer)", sourceLocation: sourceLocation)
            }
        }
        return shown
    }

    /// The texts Discord renders as markdown, with mentions: content, embed titles,
    /// descriptions, field names and values, author names.
    static func markdownTexts(_ body: JSONValue) -> [String] {
        var texts = [body["content"]?.stringValue].compactMap { $0 }
        for embed in body["embeds"]?.arrayValue ?? [] {
            texts += [embed["title"]?.stringValue, embed["description"]?.stringValue, embed["author"]?["name"]?.stringValue].compactMap { $0 }
            for field in embed["fields"]?.arrayValue ?? [] {
                texts += [field["name"]?.stringValue, field["value"]?.stringValue].compactMap { $0 }
            }
        }
        return texts
    }

    /// What in `text` Discord could read as a mention, a masked link or a spoiler, scalar by
    /// scalar: a `<`, `[`, `]` or `|` without a backslash before it, or an `@` without the
    /// zero-width space after it. Nil when there is none.
    static func problem(in text: String) -> String? {
        let scalars = Array(text.unicodeScalars)
        var index = 0
        while index < scalars.count {
            switch scalars[index] {
            case "\\":
                // An escape: the next scalar shows as itself.
                index += 2
                continue
            case "<", "[", "]", "|":
                return "a raw \(scalars[index]) at scalar \(index)"
            case "@" where index + 1 >= scalars.count || scalars[index + 1] != "\u{200B}":
                return "an @ without a zero-width space after it at scalar \(index)"
            default:
                index += 1
            }
        }
        return nil
    }
}
