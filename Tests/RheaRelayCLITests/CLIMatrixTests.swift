import Foundation
import RelayCore
import RelayTestSupport
import RelayTestTags
import Testing

/// `rhea-relay register matrix` and Matrix's configuration, through the real binary against a
/// real Synapse on 127.0.0.1.
@Suite("rhea-relay and Matrix", .serialized, .tags(.peers))
struct CLIMatrixTests {
    @Test func registerChecksTheTokenAndSaysHowToInviteTheBot() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let synapse = try await SynapseTestServer.shared()
        let bot = try await synapse.register("relay")
        let out = try await cli.run(["register", "matrix"], environment: ["MATRIX_HOMESERVER_URL": synapse.url, "MATRIX_ACCESS_TOKEN": bot.token])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.contains("Invite \(bot.user)"), "\(out.stdout)")
        #expect(out.stdout.contains("!help"))
        #expect(!out.stdout.contains(bot.token) && !out.stderr.contains(bot.token), "the token is never printed")

        let wrong = try await cli.run(["register", "matrix"], environment: ["MATRIX_HOMESERVER_URL": synapse.url, "MATRIX_ACCESS_TOKEN": "syt_wrong_token"])
        #expect(wrong.status == 2)
        #expect(wrong.stderr.contains("M_UNKNOWN_TOKEN"), "\(wrong.stderr)")
        #expect(wrong.stderr.contains("MATRIX_ACCESS_TOKEN"), "\(wrong.stderr)")
        #expect(!wrong.stderr.contains("syt_wrong_token"))
    }

    @Test func badMatrixConfigurationIsRefusedWithTheVariableNamed() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let noURL = try await cli.run(["serve"], environment: ["MATRIX_ACCESS_TOKEN": "syt_token"])
        #expect(noURL.status == 2)
        #expect(noURL.stderr.contains("MATRIX_HOMESERVER_URL"), "\(noURL.stderr)")
        #expect(!noURL.stderr.contains("syt_token"), "a secret is never printed")
        let badURL = try await cli.run(["serve"], environment: ["MATRIX_HOMESERVER_URL": "matrix.example.org", "MATRIX_ACCESS_TOKEN": "syt_token"])
        #expect(badURL.status == 2)
        #expect(badURL.stderr.contains("matrix.homeserverURL (MATRIX_HOMESERVER_URL) must be an http:// or https:// URL"), "\(badURL.stderr)")
        let badTimeout = try await cli.run(
            ["serve"], environment: ["MATRIX_HOMESERVER_URL": "http://127.0.0.1:9", "MATRIX_ACCESS_TOKEN": "syt_token", "MATRIX_SYNC_TIMEOUT": "600"])
        #expect(badTimeout.status == 2)
        #expect(badTimeout.stderr.contains("MATRIX_SYNC_TIMEOUT"), "\(badTimeout.stderr)")
        let badToken = try await cli.run(["serve"], environment: ["MATRIX_HOMESERVER_URL": "http://127.0.0.1:9", "MATRIX_ACCESS_TOKEN": "two words"])
        #expect(badToken.status == 2)
        #expect(badToken.stderr.contains("MATRIX_ACCESS_TOKEN"), "\(badToken.stderr)")
    }
}
