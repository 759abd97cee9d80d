import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import MattermostAdapter
import RelayConsole
import RelayCore
import RelayPipeline
import RelayPlatform
import RelayServer
import RelayTestSupport
import Testing

/// Mattermost through the real server, against the fake Mattermost: what a person sees.
@Suite("Mattermost end to end")
struct MattermostEndToEndTests {
    static let channel = "chan0000000000000000000001"

    @Test func aCommandWithoutTheRightTokenIsRefusedBeforeAnythingRuns() async throws {
        try await MattermostFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let responseURL = relay.mattermost.makeResponseURL(channel: Self.channel)
                let wrong = try await relay.slashCommand(
                    "/translate", text: "fr hi", channel: Self.channel, responseURL: responseURL, token: "notthetoken000000000000001")
                #expect(wrong.status == .unauthorized)
                #expect(String(buffer: wrong.body).contains("MATTERMOST_COMMAND_TOKENS"), "\(String(buffer: wrong.body))")
                let missing = try await relay.slashCommand("/translate", text: "fr hi", channel: Self.channel, responseURL: responseURL, token: nil)
                #expect(missing.status == .unauthorized)
                #expect(String(buffer: missing.body).contains("No slash-command token"), "\(String(buffer: missing.body))")
                // The field alone is checked when the header is absent; a right header with a wrong field still runs (the header is the server's).
                let fieldOnly = try await relay.slashCommand(
                    "/translate", text: "fr hi", channel: Self.channel, responseURL: responseURL, token: "notthetoken000000000000001", header: false)
                #expect(fieldOnly.status == .unauthorized)
                try await relay.settled()
                #expect(await relay.tribunal.requests(path: FakeRheaTribunal.quickPath).isEmpty)
                #expect(relay.botPosts(channel: Self.channel).isEmpty)
            }
        }
    }

    @Test func aMalformedOrOversizedCommandGetsAClearError() async throws {
        try await MattermostFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let noChannel = try await relay.post(
                    form: MattermostRelay.form([
                        ("command", "/translate"), ("text", "fr hi"), ("team_id", FakeMattermost.teamID), ("user_id", FakeMattermost.alice),
                    ]),
                    token: MattermostFakes.commandToken)
                #expect(noChannel.status == .badRequest)
                #expect(String(buffer: noChannel.body).contains("`channel_id`"), "\(String(buffer: noChannel.body))")
                // Broken %-escapes, the token in the form as Mattermost may send it: 400, not "no token".
                for token in [MattermostFakes.commandToken, nil] {
                    let broken = try await relay.post(form: "text=fr%ZZhi&token=" + MattermostFakes.commandToken, token: token)
                    #expect(broken.status == .badRequest, "\(String(buffer: broken.body))")
                    #expect(String(buffer: broken.body).contains("not an application/x-www-form-urlencoded form"), "\(String(buffer: broken.body))")
                }
                // A field twice is no form Mattermost sends: which `text` would be the command's?
                let twice = try await relay.post(form: "text=fr+hi&text=de+hi&token=" + MattermostFakes.commandToken, token: nil)
                #expect(twice.status == .badRequest)
                #expect(String(buffer: twice.body).contains("field `text` appears more than once"), "\(String(buffer: twice.body))")
                // Last: the server closes the connection after a 413.
                let huge = try await relay.post(form: "text=" + String(repeating: "a", count: 300_000), token: MattermostFakes.commandToken)
                #expect(huge.status == .contentTooLarge)
            }
        }
    }

    /// Issue 47, point 3: a command at Mattermost's own maximum (16 383 runes) is taken in any
    /// script, URL-encoded as Mattermost sends it; a body one byte past the cap derived from it is
    /// 413.
    @Test func aCommandAtMattermostsMaximumLengthIsTakenInAnyScript() async throws {
        try await MattermostFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                relay.mattermost.addChannel(Self.channel)
                for rune in ["a", "é", "日", "😀"] {
                    let text = "fr " + String(repeating: rune, count: 16_383 - 3)
                    let ack = try await relay.slashCommand(
                        "/translate", text: text, channel: Self.channel, responseURL: relay.mattermost.makeResponseURL(channel: Self.channel))
                    #expect(ack.status == .ok, "\(rune): \(String(buffer: ack.body).prefix(200))")
                }
                try await relay.settled()
            }
        }
        try await MattermostFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                // The cap is MattermostCommandRoutes.maxBody: 16 383 × 12 + 8 KiB.
                let cap = 16_383 * 12 + 8 * 1024
                let over = try await relay.post(form: "text=" + String(repeating: "a", count: cap + 1 - 5), token: MattermostFakes.commandToken)
                #expect(over.status == .contentTooLarge)
            }
        }
    }

    @Test func withoutTheBotTheAnswerGoesToTheResponseURL() async throws {
        try await MattermostFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration(bot: false)) { relay in
                relay.mattermost.addChannel(Self.channel)
                let responseURL = relay.mattermost.makeResponseURL(channel: Self.channel)
                let ack = try await relay.slashCommand("/rhea", text: "translate fr Good morning", channel: Self.channel, responseURL: responseURL)
                #expect(ack.status == .ok)
                let ackJSON = try #require(JSONValue.parse(ack.body.readableBytesView))
                #expect(ackJSON["response_type"]?.stringValue == "ephemeral")
                #expect(ackJSON["text"]?.stringValue?.hasPrefix("⏳") == true)
                try await relay.settled()
                let posts = relay.botPosts(channel: Self.channel)
                #expect(posts.count == 1, "\(posts)")
                #expect(posts.first?.via == "response_url")
                #expect(posts.first?.ephemeralFor == nil)
                #expect(posts.first?.message.contains("[translate:fr] Good morning") == true, "\(posts)")
                let sent = try #require(relay.mattermost.requests("response_url").first?.body)
                #expect(sent["response_type"]?.stringValue == "in_channel")
                #expect(sent["skip_slack_parsing"]?.boolValue == true)
            }
        }
    }

    @Test func aRateLimitIsWaitedOutAsXRatelimitResetSays() async throws {
        try await MattermostFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                relay.mattermost.addChannel(Self.channel)
                relay.mattermost.rateLimitNext(1, reset: 1)
                let started = ContinuousClock.now
                let responseURL = relay.mattermost.makeResponseURL(channel: Self.channel)
                _ = try await relay.slashCommand("/translate", text: "fr Good morning", channel: Self.channel, responseURL: responseURL)
                try await relay.settled()
                let posts = relay.botPosts(channel: Self.channel)
                #expect(posts.count == 1, "\(posts)")
                #expect(posts.first?.via == "POST /posts")
                #expect(relay.mattermost.requests("POST /posts").count == 2, "one refused with 429, then the post")
                #expect(started.duration(to: .now) >= .milliseconds(900), "the 1 s reset was waited out")
            }
        }
    }

    @Test func onlyTeamAdminsChangeAChannelsSettings() async throws {
        try await MattermostFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                relay.mattermost.addChannel(Self.channel)
                func answer(_ text: String, user: String = FakeMattermost.alice) async throws -> String {
                    let responseURL = relay.mattermost.makeResponseURL(channel: Self.channel)
                    _ = try await relay.slashCommand("/rhea", text: text, channel: Self.channel, responseURL: responseURL, user: user)
                    try await relay.settled()
                    let texts = relay.botPosts(channel: Self.channel).map { MattermostMarkdown.unescape($0.message) }
                    return texts.last ?? ""
                }
                relay.mattermost.makeTeamAdmin(FakeMattermost.alice)
                let refused = try await answer("settings channel tier mid", user: "bob00000000000000000000001")
                #expect(refused.contains("Only this team's admins can change this channel's settings"), "\(refused)")
                #expect(refused.contains("Admins are: Mattermost system admins and the team's admins"), "\(refused)")
                let changed = try await answer("settings channel tier cheap")
                #expect(changed.contains("This channel's tier is now cheap"), "\(changed)")

                // A team admin grants the role by `@username`; bob may then change the channel's
                // settings. The bot and an unknown name are refused, saying why.
                let bob = "bob00000000000000000000001"
                relay.mattermost.addUser(bob, username: "bob")
                #expect(try await answer("admin grant @bob", user: bob).contains("Only this team's admins can grant the admin role"))
                let granted = try await answer("admin grant @bob")
                #expect(granted.contains("@bob is now an admin of this team."), "\(granted)")
                #expect(try await answer("settings channel tier mid", user: bob).contains("This channel's tier is now mid"))
                #expect(try await answer("admin grant @\(FakeMattermost.botUsername)").contains("is a bot: the admin role is for people."))
                #expect(try await answer("admin grant @ghost").contains("Mattermost knows no user `@ghost`."))
                #expect(try await answer("admin revoke @bob").contains("Took the admin role back from @bob."))
                #expect(try await answer("settings channel tier frontier", user: bob).contains("Only this team's admins"))
            }
        }
    }

    @Test func aMentionRunsItsCommandInTheThreadAndAClaimIsFactChecked() async throws {
        try await MattermostFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration(websocket: true)) { relay in
                _ = try #require(await relay.mattermost.nextAuthenticatedSocket())
                let mention = try await relay.mattermost.post("@rhea translate fr Good morning", channel: Self.channel)
                let answer = try #require(await relay.mattermost.next("POST /posts"))
                #expect(answer["root_id"]?.stringValue == mention)
                let shown = MattermostMarkdown.unescape(answer["message"]?.stringValue ?? "")
                #expect(shown.contains("[translate:fr] Good morning"), "\(answer)")
                await relay.tribunal.setDefaultAgreement(0.9)
                _ = try await relay.mattermost.post("@rhea The Moon is made of cheese", channel: Self.channel)
                let verdict = try #require(await relay.mattermost.next("POST /posts"))
                let verdictText = verdict["message"]?.stringValue ?? ""
                #expect(verdictText.contains("Agreement 90%"), "\(verdict)")
                try await relay.settled()
            }
        }
    }

    @Test func aBareMentionInAThreadFactChecksTheThread() async throws {
        try await MattermostFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration(websocket: true)) { relay in
                _ = try #require(await relay.mattermost.nextAuthenticatedSocket())
                let root = try await relay.mattermost.post("The Eiffel Tower is in Berlin", channel: Self.channel)
                _ = try await relay.mattermost.post("@rhea", channel: Self.channel, rootID: root)
                let answer = try #require(await relay.mattermost.next("POST /posts"))
                try await relay.settled()
                #expect(answer["root_id"]?.stringValue == root)
                let asked = await relay.tribunal.requests(path: FakeRheaTribunal.tribunalPath)
                #expect(asked.count == 1)
                let prompt = asked.first?["prompt"]?.stringValue ?? ""
                #expect(prompt.contains("The Eiffel Tower is in Berlin"), "the thread was read: \(prompt)")
                #expect(!prompt.contains("@rhea"), "without the mention that asked")
            }
        }
    }

    @Test func aDroppedWebsocketIsReconnectedAndAnsweredAgain() async throws {
        try await MattermostFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration(websocket: true)) { relay in
                _ = try #require(await relay.mattermost.nextAuthenticatedSocket())
                await relay.mattermost.closeWebsockets()
                // The first backoff delay is about a second; then the challenge again.
                _ = try #require(await relay.mattermost.nextAuthenticatedSocket())
                _ = try await relay.mattermost.post("@rhea translate fr again", channel: Self.channel)
                let answer = try #require(await relay.mattermost.next("POST /posts"))
                let text = answer["message"]?.stringValue ?? ""
                #expect(text.contains("again"), "\(answer)")
                #expect(relay.mattermost.requests("GET /users/me").count == 1, "who the bot is is asked once")
                try await relay.settled()
            }
        }
    }

    @Test func aMentionsErrorIsPostedInItsThreadWhenTheBotMayNotPostEphemerally() async throws {
        try await MattermostFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration(websocket: true)) { relay in
                _ = try #require(await relay.mattermost.nextAuthenticatedSocket())
                relay.mattermost.allowsEphemeralPosts = false
                let mention = try await relay.mattermost.post("@rhea translate", channel: Self.channel)
                let answer = try #require(await relay.mattermost.next("POST /posts"))
                try await relay.settled()
                #expect(relay.mattermost.requests("POST /posts/ephemeral").count == 1, "tried privately first")
                #expect(answer["root_id"]?.stringValue == mention)
                let text = MattermostMarkdown.unescape(answer["message"]?.stringValue ?? "")
                #expect(text.contains("⚠️"), "\(text)")
            }
        }
    }

    /// A console sign-in link (a secret) where the bot may not post ephemerally: never posted in
    /// the thread instead, as an error would be; the asker is told there why it did not come.
    @Test func aConsoleLinkIsNeverPostedInTheThreadWhenTheBotMayNotPostEphemerally() async throws {
        try await MattermostFakes.with { fakes in
            var configuration = fakes.configuration(websocket: true)
            configuration.console = ConsoleSettings(enabled: true, publicURL: "https://relay.example.com")
            configuration.relay.operatorAdmins = try OperatorAdmins(parsing: "mattermost:*:\(FakeMattermost.alice)", platforms: ["mattermost"])
            try await fakes.withRelay(configuration) { relay in
                _ = try #require(await relay.mattermost.nextAuthenticatedSocket())
                relay.mattermost.allowsEphemeralPosts = false
                _ = try await relay.mattermost.post("@rhea admin console", channel: Self.channel)
                let answer = try #require(await relay.mattermost.next("POST /posts"))
                try await relay.settled()
                #expect(relay.mattermost.requests("POST /posts/ephemeral").count >= 1, "tried privately first")
                let posted = relay.mattermost.requests("POST /posts").map { MattermostMarkdown.unescape($0["message"]?.stringValue ?? "") }
                #expect(!posted.contains { $0.contains("/console/signin") }, "\(posted)")
                let text = MattermostMarkdown.unescape(answer["message"]?.stringValue ?? "")
                #expect(text.contains("Ask again in a direct message with the bot"), "\(text)")
            }
        }
    }

    @Test func theBotsOwnPostsAndARepeatedPostAreNotAnsweredTwice() async throws {
        try await MattermostFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration(websocket: true)) { relay in
                _ = try #require(await relay.mattermost.nextAuthenticatedSocket())
                try await relay.mattermost.post("@rhea translate fr own post", channel: Self.channel, user: FakeMattermost.botUserID)
                let id = try await relay.mattermost.post("@rhea translate fr Good night", channel: Self.channel)
                _ = try #require(await relay.mattermost.next("POST /posts"))
                try await relay.mattermost.rebroadcast(id)
                // A last mention, answered after the repeat would have been: the repeat had its chance.
                _ = try await relay.mattermost.post("@rhea translate fr last", channel: Self.channel)
                let last = try #require(await relay.mattermost.next("POST /posts"))
                let lastText = last["message"]?.stringValue ?? ""
                #expect(lastText.contains("last"), "\(last)")
                try await relay.settled()
                let answers = relay.botPosts(channel: Self.channel).map(\.message)
                #expect(answers.count == 2, "\(answers)")
                #expect(!answers.contains { $0.contains("own post") })
                #expect(await relay.tribunal.requests(path: FakeRheaTribunal.quickPath).count == 2)
            }
        }
    }

    @Test func aMagnifierRunsATribunalAndAThumbMarksTheFactCheck() async throws {
        try await MattermostFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration(websocket: true)) { relay in
                _ = try #require(await relay.mattermost.nextAuthenticatedSocket())
                let claim = try await relay.mattermost.post("The Great Wall is visible from space", channel: Self.channel)
                try await relay.mattermost.react("mag", to: claim)
                let answer = try #require(await relay.mattermost.next("POST /posts"))
                try await relay.settled()
                #expect(answer["root_id"]?.stringValue == claim)
                let shown = MattermostMarkdown.unescape(answer["message"]?.stringValue ?? "")
                #expect(shown.contains("fact-check #1"), "\(shown)")
                let replyID = try #require(relay.botPosts(channel: Self.channel).first?.id)
                // 👍 on someone else's post: nothing.
                try await relay.mattermost.react("+1", to: claim)
                // Marks teach the council: alice, no team admin yet, is told who may mark.
                try await relay.mattermost.react("thumbsdown", to: replyID)
                let refused = try #require(await relay.mattermost.next("POST /posts/ephemeral"))
                try await relay.settled()
                let refusal = MattermostMarkdown.unescape(refused["post"]?["message"]?.stringValue ?? "")
                #expect(refusal.contains("Only this team's admins can mark fact-checks"), "\(refused)")
                relay.mattermost.makeTeamAdmin(FakeMattermost.alice)
                try await relay.mattermost.react("thumbsup", to: replyID)
                let marked = try #require(await relay.mattermost.next("POST /posts/ephemeral"))
                try await relay.settled()
                let text = MattermostMarkdown.unescape(marked["post"]?["message"]?.stringValue ?? "")
                #expect(text.contains("Marked fact-check #1 as true"), "\(marked)")
                #expect(relay.mattermost.requests("POST /posts").count == 1)
            }
        }
    }

    @Test func registerCreatesTheCommandsAndPrintsTheirTokens() async throws {
        try await withFakeMattermost { mattermost in
            let platform = MattermostPlatform(
                configuration: MattermostConfiguration(serverURL: mattermost.url, botToken: MattermostToken(FakeMattermost.botToken)))
            let logger = Logger(label: "test")
            let lines = try await registerPlatform(
                named: "mattermost", with: RegistrationRequest(publicURL: "https://relay.example.com", scope: FakeMattermost.teamName), among: [platform],
                logger: logger)
            let created = mattermost.commands
            #expect(created.map { $0.body["trigger"]?.stringValue ?? "" } == MattermostCommands.triggers)
            #expect(created.allSatisfy { $0.body["url"]?.stringValue == "https://relay.example.com/mattermost/commands" && $0.body["method"] == "P" })
            #expect(created.allSatisfy { $0.body["team_id"]?.stringValue == FakeMattermost.teamID })
            #expect(lines.last == "MATTERMOST_COMMAND_TOKENS=" + created.map(\.token).joined(separator: ","), "\(lines)")

            await #expect(throws: ConfigurationError.self) {
                _ = try await registerPlatform(
                    named: "mattermost", with: RegistrationRequest(publicURL: "http://relay.example.com", scope: FakeMattermost.teamID), among: [platform],
                    logger: logger)
            }
            let manual = try await registerPlatform(
                named: "mattermost", with: RegistrationRequest(publicURL: "https://relay.example.com"), among: [MattermostPlatform(configuration: .init())],
                logger: logger)
            #expect(manual.first?.contains("Integrations → Slash Commands") == true, "\(manual)")
            #expect(manual.contains { $0.contains("/translate") && $0.contains("https://relay.example.com/mattermost/commands") })
            #expect(mattermost.commands.count == created.count)
        }
    }
}
