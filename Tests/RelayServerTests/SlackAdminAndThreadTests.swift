import Hummingbird
import HummingbirdTesting
import RelayCore
import RelayTestSupport
import Testing

/// What the relay asks Slack only when a command needs it: whether the user is a workspace
/// admin (`users.info`) and what a thread says (`conversations.replies`).
@Suite("Slack: admins and threads, through the server")
struct SlackAdminAndThreadTests {
    /// The reply text posted to `responseURL`.
    static func reply(at responseURL: String, _ relay: RelayUnderTest) async throws -> String {
        let post = try #require(await relay.slack.next(responseURL: responseURL))
        return try #require(post["text"]?.stringValue)
    }

    @Test func aWorkspaceAdminCanChangeChannelSettingsAndAMemberIsToldWhyNot() async throws {
        try await SlackFakes.with { fakes in
            fakes.slack.seed(.admin("U0ADMIN", teamID: SlackFakes.team))
            fakes.slack.seed(.member("U0MEMBER", teamID: SlackFakes.team))
            try await fakes.withRelay(fakes.configuration()) { relay in
                let refusedURL = relay.slack.makeResponseURL()
                _ = try await relay.slashCommand("/rhea", text: "settings channel lang fr", responseURL: refusedURL, user: "U0MEMBER")
                let refused = try await Self.reply(at: refusedURL, relay)
                #expect(refused.contains("Only this team's admins can change this channel's settings"), "\(refused)")
                #expect(refused.contains("Admins are: Slack workspace admins and owners;"), "\(refused)")

                let acceptedURL = relay.slack.makeResponseURL()
                _ = try await relay.slashCommand("/rhea", text: "settings channel lang fr", responseURL: acceptedURL, user: "U0ADMIN")
                let accepted = try await Self.reply(at: acceptedURL, relay)
                #expect(accepted.contains("This channel's lang is now French (fr)."), "\(accepted)")

                // The channel's language now applies to everyone in it.
                let translatedURL = relay.slack.makeResponseURL()
                _ = try await relay.slashCommand("/translate", text: "Good morning", responseURL: translatedURL, user: "U0MEMBER")
                #expect(try await Self.reply(at: translatedURL, relay).contains("[translate:fr] Good morning"))
                // Asked once per user: commands that change nothing team-wide ask nothing.
                #expect(relay.slack.requests(path: "users.info").count == 2)
            }
        }
    }

    /// `/admin grant` from a workspace admin, with Slack's escaped mention: the member may then
    /// save the team's chains; a bot, an unknown user and a plain-text `@name` are refused, each
    /// saying why.
    @Test func anAdminGrantsTheRoleByMentionAndRevokesIt() async throws {
        try await SlackFakes.with { fakes in
            fakes.slack.seed(.admin("U0ADMIN", teamID: SlackFakes.team))
            fakes.slack.seed(.member("U0MEMBER", teamID: SlackFakes.team))
            fakes.slack.seed(FakeSlackUser(id: "U0HELPER", teamID: SlackFakes.team, isBot: true))
            try await fakes.withRelay(fakes.configuration()) { relay in
                func ask(_ command: String, _ text: String, as user: String) async throws -> String {
                    let url = relay.slack.makeResponseURL()
                    _ = try await relay.slashCommand(command, text: text, responseURL: url, user: user)
                    return try await Self.reply(at: url, relay)
                }
                #expect(try await ask("/chain", "save polish = grammar", as: "U0MEMBER").contains("Only this team's admins can save"))
                #expect(try await ask("/admin", "grant <@U0ADMIN|boss>", as: "U0MEMBER").contains("Only this team's admins can grant the admin role"))
                #expect(try await ask("/admin", "grant <@U0MEMBER|mia>", as: "U0ADMIN").contains("@mia is now an admin of this team."))
                #expect(try await ask("/chain", "save polish = grammar", as: "U0MEMBER").contains("Saved chain `polish`"))
                let shown = try await ask("/admin", "", as: "U0MEMBER")
                #expect(shown.contains("You administer this team:") && shown.contains("granted you the role"), "\(shown)")
                #expect(shown.contains("`slack:\(SlackFakes.team):U0MEMBER`"), "\(shown)")

                #expect(try await ask("/admin", "grant <@U0HELPER|helper>", as: "U0ADMIN").contains("@helper is a bot: the admin role is for people."))
                #expect(try await ask("/admin", "grant <@U0GHOST|ghost>", as: "U0ADMIN").contains("Slack knows no user @ghost."))
                #expect(try await ask("/rhea", "admin grant @mia", as: "U0ADMIN").contains("Slack sent `@mia` as plain text"))

                #expect(try await ask("/admin", "revoke <@U0MEMBER|mia>", as: "U0ADMIN").contains("Took the admin role back from @mia."))
                #expect(try await ask("/chain", "delete polish", as: "U0MEMBER").contains("Only this team's admins can delete"))
            }
        }
    }

    @Test func summarizeInAThreadReadsTheThread() async throws {
        try await SlackFakes.with { fakes in
            let root = "1700000000.000100"
            fakes.slack.seed(FakeSlackMessage(channel: "C0THREAD", ts: root, text: "Shall we ship *Friday*?", user: "U0A"))
            fakes.slack.seed(FakeSlackMessage(channel: "C0THREAD", ts: "1700000000.000200", text: "Only if QA signs off", threadTS: root, user: "U0B"))
            fakes.slack.seed(FakeSlackMessage(channel: "C0THREAD", ts: "1700000000.000300", text: "QA signed off &amp; we ship", threadTS: root, user: "U0C"))
            try await fakes.withRelay(fakes.configuration()) { relay in
                let mention = SlackFakes.mention("summarize", eventID: "Ev0THREAD1", channel: "C0THREAD", ts: "1700000000.000400", threadTS: root)
                #expect(try await relay.event(mention).status == .ok)
                let post = try #require(await relay.slack.next(path: "chat.postMessage"))
                #expect(post["thread_ts"]?.stringValue == root)

                let asked = try #require(await relay.tribunal.next(path: FakeRheaTribunal.quickPath))
                #expect(asked["action"]?.stringValue == "summarize")
                let text = try #require(asked["text"]?.stringValue)
                #expect(text.contains("Shall we ship *Friday*?"))
                #expect(text.contains("Only if QA signs off"))
                #expect(text.contains("QA signed off & we ship"), "Slack's escapes are undone: \(text)")
                #expect(text.firstRange(of: "Shall we ship")!.lowerBound < text.firstRange(of: "QA signed off")!.lowerBound, "oldest first")
            }
        }
    }

    @Test func aCommandWithItsOwnTextInAThreadDoesNotReadTheThread() async throws {
        try await SlackFakes.with { fakes in
            try await fakes.withRelay(fakes.configuration()) { relay in
                let mention = SlackFakes.mention(
                    "summarize the meeting moved to Tuesday", eventID: "Ev0THREAD2", channel: "C0THREAD", ts: "1700000000.000900",
                    threadTS: "1700000000.000800")
                #expect(try await relay.event(mention).status == .ok)
                _ = try #require(await relay.slack.next(path: "chat.postMessage"))
                try await relay.settled()
                #expect(relay.slack.requests(path: "conversations.replies").isEmpty)
            }
        }
    }
}
