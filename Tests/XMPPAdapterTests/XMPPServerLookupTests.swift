import RelayCore
import RelayTestSupport
import Testing

@testable import XMPPAdapter

/// Where the relay connects without `XMPP_SERVER` (issue 43): the domain's SRV records, through
/// the system's resolver, asked here of a nameserver of the test's own.
@Suite("XMPP: the server, from SRV records")
struct XMPPServerLookupTests {
    @Test func recordsAreTriedByPriorityThenWeightAndADomainWithoutRecordsIsItself() async throws {
        let dns = try await FakeDNSServer.start(records: [
            "_xmpp-client._tcp.example.org": [
                FakeDNSServer.SRV(priority: 20, port: 5222, target: "backup.example.org"),
                FakeDNSServer.SRV(priority: 10, port: 5269, target: "xmpp.example.org"),
            ],
            "_xmpps-client._tcp.example.org": [FakeDNSServer.SRV(priority: 5, port: 5223, target: "tls.example.org")],
            "_xmpp-client._tcp.closed.example": [FakeDNSServer.SRV(priority: 0, port: 0, target: ".")],
        ])
        let lookup = XMPPServerLookup(nameserver: ("127.0.0.1", dns.port))
        let servers = await lookup.servers(for: "example.org")
        await dns.stop()
        #expect(
            servers == [
                XMPPServer(host: "tls.example.org", port: 5223, directTLS: true), XMPPServer(host: "xmpp.example.org", port: 5269, directTLS: false),
                XMPPServer(host: "backup.example.org", port: 5222, directTLS: false),
            ])
        #expect(dns.asked.contains("_xmpps-client._tcp.example.org") && dns.asked.contains("_xmpp-client._tcp.example.org"))
    }

    @Test func noRecordsMeanTheDomainAndADotMeansNoService() async throws {
        let dns = try await FakeDNSServer.start(records: ["_xmpp-client._tcp.closed.example": [FakeDNSServer.SRV(priority: 0, port: 0, target: "")]])
        let lookup = XMPPServerLookup(nameserver: ("127.0.0.1", dns.port))
        let plain = await lookup.servers(for: "plain.example")
        let closed = await lookup.servers(for: "closed.example")
        await dns.stop()
        #expect(plain == [XMPPServer(host: "plain.example", port: 5222, directTLS: false)])
        #expect(closed.isEmpty)
    }

    @Test func withinAPriorityTheWeightsShareTheFirstTry() {
        let records = [
            XMPPServerLookup.Record(priority: 1, weight: 90, port: 1, target: "heavy", directTLS: false),
            XMPPServerLookup.Record(priority: 1, weight: 10, port: 2, target: "light", directTLS: false),
        ]
        var generator = SplitMix64(seed: 7)
        var heavyFirst = 0
        for _ in 0..<2_000 where XMPPServerLookup.order(records, domain: "d", using: &generator).first?.host == "heavy" { heavyFirst += 1 }
        #expect((1_650...1_950).contains(heavyFirst), "\(heavyFirst) of 2 000")
    }
}
