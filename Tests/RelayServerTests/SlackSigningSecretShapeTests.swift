import Foundation
import RelayPlatform
import RelayServer
import RelayTestSupport
import SlackAdapter
import Testing

/// `SLACK_SIGNING_SECRET` as `serve` reads it: a value that cannot be a signing secret stops the
/// start with what is wrong, instead of every request being refused as forged.
@Suite("Slack signing secret shape")
struct SlackSigningSecretShapeTests {
    static func load(_ secret: String) async throws -> AppConfiguration {
        try await ConfigurationLoader.load(
            file: nil, environment: ["SLACK_SIGNING_SECRET": secret, "SLACK_BOT_TOKEN": "xoxb-1-2-abc"], platforms: [SlackPlatform.self])
    }

    /// Slack's own signing example's secret, and one shaped like a real one, are accepted.
    @Test(arguments: ["8f742231b10e8888abcd99yyyzzz85a5", "0123456789abcdef0123456789abcdef"])
    func secretsShapedLikeSlacksAreAccepted(secret: String) async throws {
        let configuration = try await Self.load(secret)
        let slack = try #require(configuration.platforms.first as? SlackPlatform)
        #expect(slack.configuration.signingSecret == secret)
    }

    @Test(arguments: [
        ("xoxb-123-456-abcdef", "holds a token (`xoxb-…`), not the signing secret."),
        ("xapp-1-A0-123-abc", "holds a token (`xapp-…`), not the signing secret."),
        (" 0123456789abcdef0123456789abcdef", "has spaces or a line break around it."),
        ("0123456789abcdef", "must be 32 lower-case letters and digits, like Slack's signing secrets; this one has 16 characters."),
        ("0123456789ABCDEF0123456789ABCDEF", "this one has 32 characters and others than those."),
    ])
    func otherValuesAreRefusedSayingWhatIsWrong(secret: String, says: String) async throws {
        let error = await #expect(throws: ConfigurationError.self) { try await Self.load(secret) }
        let message = error?.message ?? ""
        #expect(message.hasPrefix("SLACK_SIGNING_SECRET (slack.signingSecret) "), "\(message)")
        #expect(message.contains(says), "\(message)")
        #expect(message.contains("Basic Information"), "\(message)")
        #expect(!message.contains(secret.trimmingCharacters(in: .whitespaces)), "the value itself is never shown")
    }
}
