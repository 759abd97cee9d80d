import Foundation
import IRCAdapter
import RelayPlatform
import RelayServer
import RelayTestSupport
import Testing

/// `irc.*` as `serve` reads it from the environment (issue 43): what turns IRC on, and a clear
/// error, naming the variable, for what cannot work — plain text across a network above all.
@Suite("IRC configuration")
struct IRCConfigurationTests {
    static func irc(_ environment: [String: String]) async throws -> IRCPlatform {
        let configuration = try await ConfigurationLoader.load(file: nil, environment: environment, platforms: [IRCPlatform.self])
        return try #require(configuration.platforms.first as? IRCPlatform)
    }

    @Test func serverNickChannelsAndAPasswordFileTurnItOn() async throws {
        let file = try SecretFileFixture("hunter2\n", name: "irc-password")
        defer { file.remove() }
        let platform = try await Self.irc([
            "IRC_SERVER": "ircs://irc.example.org", "IRC_NICK": "Rhea", "IRC_CHANNELS": "#rhea, #ops", "IRC_PASSWORD_FILE": file.path,
        ])
        #expect(platform.configuration.server == IRCServer(host: "irc.example.org", port: 6697, usesTLS: true))
        #expect(platform.configuration.channels == ["#rhea", "#ops"])
        #expect(platform.configuration.password == "hunter2")
        #expect(platform.status.description == "on (ircs://irc.example.org:6697, 2 channels)")
        let local = try await Self.irc(["IRC_SERVER": "irc://127.0.0.1:6667", "IRC_NICK": "Rhea"])
        #expect(local.status.description.contains("IRC_CHANNELS is empty"), "\(local.status)")
        let off = try await Self.irc(["IRC_NICK": "Rhea"])
        #expect(off.status.description == "off: IRC_NICK is set; missing: IRC_SERVER", "\(off.status)")
    }

    @Test(arguments: [
        (["IRC_SERVER": "irc://irc.example.org:6667", "IRC_NICK": "Rhea"], "plain text across a network"),
        (["IRC_SERVER": "https://irc.example.org", "IRC_NICK": "Rhea"], "IRC_SERVER (irc.server) must be ircs://"),
        (["IRC_SERVER": "ircs://irc.example.org", "IRC_NICK": "1rhea"], "IRC_NICK (irc.nick) must be an IRC nick"),
        (["IRC_SERVER": "ircs://irc.example.org", "IRC_NICK": "Rhea", "IRC_CHANNELS": "rhea"], "IRC_CHANNELS (irc.channels) names `rhea`"),
        (["IRC_SERVER": "ircs://irc.example.org", "IRC_NICK": "Rhea", "IRC_CA_FILE": "/nonexistent/ca.pem"], "IRC_CA_FILE (irc.caFile)"),
        (["IRC_SERVER": "ircs://irc.example.org", "IRC_NICK": "Rhea", "IRC_CHANNEL_LINES": "0"], "IRC_CHANNEL_LINES"),
        (["IRC_SERVER": "ircs://irc.example.org", "IRC_NICK": "Rhea", "IRC_LINES_PER_SECOND": "fast"], "IRC_LINES_PER_SECOND (irc.linesPerSecond)"),
    ])
    func whatCannotWorkStopsStartUpNamingTheVariable(environment: [String: String], says: String) async throws {
        let error = await #expect(throws: ConfigurationError.self) { _ = try await Self.irc(environment) }
        #expect(error?.message.contains(says) == true, "\(error?.message ?? "")")
    }
}
