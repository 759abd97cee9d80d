import Foundation
import Hummingbird
import HummingbirdTesting
import MattermostAdapter
import NIOCore
import RelayCore
import RelayTestSupport
import Testing

/// Issue 47, point 2: replies go only where Mattermost sends them. Anyone holding a command's
/// token can put any `response_url` in the form; the relay must POST its answer only to
/// `MATTERMOST_URL`'s origin under `/hooks/commands/`. Checked through the real server on what
/// an attacker would see (the decoy "internal" server received nothing) and what the asker sees
/// (the answer by REST, or a refusal saying why).
@Suite("Mattermost: replies go only where Mattermost sends them")
struct MattermostResponseURLTests {
    static let channel = "chan0000000000000000000047"

    /// Where an attacker aims the `response_url`.
    enum Aim: Sendable, CustomTestStringConvertible {
        /// A server of its own on another port, its address spelt one way or another.
        case decoy(DecoyServer.Spelling)
        /// Mattermost's own origin, outside `/hooks/commands/`.
        case mattermostPath(String)

        static let all: [Aim] =
            DecoyServer.Spelling.allCases.map { .decoy($0) } + [
                .mattermostPath("/internal/admin/delete?all=1"), .mattermostPath("/hooks/commands/x/../../../internal/admin/delete"),
            ]

        func url(decoy: DecoyServer, mattermost: FakeMattermost) -> String {
            switch self {
            case .decoy(let spelling): decoy.url(spelling, path: "/hooks/commands/x", trustedHost: "127.0.0.1:\(mattermost.port)")
            case .mattermostPath(let path): mattermost.url + path
            }
        }

        var testDescription: String {
            switch self {
            case .decoy(let spelling): "decoy, \(spelling)"
            case .mattermostPath(let path): "Mattermost's origin, \(path)"
            }
        }
    }

    /// One command per way a reply goes: a public answer, a private one, an error, help.
    static let commands: [(command: String, text: String, isPrivate: Bool, shows: String)] = [
        ("/translate", "fr Good morning", false, "[translate:fr] Good morning"),
        ("/fix", "teh cat --private", true, "[grammar] teh cat"),
        ("/rhea", "transalte fr hi", true, "/transalte"),
        ("/rhea", "help", true, "for details"),
    ]

    /// Nothing reached the decoy, nor Mattermost outside its hooks.
    static func expectNothingSentAstray(_ relay: MattermostRelay, decoy: DecoyServer, _ aim: Aim) {
        #expect(decoy.requests.isEmpty, "\(aim): the decoy got \(decoy.requests.map { "\($0.method) \($0.path)" })")
        #expect(relay.mattermost.requests("unknown").isEmpty, "\(aim): \(relay.mattermost.requests("unknown").map(\.path))")
        #expect(relay.mattermost.requests("response_url").isEmpty, "\(aim)")
    }

    @Test(arguments: Aim.all)
    func withTheBotEveryAnswerGoesByRESTAndNoneToAForeignResponseURL(aim: Aim) async throws {
        try await MattermostFakes.with { fakes in
            try await withDecoyServer { decoy in
                let logs = LogCapture()
                try await fakes.withRelay(fakes.configuration(), logger: logs.logger) { relay in
                    relay.mattermost.addChannel(Self.channel)
                    let responseURL = aim.url(decoy: decoy, mattermost: relay.mattermost)
                    for command in Self.commands {
                        let ack = try await relay.slashCommand(command.command, text: command.text, channel: Self.channel, responseURL: responseURL)
                        #expect(ack.status == .ok)
                        let text = JSONValue.parse(ack.body.readableBytesView)?["text"]?.stringValue ?? ""
                        #expect(text.hasPrefix("⏳"), "\(aim), \(command.command) \(command.text): accepted, answered by REST: \(text)")
                    }
                    try await relay.settled()
                    Self.expectNothingSentAstray(relay, decoy: decoy, aim)
                    let posts = relay.botPosts(channel: Self.channel)
                    for command in Self.commands {
                        let answer = posts.first { $0.message.contains(command.shows) }
                        #expect(answer != nil, "\(aim), \(command.command) \(command.text): \(posts.map(\.message))")
                        #expect(answer?.via == (command.isPrivate ? "POST /posts/ephemeral" : "POST /posts"), "\(aim), \(command.text)")
                        #expect(answer?.ephemeralFor == (command.isPrivate ? FakeMattermost.alice : nil), "\(aim), \(command.text)")
                    }
                }
                #expect(logs.text.contains("refused a slash command's response_url"), "the refusal is logged with its reason")
                #expect(!logs.text.contains("/hooks/commands/x"), "a response_url is never logged")
            }
        }
    }

    @Test(arguments: Aim.all)
    func withoutTheBotACommandWithAForeignResponseURLIsRefusedSayingWhy(aim: Aim) async throws {
        try await MattermostFakes.with { fakes in
            try await withDecoyServer { decoy in
                let logs = LogCapture()
                try await fakes.withRelay(fakes.configuration(bot: false), logger: logs.logger) { relay in
                    relay.mattermost.addChannel(Self.channel)
                    let responseURL = aim.url(decoy: decoy, mattermost: relay.mattermost)
                    for command in Self.commands {
                        let ack = try await relay.slashCommand(command.command, text: command.text, channel: Self.channel, responseURL: responseURL)
                        #expect(ack.status == .ok)
                        let body = try #require(JSONValue.parse(ack.body.readableBytesView))
                        #expect(body["response_type"]?.stringValue == "ephemeral")
                        let text = MattermostMarkdown.unescape(body["text"]?.stringValue ?? "")
                        #expect(text.contains("Nothing was run"), "\(aim), \(command.command) \(command.text): \(text)")
                        #expect(text.contains("MATTERMOST_URL"), "\(text)")
                    }
                    try await relay.settled()
                    Self.expectNothingSentAstray(relay, decoy: decoy, aim)
                    #expect(relay.botPosts(channel: Self.channel).isEmpty)
                    #expect(await relay.tribunal.requests(path: FakeRheaTribunal.quickPath).isEmpty, "nothing was run")
                }
                #expect(logs.text.contains("refused a slash command's response_url"), "the refusal is logged with its reason")
            }
        }
    }

    @Test func aResponseURLMattermostIssuedStillTakesTheAnswer() async throws {
        try await MattermostFakes.with { fakes in
            for bot in [true, false] {
                try await fakes.withRelay(fakes.configuration(bot: bot)) { relay in
                    relay.mattermost.addChannel(Self.channel)
                    let responseURL = relay.mattermost.makeResponseURL(channel: Self.channel)
                    _ = try await relay.slashCommand("/fix", text: "teh cat --private", channel: Self.channel, responseURL: responseURL)
                    try await relay.settled()
                    let answer = relay.botPosts(channel: Self.channel).last
                    #expect(answer?.message.contains("[grammar] teh cat") == true, "bot: \(bot), \(String(describing: answer))")
                    #expect(answer?.via == "response_url", "bot: \(bot)")
                    #expect(answer?.ephemeralFor == FakeMattermost.alice, "bot: \(bot)")
                }
            }
        }
    }
}
