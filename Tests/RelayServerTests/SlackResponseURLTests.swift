import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import RelayCore
import RelayServer
import RelayTestSupport
import SlackAdapter
import Testing

/// Issue 47, point 2, for Slack: a slash command's `response_url` is used only on Slack's hook
/// host (`https://hooks.slack.com`) or, in tests, on the origin of the configured
/// `SLACK_API_URL`. A signed command that names any other address gets its answer by the bot
/// token, or a refusal saying why; the address is never called.
@Suite("Slack: replies go only where Slack sends them")
struct SlackResponseURLTests {
    static let channel = "C0E2E"

    /// One command per way a reply goes: a public answer, a private one, an error, help.
    static let commands: [(command: String, text: String, isPrivate: Bool, shows: String)] = [
        ("/translate", "fr Good morning", false, "[translate:fr] Good morning"),
        ("/fix", "teh cat --private", true, "[grammar] teh cat"),
        ("/rhea", "transalte fr hi", true, "/transalte"),
        ("/rhea", "help", true, "for details"),
    ]

    @Test(arguments: DecoyServer.Spelling.allCases)
    func withTheBotTokenAForeignResponseURLIsNeverCalledAndTheAnswerIsPosted(spelling: DecoyServer.Spelling) async throws {
        try await SlackFakes.with { fakes in
            try await withDecoyServer { decoy in
                let logs = LogCapture()
                try await fakes.withRelay(fakes.configuration(), logger: logs.logger) { relay in
                    let responseURL = decoy.url(spelling, path: "/commands/T0E2E/1/secret", trustedHost: "hooks.slack.com")
                    for command in Self.commands {
                        let ack = try await relay.slashCommand(command.command, text: command.text, responseURL: responseURL, channel: Self.channel)
                        #expect(ack.status == .ok)
                        let text = JSONValue.parse(ack.body.readableBytesView)?["text"]?.stringValue ?? ""
                        #expect(text.hasPrefix("⏳"), "\(spelling), \(command.command) \(command.text): accepted, answered by the bot: \(text)")
                    }
                    try await relay.settled()
                    #expect(decoy.requests.isEmpty, "\(spelling): the decoy got \(decoy.requests.map { "\($0.method) \($0.path)" })")
                    let messages = relay.slack.messages(channel: Self.channel)
                    for command in Self.commands {
                        let answer = messages.first { $0.text.contains(command.shows) }
                        #expect(answer != nil, "\(spelling), \(command.command) \(command.text): \(messages.map(\.text))")
                        #expect(answer?.ephemeralUser == (command.isPrivate ? "U0HUMAN" : nil), "\(spelling), \(command.text)")
                    }
                }
                #expect(logs.text.contains("refused a slash command's response_url"), "the refusal is logged with its reason")
                #expect(!logs.text.contains("/commands/T0E2E/1/secret"), "a response_url is never logged")
            }
        }
    }

    @Test(arguments: DecoyServer.Spelling.allCases)
    func withoutTheBotTokenACommandWithAForeignResponseURLIsRefusedSayingWhy(spelling: DecoyServer.Spelling) async throws {
        try await SlackFakes.with { fakes in
            try await withDecoyServer { decoy in
                var configuration = fakes.configuration()
                configuration.platforms = [
                    SlackPlatform(configuration: SlackConfiguration(signingSecret: SlackFakes.signingSecret, botToken: nil, apiURL: fakes.slack.apiURL))
                ]
                let logs = LogCapture()
                try await fakes.withRelay(configuration, logger: logs.logger) { relay in
                    let responseURL = decoy.url(spelling, path: "/commands/T0E2E/1/secret", trustedHost: "hooks.slack.com")
                    for command in Self.commands {
                        let ack = try await relay.slashCommand(command.command, text: command.text, responseURL: responseURL, channel: Self.channel)
                        #expect(ack.status == .ok)
                        let body = try #require(JSONValue.parse(ack.body.readableBytesView))
                        #expect(body["response_type"]?.stringValue == "ephemeral")
                        let text = body["text"]?.stringValue ?? ""
                        #expect(text.contains("Nothing was run"), "\(spelling), \(command.command) \(command.text): \(text)")
                    }
                    try await relay.settled()
                    #expect(decoy.requests.isEmpty, "\(spelling): the decoy got \(decoy.requests.map { "\($0.method) \($0.path)" })")
                    #expect(relay.slack.requests().isEmpty)
                    #expect(await relay.modelRequests().isEmpty, "nothing was run")
                }
                #expect(logs.text.contains("refused a slash command's response_url"), "the refusal is logged with its reason")
            }
        }
    }
}
