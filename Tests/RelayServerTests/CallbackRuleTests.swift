import DiscordAdapter
import MatrixAdapter
import MattermostAdapter
import RelayPlatform
import RelayServer
import SlackAdapter
import TelegramAdapter
import Testing

/// Issue 47, point 2: a URL a platform hands over (a `response_url`) is called only where that
/// platform says, parsed strictly; every platform says, as configured.
@Suite("Callback URLs: each platform says where the relay may answer")
struct CallbackRuleTests {
    static let mattermost = MattermostConfiguration.responseURLRule(serverURL: "https://Chat.Example.com")

    /// The refusal's reason, or nil when `url` is allowed.
    static func refusal(_ rule: CallbackRule, _ url: String) -> String? {
        do throws(CallbackRefusal) {
            _ = try rule.check(url)
            return nil
        } catch {
            return error.reason
        }
    }

    @Test func mattermostsHooksAreAllowedAndRebuiltFromTheirCheckedParts() throws {
        #expect(try Self.mattermost.check("https://chat.example.com/hooks/commands/abc123") == "https://chat.example.com/hooks/commands/abc123")
        #expect(try Self.mattermost.check("HTTPS://CHAT.example.COM:443/hooks/commands/abc123") == "https://chat.example.com/hooks/commands/abc123")
        let underPath = MattermostConfiguration.responseURLRule(serverURL: "http://127.0.0.1:8065/chat/")
        #expect(try underPath.check("http://127.0.0.1:8065/chat/hooks/commands/k3") == "http://127.0.0.1:8065/chat/hooks/commands/k3")
        #expect(Self.refusal(underPath, "http://127.0.0.1:8065/hooks/commands/k3") != nil, "outside the server's path")
    }

    @Test(arguments: [
        // Another origin, however it is spelt.
        "http://chat.example.com/hooks/commands/x", "https://chat.example.com:8443/hooks/commands/x", "https://chat.example.com./hooks/commands/x",
        "https://chat.example.com.evil.test/hooks/commands/x", "https://evil.test/hooks/commands/x", "http://127.0.0.1/hooks/commands/x",
        "http://2130706433/hooks/commands/x", "http://0x7f000001/hooks/commands/x", "http://[::1]/hooks/commands/x",
        "https://chat%2Eexample.com/hooks/commands/x",
        // User info, a query or a fragment, even with the right host somewhere in it.
        "https://chat.example.com@evil.test/hooks/commands/x", "https://evil.test@chat.example.com/hooks/commands/x",
        "https://chat.example.com/hooks/commands/x?all=1", "https://chat.example.com/hooks/commands/x#frag",
        // The right origin, another path.
        "https://chat.example.com/internal/admin/delete", "https://chat.example.com/api/v4/users", "https://chat.example.com/hooks/commands/",
        "https://chat.example.com/hooks/commandsx/y", "https://chat.example.com/hooks/commands/x/../../../api/v4/users",
        "https://chat.example.com/hooks/commands/%2e%2e/%2e%2e/api", "https://chat.example.com/hooks/commands/x//y",
        // Not http(s), or not a URL.
        "file:///etc/passwd", "gopher://chat.example.com/hooks/commands/x", "chat.example.com/hooks/commands/x", "https://chat.example.com\\@evil.test/",
        "",
    ])
    func anythingElseIsRefusedSayingWhyWithoutItsPath(url: String) {
        let reason = Self.refusal(Self.mattermost, url)
        #expect(reason != nil, "\(url) was allowed")
        #expect(reason?.contains("admin/delete") != true && reason?.contains("api/v4") != true, "the path is never shown: \(reason ?? "")")
    }

    @Test func slackIsAnsweredOnlyOnItsHooksOrTheConfiguredAPIsOrigin() throws {
        let slack = SlackConfiguration.responseURLRule(apiURL: SlackConfiguration.defaultAPIURL)
        #expect(slack.description == "https://hooks.slack.com/commands/…, https://hooks.slack.com/actions/…")
        #expect(SlackConfiguration.responseURLRule(apiURL: SlackConfiguration.defaultAPIURL + "/") == slack)
        for url in [
            "https://hooks.slack.com/commands/T1DC2JH3J/397700885554/96rGlfmibIGlgcZRskXaIFfN",
            "https://hooks.slack.com/actions/T3MDE/1548261299/abcDEF123ghi",
        ] {
            #expect(try slack.check(url) == url)
        }
        for url in [
            "http://hooks.slack.com/commands/T1/2/x", "https://hooks.slack.com.evil.test/commands/T1/2/x", "https://slack.com/api/chat.postMessage",
            "https://hooks.slack.com/services/T1/B2/x", "http://127.0.0.1:4567/response/T0FAKE/1001/r1", "https://x@hooks.slack.com/commands/T1/2/x",
        ] {
            #expect(Self.refusal(slack, url) != nil, "\(url) was allowed")
        }
        // A fake's (or a proxy's) Web API: its origin takes response URLs too, and no other.
        let fake = SlackConfiguration.responseURLRule(apiURL: "http://127.0.0.1:4567/api")
        #expect(try fake.check("http://127.0.0.1:4567/response/T0FAKE/1001/r1") == "http://127.0.0.1:4567/response/T0FAKE/1001/r1")
        #expect(try fake.check("https://hooks.slack.com/commands/T1/2/x") == "https://hooks.slack.com/commands/T1/2/x")
        for url in ["http://127.0.0.1:4568/response/x", "http://localhost:4567/response/x", "http://2130706433:4567/response/x"] {
            #expect(Self.refusal(fake, url) != nil, "\(url) was allowed")
        }
    }

    @Test func everyPlatformSaysWhereItMayBeAnswered() async throws {
        let configuration = try await ConfigurationLoader.load(
            file: nil, environment: ["MATTERMOST_URL": "https://chat.example.com"],
            platforms: [SlackPlatform.self, DiscordPlatform.self, TelegramPlatform.self, MatrixPlatform.self, MattermostPlatform.self])
        let rules = Dictionary(uniqueKeysWithValues: configuration.platforms.map { (type(of: $0).name, $0.callbackRule.description) })
        #expect(
            rules == [
                "slack": "https://hooks.slack.com/commands/…, https://hooks.slack.com/actions/…", "discord": "nowhere", "telegram": "nowhere",
                "matrix": "nowhere", "mattermost": "https://chat.example.com/hooks/commands/…",
            ])
        #expect(Self.refusal(.nothing, "https://hooks.slack.com/commands/T1/2/x") != nil)
    }
}
