import Testing

@testable import XMPPAdapter

/// XMPP addresses as RFC 7622 writes them (issue 43, points 5–6: `XMPP_JID`, `XMPP_ROOMS`, a
/// stanza's `from`).
@Suite("XMPP: addresses")
struct JIDTests {
    @Test func partsAreReadAndPrinted() throws {
        let full = try #require(JID("Rhea@Example.ORG/relay/1"))
        #expect(full.local == "Rhea" && full.domain == "example.org" && full.resource == "relay/1")
        #expect(full.bare.description == "Rhea@example.org")
        #expect(full.description == "Rhea@example.org/relay/1")
        let occupant = try #require(JID("room@conference.example.org/ada@home"))
        #expect(occupant.local == "room" && occupant.resource == "ada@home", "a nick may hold `@`")
        #expect(JID("example.org")?.local == nil)
        #expect(JID("room@conference.example.org")?.with(resource: "Rhea").description == "room@conference.example.org/Rhea")
    }

    @Test(arguments: ["", "@example.org", "rhea@", "rhea@example.org/", "a b@example.org", "a'b@example.org", "rhea@exa\u{0}mple.org", "a@b@c"])
    func malformedAddressesAreRefused(text: String) {
        #expect(JID(text) == nil, "\(text.debugDescription)")
    }
}
