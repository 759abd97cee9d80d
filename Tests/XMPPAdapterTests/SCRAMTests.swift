import Testing

@testable import XMPPAdapter

/// SCRAM against the RFCs' own examples (issue 43, point 5): RFC 5802 §5 (SHA-1) and RFC 7677 §3
/// (SHA-256), exchange by exchange, and a server that does not know the password refused.
@Suite("XMPP: SCRAM, the RFCs' examples")
struct SCRAMTests {
    @Test func rfc5802SHA1() throws {
        var client = SCRAMClient(hash: .sha1, user: "user", password: "pencil", clientNonce: "fyko+d2lbbFgONRv9qkxdawL")
        #expect(client.first() == "n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL")
        let final = try client.final(serverFirst: "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096")
        #expect(final == "c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts=")
        try client.verify(serverFinal: "v=rmF9pqV8S7suAoZWja4dJRkFsKQ=")
        #expect(throws: SCRAMClient.Failure.self) { try client.verify(serverFinal: "v=smF9pqV8S7suAoZWja4dJRkFsKQ=") }
    }

    @Test func rfc7677SHA256() throws {
        var client = SCRAMClient(hash: .sha256, user: "user", password: "pencil", clientNonce: "rOprNGfwEbeRWgbNEkqO")
        #expect(client.first() == "n,,n=user,r=rOprNGfwEbeRWgbNEkqO")
        let final = try client.final(serverFirst: "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
        #expect(final == "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
        try client.verify(serverFinal: "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
    }

    @Test func aServerThatChangesTheNonceOrSkimpsOnIterationsIsRefused() {
        var client = SCRAMClient(hash: .sha256, user: "user", password: "pencil", clientNonce: "abc")
        _ = client.first()
        #expect(throws: SCRAMClient.Failure.self) { _ = try client.final(serverFirst: "r=xyz123,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096") }
        #expect(throws: SCRAMClient.Failure.self) { _ = try client.final(serverFirst: "r=abc123,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=1") }
        #expect(throws: SCRAMClient.Failure.self) { try client.verify(serverFinal: "e=invalid-proof") }
    }
}
