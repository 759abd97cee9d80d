import Foundation
import RelayPlatform
import RelayServer
import RelayTestSupport
import Testing
import XMPPAdapter

/// `xmpp.*` as `serve` reads it from the environment (issue 43): what turns XMPP on, and a clear
/// error, naming the variable, for what cannot work.
@Suite("XMPP configuration")
struct XMPPConfigurationTests {
    static func xmpp(_ environment: [String: String]) async throws -> XMPPPlatform {
        let configuration = try await ConfigurationLoader.load(file: nil, environment: environment, platforms: [XMPPPlatform.self])
        return try #require(configuration.platforms.first as? XMPPPlatform)
    }

    @Test func aJIDAPasswordFileAndRoomsTurnItOn() async throws {
        let file = try SecretFileFixture("hunter2\n", name: "xmpp-password")
        defer { file.remove() }
        let platform = try await Self.xmpp([
            "XMPP_JID": "rhea@example.org", "XMPP_PASSWORD_FILE": file.path, "XMPP_ROOMS": "team@conference.example.org, ops@conference.example.org",
        ])
        #expect(platform.configuration.password == "hunter2")
        #expect(platform.configuration.rooms == ["team@conference.example.org", "ops@conference.example.org"])
        #expect(platform.configuration.server == nil, "the JID's domain at 5222")
        #expect(platform.configuration.roomCorrections)
        #expect(platform.status.description == "on (rhea@example.org, 2 rooms)")
        let direct = try await Self.xmpp([
            "XMPP_JID": "rhea@example.org", "XMPP_PASSWORD": "pw", "XMPP_SERVER": "xmpps://xmpp.example.org:5223", "XMPP_ROOM_CORRECTIONS": "false",
        ])
        #expect(direct.configuration.server == XMPPServer(host: "xmpp.example.org", port: 5223, directTLS: true))
        #expect(!direct.configuration.roomCorrections)
        #expect(direct.status.description.contains("XMPP_ROOMS is empty"), "\(direct.status)")
        let starttls = try await Self.xmpp(["XMPP_JID": "rhea@example.org", "XMPP_PASSWORD": "pw", "XMPP_SERVER": "10.0.0.5"])
        #expect(starttls.configuration.server == XMPPServer(host: "10.0.0.5", port: 5222, directTLS: false))
        let off = try await Self.xmpp(["XMPP_JID": "rhea@example.org"])
        #expect(off.status.description == "off: XMPP_JID is set; missing: XMPP_PASSWORD_FILE", "\(off.status)")
    }

    @Test(arguments: [
        (["XMPP_JID": "example.org", "XMPP_PASSWORD": "pw"], "XMPP_JID (xmpp.jid) must be an account's address"),
        (["XMPP_JID": "rhea@", "XMPP_PASSWORD": "pw"], "XMPP_JID (xmpp.jid)"),
        (["XMPP_JID": "rhea@example.org", "XMPP_PASSWORD": "pw", "XMPP_ROOMS": "team@conference.example.org/nick"], "XMPP_ROOMS (xmpp.rooms) names"),
        (["XMPP_JID": "rhea@example.org", "XMPP_PASSWORD": "pw", "XMPP_ROOMS": "conference.example.org"], "not a room"),
        (["XMPP_JID": "rhea@example.org", "XMPP_PASSWORD": "pw", "XMPP_SERVER": "https://example.org"], "XMPP_SERVER (xmpp.server) must be"),
        (["XMPP_JID": "rhea@example.org", "XMPP_PASSWORD": "pw", "XMPP_SERVER": "example.org:99999"], "XMPP_SERVER (xmpp.server)"),
        (["XMPP_JID": "rhea@example.org", "XMPP_PASSWORD": "pw", "XMPP_CA_FILE": "/nonexistent/ca.pem"], "XMPP_CA_FILE (xmpp.caFile)"),
        (["XMPP_JID": "rhea@example.org", "XMPP_PASSWORD": "pw", "XMPP_NICK": "a\u{7}b"], "XMPP_NICK (xmpp.nick)"),
        (["XMPP_JID": "rhea@example.org", "XMPP_PASSWORD": "pw", "XMPP_ROOM_CORRECTIONS": "sometimes"], "XMPP_ROOM_CORRECTIONS"),
        (["XMPP_JID": "rhea@example.org", "XMPP_PASSWORD": "pw", "XMPP_DNS_SERVER": "dns.example:53"], "XMPP_DNS_SERVER (xmpp.dnsServer)"),
    ])
    func whatCannotWorkStopsStartUpNamingTheVariable(environment: [String: String], says: String) async throws {
        let error = await #expect(throws: ConfigurationError.self) { _ = try await Self.xmpp(environment) }
        #expect(error?.message.contains(says) == true, "\(error?.message ?? "")")
    }
}
