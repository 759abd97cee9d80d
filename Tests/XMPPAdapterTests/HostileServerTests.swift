import Foundation
import Logging
import NIOSSL
import RelayCore
import RelayPlatform
import RelayTestSupport
import RelayTestTags
import Testing

@testable import XMPPAdapter

/// A server that sends what XMPP does not allow (issue 43, point 7): the relay ends the session
/// cleanly — a stream error sent, a log line, the connection closed — and signs in again, each
/// time; never a crash, never a buffer without bound (a stanza that never ends is cut at 256 KB).
@Suite("XMPP: a hostile server ends the session, and the relay reconnects", .tags(.peers))
struct HostileServerTests {
    @Test(arguments: ["oversized", "malformed", "entity", "dtd", "garbage"])
    func theSessionEndsCleanlyAndTheRelayConnectsAgain(mode: String) async throws {
        let server = try await XMPPHostileServer(mode: mode)
        let port = server.port
        let logs = LogCapture()
        var client = XMPPClient(
            server: XMPPServer(host: "127.0.0.1", port: port, directTLS: false), jid: JID("rhea@localhost")!, password: "pw", nick: "rhea", rooms: [],
            tls: try NIOSSLContext(configuration: .makeClientConfiguration()), link: XMPPLink(clock: SystemClock()),
            inbound: XMPPInbound(inbox: RecordingRelayInbox(), roomCorrections: true, logger: logs.logger), clock: SystemClock(),
            credentials: .detached(platform: "xmpp", logger: logs.logger), logger: logs.logger)
        client.backoff = Backoff(initial: .milliseconds(200), maximum: .milliseconds(400))
        let running = Task { await client.run(LeaseGrant(name: "xmpp.connection", token: 0, state: nil, isShared: false, save: { _ in true })) }
        defer { running.cancel() }
        try await eventually("the relay to end the first session and connect again") {
            !server.closedTails.isEmpty && server.connections >= 2
        }
        // It said why (a stream error) and closed the stream.
        #expect(server.closedTails.first?.contains("</stream:error></stream:stream>") == true, "\(server.closedTails)")
        #expect(logs.text.contains("the server sent what XMPP does not allow"), "\(logs.text)")
    }
}
