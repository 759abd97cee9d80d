import Crypto
import Foundation
import RelayCore
import RelayTestSupport
import RelayTestTags
import Testing

/// Runs the real `rhea-relay` binary against a fake Rhea Tribunal on 127.0.0.1.
@Suite("rhea-relay CLI end to end", .serialized, .tags(.peers))
struct CLIEndToEndTests {
    func withCLI(_ body: (CLIProcess, FakeRheaTribunal) async throws -> Void) async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        try await withFakeRheaTribunal { fake in try await body(cli, fake) }
    }

    /// `api-key new`: a fresh key, and the keys file's line, which holds its SHA-256, not the key.
    @Test func apiKeyNewPrintsAKeyAndTheLineThatAcceptsIt() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let first = try await cli.run(["api-key", "new"])
        #expect(first.status == 0, "\(first.stderr)")
        let lines = first.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        let key = try #require(lines.first)
        #expect(key.hasPrefix("rk_") && key.utf8.count == 67)
        let digest = SHA256.hash(data: Array(key.utf8)).map { String(format: "%02x", $0) }.joined()
        #expect(lines.last == "sha256:\(digest)")
        #expect(try await cli.run(["api-key", "new"]).stdout.split(separator: "\n").first.map(String.init) != key, "a fresh key each time")
    }

    /// A password in the backend's URL is the operator's: never in the reply, the log or the banner.
    @Test func aPasswordInTheBackendsURLIsNeverShown() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let (port, out) = try await withRefusingLoopbackPort { port in
            (port, try await cli.run(["run", "/translate fr Good morning"], environment: ["TRIBUNAL_URL": "http://ada:s3cret-pass@127.0.0.1:\(port)"]))
        }
        #expect(out.status == 1)
        #expect(!(out.stdout + out.stderr).contains("s3cret-pass"), "\(out.stdout)\(out.stderr)")
        #expect((out.stdout + out.stderr).contains("http://ada:***@127.0.0.1:\(port)"), "\(out.stdout)\(out.stderr)")
    }

    @Test func runPrintsTheReplyAndExitsZero() async throws {
        try await withCLI { cli, fake in
            let out = try await cli.run(["run", "/translate fr Good morning"], environment: ["TRIBUNAL_URL": fake.url])
            #expect(out.status == 0, "\(out.stderr)")
            #expect(out.stdout == "▸ Translation · French\n[translate:fr] Good morning\n  fake-mini · 0.0 s\n")
            let sent = await fake.lastRequest(path: FakeRheaTribunal.quickPath)
            #expect(sent?["target_lang"]?.stringValue == "fr")
        }
    }

    @Test func tribunalWithAnAPIKeyShowsTheAgreementFooter() async throws {
        try await withCLI { cli, fake in
            let out = try await cli.run(
                ["run", "/tribunal --k 3 The sky is blue"], environment: ["TRIBUNAL_URL": fake.url, "TRIBUNAL_API_KEY": FakeRheaTribunal.defaultAPIKey])
            #expect(out.status == 0, "\(out.stderr)")
            #expect(out.stdout.contains("— Verdict: true · Agreement 82% · 3/3 models"))
            #expect(!out.stdout.contains(FakeRheaTribunal.defaultAPIKey))
            #expect(await fake.lastRequest(path: FakeRheaTribunal.tribunalPath)?.header("x-api-key") == FakeRheaTribunal.defaultAPIKey)
        }
    }

    /// Issue 14: what `/tribunal` asked is in the ledger, and `ledger export` prints it whole.
    @Test func ledgerExportPrintsTheTeamsFactChecksAsJSONLines() async throws {
        try await withCLI { cli, fake in
            let environment = ["TRIBUNAL_URL": fake.url, "TRIBUNAL_API_KEY": FakeRheaTribunal.defaultAPIKey]
            for claim in ["The sky is blue", "Grass is red"] {
                #expect(try await cli.run(["run", "/tribunal \(claim)", "--team", "acme"], environment: environment).status == 0)
            }
            let out = try await cli.run(["ledger", "export", "--team", "acme"], environment: environment)
            #expect(out.status == 0, "\(out.stderr)")
            let objects = try out.stdout.split(separator: "\n").map { line in
                try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            }
            #expect(objects.map { $0["claim"] as? String } == ["The sky is blue", "Grass is red"])
            #expect(objects.allSatisfy { $0["backend"] as? String == "rhea" && $0["verdict"] as? String == "true" })
            #expect(try await cli.run(["ledger", "export", "--team", "other"], environment: environment).stdout.isEmpty)
        }
    }

    @Test func tribunalWithoutCredentialsSaysItsScoreIsOnlyTheShareThatAnswered() async throws {
        try await withCLI { cli, fake in
            let out = try await cli.run(["run", "/tribunal The sky is blue"], environment: ["TRIBUNAL_URL": fake.url])
            #expect(out.status == 0, "\(out.stderr)")
            #expect(out.stdout.contains("Answered 100% · 2/2 models"))
            #expect(out.stdout.contains("share of models that answered, not their agreement"))
            #expect(await fake.requestCount(path: FakeRheaTribunal.dialogPath) == 1)
        }
    }

    @Test func aProviderFailureExitsNonZeroWithAMessage() async throws {
        try await withCLI { cli, fake in
            await fake.failProviderNext(path: FakeRheaTribunal.quickPath)
            let out = try await cli.run(["run", "/fix teh"], environment: ["TRIBUNAL_URL": fake.url])
            #expect(out.status == 1)
            // An error is not a reply a script should read: stderr only.
            #expect(out.stderr.contains("The AI model provider failed"), "\(out.stderr)")
            #expect(out.stdout.isEmpty, "\(out.stdout)")
        }
    }

    @Test func anUnreachableBackendNamesTheURLAndHowToConfigureOne() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let url = "http://127.0.0.1:9"  // discard port: nothing listens
        let out = try await cli.run(["run", "/fix teh"], environment: ["TRIBUNAL_URL": url], timeout: 30)
        #expect(out.status == 1)
        #expect(out.stderr.contains(url), "\(out.stderr)")
        #expect(out.stderr.contains("TRIBUNAL_URL"), "\(out.stderr)")
        #expect(out.stdout.isEmpty, "\(out.stdout)")
        #expect(!out.stderr.contains("Fatal error"))
    }

    @Test func unknownCommandsExitNonZeroWithASuggestion() async throws {
        try await withCLI { cli, fake in
            let out = try await cli.run(["run", "/transalte fr hi"], environment: ["TRIBUNAL_URL": fake.url])
            #expect(out.status == 1)
            #expect(out.stderr.contains("Did you mean `/translate`?"), "\(out.stderr)")
            #expect(out.stdout.isEmpty, "\(out.stdout)")
            #expect(await fake.requestCount() == 0)
        }
    }

    /// `run --json`: one JSON object on stdout, every field present, the two scores under their
    /// own names; an error is a field too (exit 1), and a usage error exits 64.
    @Test func runJSONPrintsOneObjectForScripts() async throws {
        try await withCLI { cli, fake in
            let env = ["TRIBUNAL_URL": fake.url, "TRIBUNAL_API_KEY": FakeRheaTribunal.defaultAPIKey]
            let quick = try await cli.run(["run", "--json", "/translate fr Good morning"], environment: env)
            #expect(quick.status == 0, "\(quick.stderr)")
            let answer = try JSONDecoder().decode(JSONValue.self, from: Data(quick.stdout.utf8))
            #expect(quick.stdout.split(separator: "\n").count == 1, "one line: \(quick.stdout)")
            #expect(answer["ok"] == .bool(true))
            #expect(answer["kind"]?.stringValue == "result")
            #expect(answer["title"]?.stringValue == "Translation · French")
            #expect(answer["text"]?.stringValue == "[translate:fr] Good morning")
            #expect(answer["error"] == .null)
            #expect(answer["verdict"] == .null)
            #expect(answer["probability"] == .null)
            #expect(answer["models"] == .array([.string("fake-mini")]))
            #expect(answer["elapsed_seconds"]?.doubleValue.map { $0 >= 0 } == true)

            let tribunal = try await cli.run(["run", "--json", "/tribunal --k 3 The sky is blue"], environment: env)
            #expect(tribunal.status == 0, "\(tribunal.stderr)")
            let verdict = try JSONDecoder().decode(JSONValue.self, from: Data(tribunal.stdout.utf8))
            #expect(verdict["verdict"]?.stringValue == "true")
            // The Rhea gateway scores agreement, not a probability of being right.
            #expect(verdict["agreement"]?.doubleValue == 0.82)
            #expect(verdict["probability"] == .null)
            #expect(verdict["answered"] == .int(3))
            #expect(verdict["asked"] == .int(3))
            #expect(verdict["models"]?.arrayValue?.count == 3)

            let failed = try await cli.run(["run", "--json", "/transalte fr hi"], environment: env)
            #expect(failed.status == 1)
            let error = try JSONDecoder().decode(JSONValue.self, from: Data(failed.stdout.utf8))
            #expect(error["ok"] == .bool(false))
            #expect(error["text"] == .null)
            #expect(error["error"]?.stringValue?.contains("Did you mean `/translate`?") == true, "\(failed.stdout)")

            let usage = try await cli.run(["run", "--json", "--plain", "/fix teh"], environment: env)
            #expect(usage.status == 64, "\(usage.stderr)")
            #expect(usage.stderr.contains("--json and --plain"), "\(usage.stderr)")
        }
    }

    /// `run --plain`: the answer's text and nothing else.
    @Test func runPlainPrintsOnlyTheText() async throws {
        try await withCLI { cli, fake in
            let out = try await cli.run(["run", "--plain", "/translate fr Good morning"], environment: ["TRIBUNAL_URL": fake.url])
            #expect(out.status == 0, "\(out.stderr)")
            #expect(out.stdout == "[translate:fr] Good morning\n")
        }
    }

    @Test func chainsSavedInOneRunAreRunExportedAndImportedLater() async throws {
        try await withCLI { cli, fake in
            let env = ["TRIBUNAL_URL": fake.url, "TRIBUNAL_API_KEY": FakeRheaTribunal.defaultAPIKey]
            let save = try await cli.run(["run", "/chain save polish = input > grammar > rewrite:formal > verify:80 > output"], environment: env)
            #expect(save.status == 0, "\(save.stdout)\(save.stderr)")
            let run = try await cli.run(["run", "/run polish we has shipped"], environment: env)
            #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
            #expect(run.stdout.contains("[rewrite:formal] [grammar] we has shipped"))
            #expect(run.stdout.contains("Agreement 82%"))
            #expect(run.stderr.contains("Running… 2/5 (grammar)"))

            let export = try await cli.run(["chains", "export"], environment: env)
            #expect(export.stdout == "polish = input > grammar > rewrite:formal > verify:80 > output\n")
            let file = cli.directory.appendingPathComponent("chains.txt")
            try Data((export.stdout.replacingOccurrences(of: "polish", with: "copy")).utf8).write(to: file)
            let imported = try await cli.run(["chains", "import", file.path, "--team", "other"], environment: env)
            #expect(imported.status == 0, "\(imported.stdout)")
            let list = try await cli.run(["chains", "list", "--team", "other"], environment: env)
            #expect(list.stdout.contains("`copy` = `input > grammar > rewrite:formal > verify:80 > output`"))
            #expect(!list.stdout.contains("polish"))
            let show = try await cli.run(["chains", "show", "nope"], environment: env)
            #expect(show.status == 1)
        }
    }

    @Test func chatReadsLinesAndPrintsReplies() async throws {
        try await withCLI { cli, fake in
            let out = try await cli.run(
                ["chat"], environment: ["TRIBUNAL_URL": fake.url], stdin: "/fix teh cat\nhello there\n/help fix\n/quit\n/fix never\n")
            #expect(out.status == 0, "\(out.stderr)")
            // Plain text gets the command that asks it, not "unknown command".
            #expect(out.stdout.contains("Commands start with `/`. To ask the models, type `/ask hello there`"))
            #expect(!out.stdout.contains("Unknown command"))
            #expect(out.stdout.contains("Backend: the Rhea Tribunal at \(fake.url)"))
            #expect(out.stdout.contains("[grammar] teh cat"))
            #expect(out.stdout.contains("Usage: `/fix TEXT`"))
            #expect(!out.stdout.contains("never"))
        }
    }

    @Test func aYAMLConfigIsReadAndTheEnvironmentOverridesIt() async throws {
        try await withCLI { cli, fake in
            let config = cli.directory.appendingPathComponent("relay.yaml")
            try Data("tribunal:\n  url: http://127.0.0.1:9\nrelay:\n  lang: de\n".utf8).write(to: config)
            let fromFile = try await cli.run(["run", "/translate hello", "--config", config.path], environment: [:], timeout: 30)
            // The file's backend was asked (and failed: nothing listens there), as the error says.
            #expect(fromFile.stderr.contains("http://127.0.0.1:9"), "\(fromFile.stderr)")
            let overridden = try await cli.run(["run", "/translate hello", "--config", config.path], environment: ["TRIBUNAL_URL": fake.url])
            #expect(overridden.status == 0, "\(overridden.stderr)")
            #expect(overridden.stdout.contains("[translate:de] hello"))
        }
    }

    @Test func badConfigurationIsRefusedWithTheKeyNamed() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let tier = try await cli.run(["run", "/fix x"], environment: ["RELAY_TIER": "gold"])
        #expect(tier.status == 2)
        #expect(tier.stderr.contains("relay.tier (RELAY_TIER) must be cheap, mid or frontier, got `gold`"))
        let url = try await cli.run(["run", "/fix x"], environment: ["TRIBUNAL_URL": "not a url"])
        #expect(url.status == 2)
        #expect(url.stderr.contains("tribunal.url (TRIBUNAL_URL)"))
        let missing = try await cli.run(["run", "/fix x", "--config", "/nonexistent/relay.yaml"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("/nonexistent/relay.yaml does not exist"))
        // The council's limits are checked whatever the backend: the local model's council keeps them.
        for (name, value) in [("COUNCIL_TIMEOUT", "abc"), ("COUNCIL_DEADLINE", "-3")] {
            let wrong = try await cli.run(["run", "/fix x"], environment: ["TRIBUNAL_URL": "http://127.0.0.1:9", name: value])
            #expect(wrong.status == 2, "\(name)=\(value): \(wrong.stderr)")
            #expect(wrong.stderr.contains("(\(name)) must be a number of seconds above 0 and at most 3600, got `\(value)`"), "\(wrong.stderr)")
        }
    }

    /// The checked-in Slack manifest is exactly what `register slack` prints for the example URL,
    /// so the file and the code cannot drift apart.
    @Test func registerSlackPrintsTheCheckedInManifest() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let out = try await cli.run(["register", "slack", "--url", "https://relay.example.com"], environment: [:])
        #expect(out.status == 0, "\(out.stderr)")
        let manifest = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../bots/slack/manifest.yaml")
        #expect(out.stdout == (try String(contentsOf: manifest, encoding: .utf8)))
        let elsewhere = try await cli.run(["register", "slack", "--url", "https://relay.acme.test/"], environment: [:])
        #expect(elsewhere.stdout.contains("url: https://relay.acme.test/slack/commands"))
        #expect(elsewhere.stdout.contains("request_url: https://relay.acme.test/slack/events"))
        #expect(elsewhere.stdout.contains("- users:read"))
        let unknown = try await cli.run(["register", "myspace", "--url", "https://x.test"], environment: [:])
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("unknown platform `myspace`; known: slack"))
        let plain = try await cli.run(["register", "slack", "--url", "http://relay.example.com"], environment: [:])
        #expect(plain.status == 2)
        #expect(plain.stderr.contains("--url must be an https:// URL (Slack sends requests only over HTTPS)"), "\(plain.stderr)")
    }

    /// A platform that cannot be reached is not a configuration mistake: exit 1, "could not reach".
    @Test func aRegistrationThatCannotReachThePlatformExitsOne() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        try await withRefusingLoopbackPort { port in
            let closed = "http://127.0.0.1:\(port)"
            let telegram = try await cli.run(
                ["register", "telegram"], environment: ["TELEGRAM_BOT_TOKEN": "123456789:AAE_fake-token_for-tests", "TELEGRAM_API_URL": closed])
            #expect(telegram.status == 1, "\(telegram.stderr)")
            #expect(telegram.stderr.contains("could not reach Telegram"), "\(telegram.stderr)")
            let discord = try await cli.run(
                ["register", "discord"],
                environment: ["DISCORD_BOT_TOKEN": "secret-bot-token", "DISCORD_APPLICATION_ID": "1100000000000000001", "DISCORD_API_URL": closed])
            #expect(discord.status == 1, "\(discord.stderr)")
            #expect(discord.stderr.contains("could not reach Discord"), "\(discord.stderr)")
        }
        // Missing configuration stays exit 2.
        let missing = try await cli.run(["register", "discord"])
        #expect(missing.status == 2)
    }

    @Test func versionAndRegisterHelpSayWhatARunNeeds() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let version = try await cli.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".").count == 3, "\(version.stdout)")
        for (platform, needs) in [
            ("slack", "SLACK_SIGNING_SECRET"), ("discord", "DISCORD_APPLICATION_ID"), ("telegram", "TELEGRAM_BOT_TOKEN"),
            ("matrix", "MATRIX_ACCESS_TOKEN"), ("mattermost", "MATTERMOST_BOT_TOKEN"),
        ] {
            let help = try await cli.run(["register", platform, "--help"])
            #expect(help.status == 0)
            #expect(help.stdout.contains("\(platform): needs") && help.stdout.contains(needs), "\(platform): \(help.stdout)")
        }
    }
}
