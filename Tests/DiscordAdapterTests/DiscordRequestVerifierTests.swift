import Crypto
import Foundation
import Hummingbird
import NIOCore
import RelayCore
import RelayPlatform
import Testing

@testable import DiscordAdapter

@Suite("Discord interaction signatures")
struct DiscordRequestVerifierTests {
    static let timestamp = 1_800_000_000
    static let body = Array(#"{"type":1,"id":"1300000000000000001"}"#.utf8)

    /// A key made here, a verifier for it whose clock reads `offset` seconds after `timestamp`,
    /// and a signer.
    struct Fixture {
        let key = Curve25519.Signing.PrivateKey()
        func verifier(offset: Int = 0) throws -> DiscordRequestVerifier {
            let now = Date(timeIntervalSince1970: Double(DiscordRequestVerifierTests.timestamp + offset))
            return try DiscordRequestVerifier(publicKeyHex: Hex.encode(key.publicKey.rawRepresentation), now: { now })
        }
        func sign(timestamp: String = String(DiscordRequestVerifierTests.timestamp), body: [UInt8] = DiscordRequestVerifierTests.body) throws -> String {
            Hex.encode(try key.signature(for: Array(timestamp.utf8) + body))
        }
    }

    func verify(
        _ verifier: DiscordRequestVerifier, timestamp: String? = String(Self.timestamp), signature: String?, body: [UInt8] = Self.body
    ) -> DiscordVerificationError? {
        do throws(DiscordVerificationError) {
            try verifier.verify(timestamp: timestamp, signature: signature, body: body)
            return nil
        } catch {
            return error
        }
    }

    @Test func aRequestSignedWithTheApplicationKeyVerifies() throws {
        let fixture = Fixture()
        #expect(verify(try fixture.verifier(), signature: try fixture.sign()) == nil)
        // Discord sends lowercase hex; uppercase is the same signature.
        #expect(verify(try fixture.verifier(), signature: try fixture.sign().uppercased()) == nil)
    }

    @Test func aForgedAlteredOrMisattributedRequestIsRejected() throws {
        let fixture = Fixture()
        let verifier = try fixture.verifier()
        let signature = try fixture.sign()
        // Discord's own probe: a well-formed signature that is not its signature.
        #expect(verify(verifier, signature: String(repeating: "0", count: 128)) == .signatureMismatch)
        #expect(verify(verifier, signature: signature, body: Array(#"{"type":1,"id":"1300000000000000009"}"#.utf8)) == .signatureMismatch)
        #expect(verify(verifier, timestamp: String(Self.timestamp + 1), signature: signature) == .signatureMismatch)
        #expect(verify(verifier, signature: try Fixture().sign()) == .signatureMismatch, "another application's key")
        var flipped = Array(signature.utf8)
        flipped[10] = flipped[10] == UInt8(ascii: "a") ? UInt8(ascii: "b") : UInt8(ascii: "a")
        #expect(verify(verifier, signature: String(decoding: flipped, as: UTF8.self)) == .signatureMismatch)
    }

    @Test func missingAndMalformedHeadersAreRejectedWithTheirReason() throws {
        let fixture = Fixture()
        let verifier = try fixture.verifier()
        let signature = try fixture.sign()
        #expect(verify(verifier, timestamp: nil, signature: signature) == .missingTimestamp)
        #expect(verify(verifier, signature: nil) == .missingSignature)
        for timestamp in ["", "-1800000000", " 1800000000", "18e8", "1800000000.5", "9999999999999", "１８"] {
            #expect(verify(verifier, timestamp: timestamp, signature: signature) == .malformedTimestamp, "\(timestamp)")
        }
        for bad in ["", "zz" + signature.dropFirst(2), String(signature.dropLast(2)), signature + "00", "v0=" + signature.dropFirst(3)] {
            #expect(verify(verifier, signature: bad) == .malformedSignature)
        }
        #expect(DiscordVerificationError.malformedSignature.label == "malformed_signature")
    }

    @Test func theReplayWindowIsFiveMinutesEitherWay() throws {
        let fixture = Fixture()
        let signature = try fixture.sign()
        #expect(verify(try fixture.verifier(offset: 300), signature: signature) == nil)
        #expect(verify(try fixture.verifier(offset: -300), signature: signature) == nil)
        #expect(verify(try fixture.verifier(offset: 301), signature: signature) == .staleTimestamp(secondsOld: 301))
        #expect(verify(try fixture.verifier(offset: -301), signature: signature) == .futureTimestamp(secondsAhead: 301))
    }

    /// RFC 8032 §7.1, TEST 1–3: the public key derived from each secret key is the published
    /// one, and each published signature verifies through the verifier's public-key path (and a
    /// changed message does not).
    @Test(arguments: [
        (
            "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
        ),
        (
            "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb", "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
            "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"
        ),
        (
            "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7", "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
            "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"
        ),
    ])
    func rfc8032Vectors(secret: String, publicKey: String, message: String, signature: String) throws {
        let secretKey = try Curve25519.Signing.PrivateKey(rawRepresentation: try #require(Hex.decode(secret, count: 32)))
        #expect(Hex.encode(secretKey.publicKey.rawRepresentation) == publicKey)
        let verifier = try DiscordRequestVerifier(publicKeyHex: publicKey)
        let bytes = try #require(message.isEmpty ? [] : Hex.decode(message, count: message.utf8.count / 2))
        #expect(throws: Never.self) { try verifier.verifySignature(signature, over: bytes) }
        #expect(throws: DiscordVerificationError.signatureMismatch) { try verifier.verifySignature(signature, over: bytes + [0]) }
    }

    @Test func aBadPublicKeyIsAStartUpErrorThatDoesNotShowTheKey() throws {
        #expect(throws: DiscordPublicKeyError.notHex) { try DiscordRequestVerifier(publicKeyHex: "abc") }
        #expect(throws: DiscordPublicKeyError.notHex) { try DiscordRequestVerifier(publicKeyHex: String(repeating: "g", count: 64)) }
        let key = Hex.encode(Curve25519.Signing.PrivateKey().publicKey.rawRepresentation)
        let verifier = try DiscordRequestVerifier(publicKeyHex: key + "\n")
        #expect(!"\(verifier)".contains(key.prefix(8)))
        #expect(!"\(DiscordPublicKeyError.notAKey)".contains(key.prefix(8)))
    }

    @Test func headersAreReadFromTheRequestAndEveryFailureIs401() async throws {
        let fixture = Fixture()
        let verifier = try fixture.verifier()
        var headers = HTTPFields()
        headers[DiscordHeaders.timestamp] = String(Self.timestamp)
        headers[DiscordHeaders.signature] = try fixture.sign()
        #expect(throws: Never.self) { try verifier.verify(headers: headers, body: ByteBuffer(bytes: Self.body)) }
        #expect(throws: DiscordVerificationError.signatureMismatch) { try verifier.verify(headers: headers, body: ByteBuffer(string: "{}")) }
        #expect(DiscordVerificationError.signatureMismatch.status == .unauthorized)
        #expect(DiscordVerificationError.staleTimestamp(secondsOld: 900).status == .unauthorized)
    }
}
