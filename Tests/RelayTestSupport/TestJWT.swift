public import Crypto
import CryptoExtras
public import Foundation
public import RelayCore
import SwiftASN1
import Synchronization
import X509

/// HS256 JSON Web Tokens as a Rhea deployment signs them (`header.claims.MAC`, base64url), made
/// by hand so a test can put anything in the header or the claims: the served API's tests sign
/// tokens with it, at every layer.
public enum TestJWT {
    /// A token over `claims` (any JSON, even not an object) with `header`, signed with `secret`.
    public static func hs256(_ claims: JSONValue, secret: String, header: JSONValue = ["alg": "HS256", "typ": "JWT"]) -> String {
        let signed = base64URL(header.serialized() ?? []) + "." + base64URL(claims.serialized() ?? [])
        let mac = HMAC<SHA256>.authenticationCode(for: Array(signed.utf8), using: SymmetricKey(data: Array(secret.utf8)))
        return signed + "." + base64URL(Array(mac))
    }

    /// Whether `token`'s MAC is `secret`'s over its first two parts.
    public static func verifies(_ token: String, secret: String) -> Bool {
        let parts = token.split(separator: ".")
        guard parts.count == 3 else { return false }
        let signed = parts[0] + "." + parts[1]
        let mac = HMAC<SHA256>.authenticationCode(for: Array(signed.utf8), using: SymmetricKey(data: Array(secret.utf8)))
        return base64URL(Array(mac)) == parts[2]
    }

    /// Base64url without padding (RFC 7515 §2).
    public static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// An RSA signing key made in a test, as an identity provider holds one: RS256 tokens signed with
/// it, and its public half as a JWK (what an OpenID key set publishes).
public struct TestRSAKey: Sendable {
    public let kid: String
    let privateKey: _RSA.Signing.PrivateKey

    /// A fresh 2048-bit key: a key no fake publishes, even under a kid one does.
    public init(kid: String) throws {
        self.kid = kid
        self.privateKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
    }

    /// The test process's one key for `kid`, made on first use: what the fakes publish and sign
    /// with. Each fake made its own, and making a 2048-bit key (BoringSSL built for debugging)
    /// was about 8 CPU-seconds of each test group; no test tells two fakes' keys apart.
    public static func shared(kid: String) throws -> TestRSAKey {
        if let key = sharedKeys.withLock({ $0[kid] }) { return key }
        let key = try TestRSAKey(kid: kid)
        return sharedKeys.withLock { keys in
            if let made = keys[kid] { return made }
            keys[kid] = key
            return key
        }
    }

    private static let sharedKeys = Mutex<[String: TestRSAKey]>([:])

    /// A token over `claims` with `header` (by default `RS256`, this key's `kid`), signed with
    /// PKCS #1 v1.5 and SHA-256 (RS256, RFC 7518 §3.3).
    public func rs256(_ claims: JSONValue, header: JSONValue? = nil) -> String {
        let header = header ?? ["alg": "RS256", "typ": "JWT", "kid": .string(kid)]
        let signed = TestJWT.base64URL(header.serialized() ?? []) + "." + TestJWT.base64URL(claims.serialized() ?? [])
        let signature = (try? privateKey.signature(for: SHA256.hash(data: Array(signed.utf8)), padding: .insecurePKCS1v1_5)).map {
            Array($0.rawRepresentation)
        }
        return signed + "." + TestJWT.base64URL(signature ?? [])
    }

    /// The public key as a JWK, with `extra` members (the Bot Framework's `endorsements`).
    public func jwk(_ extra: [String: JSONValue] = [:]) -> JSONValue {
        let primitives = try? privateKey.publicKey.getKeyPrimitives()
        var members: [String: JSONValue] = [
            "kty": "RSA", "use": "sig", "kid": .string(kid), "n": .string(TestJWT.base64URL(Array(primitives?.modulus ?? Data()))),
            "e": .string(TestJWT.base64URL(Array(primitives?.publicExponent ?? Data()))),
        ]
        for (key, value) in extra { members[key] = value }
        return .object(members)
    }

    /// The public key in a self-signed x509 certificate, as PEM: how Google publishes its
    /// signing keys (a map of key id to certificate).
    public func certificatePEM(now: Date = Date()) -> String {
        let name = (try? DistinguishedName { CommonName(kid) }) ?? DistinguishedName()
        let certificate = try? Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(privateKey.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(86_400), issuer: name, subject: name,
            signatureAlgorithm: .sha256WithRSAEncryption, extensions: Certificate.Extensions(), issuerPrivateKey: Certificate.PrivateKey(privateKey))
        return (try? certificate?.serializeAsPEM().pemString) ?? ""
    }

    /// The private key as PKCS #8 PEM (`-----BEGIN PRIVATE KEY-----`), as a Google service
    /// account's key file holds it.
    public var privateKeyPEM: String { privateKey.pkcs8PEMRepresentation }

    /// Whether `token` is an RS256 JWT this key signed.
    public func verifies(_ token: String) -> Bool {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let signature = Self.base64URLDecoded(String(parts[2])) else { return false }
        let signed = Array((parts[0] + "." + parts[1]).utf8)
        return privateKey.publicKey.isValidSignature(
            _RSA.Signing.RSASignature(rawRepresentation: signature), for: SHA256.hash(data: signed), padding: .insecurePKCS1v1_5)
    }

    /// A JWT's claims (its middle part), unverified.
    public static func claims(of token: String) -> JSONValue? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = base64URLDecoded(String(parts[1])) else { return nil }
        return JSONValue.parse(bytes)
    }

    static func base64URLDecoded(_ text: String) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).map(Array.init)
    }
}
