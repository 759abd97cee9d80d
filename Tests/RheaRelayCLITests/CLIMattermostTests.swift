import Foundation
import RelayTestSupport
import RelayTestTags
import Testing

/// `rhea-relay register mattermost`, as an operator runs it.
@Suite("CLI: register mattermost", .tags(.peers))
struct CLIMattermostTests {
    @Test func withTheBotItCreatesTheCommandsAndPrintsTheirTokens() async throws {
        try await withFakeMattermost { mattermost in
            let cli = try CLIProcess()
            defer { cli.cleanup() }
            let environment = ["MATTERMOST_URL": mattermost.url, "MATTERMOST_BOT_TOKEN": FakeMattermost.botToken]
            let out = try await cli.run(
                ["register", "mattermost", "--url", "https://relay.example.com", "--team", FakeMattermost.teamName], environment: environment)
            #expect(out.status == 0, "\(out.stderr)")
            let tokens = mattermost.commands.map(\.token)
            #expect(tokens.count == 10)
            #expect(out.stdout.contains("MATTERMOST_COMMAND_TOKENS=" + tokens.joined(separator: ",")), "\(out.stdout)")
        }
    }

    @Test func withoutTheBotItSaysWhatToCreateAndAskingWrongIsRefused() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let manual = try await cli.run(["register", "mattermost", "--url", "https://relay.example.com"], environment: [:])
        #expect(manual.status == 0, "\(manual.stderr)")
        #expect(manual.stdout.contains("Integrations → Slash Commands"))
        #expect(manual.stdout.contains("/translate  Request URL: https://relay.example.com/mattermost/commands"), "\(manual.stdout)")
        let plain = try await cli.run(["register", "mattermost", "--url", "http://relay.example.com"], environment: [:])
        #expect(plain.status == 2)
        #expect(plain.stderr.contains("must be an https:// URL"), "\(plain.stderr)")
        let both = try await cli.run(["register", "mattermost", "--url", "https://relay.example.com", "--team", "a", "--guild", "b"], environment: [:])
        #expect(both.status == 2)
        #expect(both.stderr.contains("not both"), "\(both.stderr)")
    }
}
