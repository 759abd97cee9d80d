import Foundation
import RelayTestSupport
import RelayTestTags
import Testing

/// `rhea-relay doctor`: the mistakes a newcomer makes, each named with its fix, before anything
/// runs (issue 46, point 2).
@Suite("rhea-relay doctor", .tags(.peers))
struct DoctorTests {
    @Test func misspeltKeysSecretsInTheFileAndHalfAPlatformAreNamedWithTheFix() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let config = cli.directory.appendingPathComponent("relay.yaml")
        try Data(
            """
            slak:
              signingSecret: x
            telegram:
              botToken: "123456789:AAEabcdefghijklmnopqrstuvwxyz012345"
            relay:
              lang: de
            """.utf8
        ).write(to: config)
        let out = try await cli.run(
            ["doctor", "--offline", "--config", config.path],
            environment: ["MATRIX_HOMESERVER_URL": "https://matrix.example.org", "COUNCIL_MODLES": "a,b"])
        #expect(out.status == 2, "\(out.stdout)\(out.stderr)")
        let lines = out.stdout.split(separator: "\n").map(String.init)
        for expected in [
            "✓ configuration: read from \(config.path) and the environment",
            "✗ relay.yaml: `slak.signingSecret` is not a setting rhea-relay reads here; it is ignored. Did you mean `slack.signingSecret`?",
            "✗ relay.yaml: `telegram.botToken` is a secret, and secrets are never read from the YAML file: set TELEGRAM_BOT_TOKEN, or `telegram.botTokenFile` to a file that holds it (then take it out of relay.yaml).",
            "✗ environment: COUNCIL_MODLES is set, but rhea-relay reads no such variable; it is ignored. Did you mean COUNCIL_MODELS?",
            "✗ matrix: off: MATRIX_HOMESERVER_URL is set; missing: MATRIX_ACCESS_TOKEN (the bot account's)",
            "✓ slack: off: set SLACK_SIGNING_SECRET (HTTP mode) or SLACK_APP_TOKEN (Socket Mode), and SLACK_BOT_TOKEN",
        ] {
            #expect(lines.contains(expected), "missing: \(expected)\n\(out.stdout)")
        }
        #expect(!out.stdout.contains("AAEabcdefghij"), "the secret is never printed")
        #expect(!lines.contains { $0.contains("relay.lang") }, "a key that is read is not named")
    }

    /// `serve` makes the same offline checks before anything else, and does not serve past a
    /// problem: every ✗ line on stderr and exit 2 (a misspelt key, an unread variable, half a
    /// platform, a log level swift-log does not know). A variable other software reads
    /// (`HTTP_PROXY`) is not one of them.
    @Test func serveStopsAtTheSameProblems() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let config = cli.directory.appendingPathComponent("relay.yaml")
        try Data("slak:\n  signingSecret: x\n".utf8).write(to: config)
        let out = try await cli.run(
            ["serve", "--config", config.path],
            environment: ["MATRIX_HOMESERVER_URL": "https://matrix.example.org", "TELEGRAM_BOT_TOKN": "x", "HTTP_PORT": "0", "HTTP_PROXY": "http://proxy:3128"])
        #expect(out.status == 2, "\(out.stdout)\(out.stderr)")
        let lines = out.stderr.split(separator: "\n").map(String.init)
        for expected in [
            "✗ relay.yaml: `slak.signingSecret` is not a setting rhea-relay reads here; it is ignored. Did you mean `slack.signingSecret`?",
            "✗ environment: TELEGRAM_BOT_TOKN is set, but rhea-relay reads no such variable; it is ignored. Did you mean TELEGRAM_BOT_TOKEN?",
            "✗ matrix: off: MATRIX_HOMESERVER_URL is set; missing: MATRIX_ACCESS_TOKEN (the bot account's)",
            "rhea-relay: the configuration has 3 problems (the lines with ✗); not serving. `rhea-relay doctor` checks it without serving.",
        ] {
            #expect(lines.contains(expected), "missing: \(expected)\n\(out.stderr)")
        }
        #expect(!out.stderr.contains("HTTP_PROXY"), "\(out.stderr)")
        #expect(!out.stderr.contains("serving on"), "\(out.stderr)")

        let level = try await cli.run(["serve"], environment: ["LOG_LEVEL": "verbose", "HTTP_PORT": "0"])
        #expect(level.status == 2)
        #expect(
            level.stderr.contains("log.level (LOG_LEVEL) must be one of trace, debug, info, notice, warning, error, critical, got `verbose`."),
            "\(level.stderr)")
    }

    @Test func aConfigurationThatLoadsNotIsOneLineAndExitTwo() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let out = try await cli.run(["doctor", "--offline"], environment: ["RELAY_TIER": "gold"])
        #expect(out.status == 2)
        #expect(out.stdout == "✗ configuration: relay.tier (RELAY_TIER) must be cheap, mid or frontier, got `gold`.\n", "\(out.stdout)")
    }

    /// Online: the backend answers or says why not, and the store is reachable; all well, exit 0.
    @Test func theBackendAndTheStoreAreAsked() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        try await withFakeRheaTribunal { fake in
            // 30 s for the fake to answer, not the health check's 5 s: beside the other peers'
            // suites on two cores the test process answered late once (contributing.md).
            let good = try await cli.run(["doctor"], environment: ["TRIBUNAL_URL": fake.url, "TRIBUNAL_TIMEOUTS_HEALTH": "30"])
            #expect(good.status == 0, "\(good.stdout)\(good.stderr)")
            #expect(good.stdout.contains("✓ backend: the Rhea Tribunal at \(fake.url)"), "\(good.stdout)")
            #expect(good.stdout.contains("✓ store: SQLite at"), "\(good.stdout)")
        }
        let model = try await FakeOpenAIServer.start(requiredKey: "sk-right-0123456789")
        let refused = try await cli.run(
            ["doctor"],
            environment: [
                "TRIBUNAL_BACKEND": "council", "COUNCIL_MODELS": "mini", "COUNCIL_MINI_BASE_URL": model.url, "COUNCIL_MINI_MODEL": "m",
                "COUNCIL_MINI_TIER": "cheap", "COUNCIL_MINI_API_KEY_ENV": "MINI_KEY", "MINI_KEY": "sk-wrong-0123456789",
                "STORE_URL": "postgres://relay:secret@127.0.0.1:9/relay",
            ])
        await model.stop()
        #expect(refused.status == 2, "\(refused.stdout)\(refused.stderr)")
        #expect(refused.stdout.contains("✗ council model mini: \(model.url) refused the key (HTTP 401): check MINI_KEY holds a valid key"), "\(refused.stdout)")
        #expect(refused.stdout.contains("✗ store: PostgreSQL at postgres://relay:"), "\(refused.stdout)")
        #expect(!refused.stdout.contains("sk-wrong") && !refused.stdout.contains(":secret@"), "no secret printed: \(refused.stdout)")
    }

    /// Each platform that is on is asked whether it takes its token: whose it is, or that it
    /// was refused with the fix.
    @Test func eachPlatformIsAskedAboutItsToken() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        try await withFakeRheaTribunal { tribunal in
            try await withFakeTelegramBotAPI { telegram in
                try await withFakeSlackWebAPI { slack in
                    try await withFakeDiscordAPI { discord in
                        try await withFakeMattermost { mattermost in
                            let right = [
                                "TRIBUNAL_URL": tribunal.url, "TELEGRAM_BOT_TOKEN": telegram.token, "TELEGRAM_API_URL": telegram.url,
                                "SLACK_SIGNING_SECRET": ServeReplicas.signingSecret, "SLACK_BOT_TOKEN": slack.botToken, "SLACK_API_URL": slack.apiURL,
                                "DISCORD_BOT_TOKEN": discord.botToken, "DISCORD_API_URL": discord.apiURL,
                                "MATTERMOST_URL": mattermost.url, "MATTERMOST_BOT_TOKEN": FakeMattermost.botToken,
                            ]
                            let good = try await cli.run(["doctor"], environment: right)
                            #expect(good.status == 0, "\(good.stdout)\(good.stderr)")
                            for expected in [
                                "✓ telegram: TELEGRAM_BOT_TOKEN is @\(telegram.botUsername)'s", "✓ slack: SLACK_BOT_TOKEN is rhea's, in Fake workspace",
                                "✓ discord: DISCORD_BOT_TOKEN is rhea's", "✓ mattermost: MATTERMOST_BOT_TOKEN is @",
                            ] {
                                #expect(good.stdout.contains(expected), "missing: \(expected)\n\(good.stdout)")
                            }
                            var wrong = right
                            wrong["TELEGRAM_BOT_TOKEN"] = "123456789:AAEwrongwrongwrongwrongwrongwrong012"
                            wrong["SLACK_BOT_TOKEN"] = "xoxb-wrong-token"
                            wrong["DISCORD_BOT_TOKEN"] = "wrong-discord-token.abc.def"
                            wrong["MATTERMOST_BOT_TOKEN"] = "wrongtoken00000000000001"
                            let bad = try await cli.run(["doctor"], environment: wrong)
                            #expect(bad.status == 2, "\(bad.stdout)\(bad.stderr)")
                            for expected in [
                                "✗ telegram: Telegram refused TELEGRAM_BOT_TOKEN", "✗ slack: Slack refused SLACK_BOT_TOKEN",
                                "✗ discord: Discord refused DISCORD_BOT_TOKEN", "✗ mattermost: Mattermost refused MATTERMOST_BOT_TOKEN",
                            ] {
                                #expect(bad.stdout.contains(expected), "missing: \(expected)\n\(bad.stdout)")
                            }
                            #expect(!bad.stdout.contains("wrongwrong") && !bad.stdout.contains("xoxb-wrong"), "no token printed: \(bad.stdout)")
                        }
                    }
                }
            }
        }
    }
}
