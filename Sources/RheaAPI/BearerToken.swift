import Crypto
import Foundation
import RelayCore

/// `Authorization: Bearer <jwt>` as an existing Rhea deployment issues them: HS256 over
/// `header.payload`, claims `sub`, `exp` (and `iat`, `email`, `role`, which are not needed here).
///
/// Only HS256 is accepted (never `none`, never an algorithm the token names for itself); the
/// MAC is checked in constant time before any claim is read; `exp` is required and enforced,
/// `nbf` when present, each with at most `clockSkew` of slack.
struct BearerToken: Sendable {
    let key: SymmetricKey
    let clockSkew: Duration

    init(secret: String, clockSkew: Duration) {
        key = SymmetricKey(data: Array(secret.utf8))
        self.clockSkew = clockSkew
    }

    /// The token's subject, or why the token is refused (in words safe to send back).
    func subject(of token: String, now: Date) -> Result<String, Refusal> {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Self.base64URL(parts[0]), let payloadBytes = Self.base64URL(parts[1]),
            let signature = Self.base64URL(parts[2])
        else { return .failure(Refusal("the bearer token is not a JWT (three base64url parts)")) }
        guard let header = JSONValue.parse(headerBytes), header["alg"]?.stringValue == "HS256" else {
            return .failure(Refusal("the bearer token must be signed with HS256"))
        }
        let signed = Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: signed, using: key) else {
            return .failure(Refusal("the bearer token's signature does not match"))
        }
        guard let claims = JSONValue.parse(payloadBytes), claims.objectValue != nil else {
            return .failure(Refusal("the bearer token's claims are not a JSON object"))
        }
        let slack = clockSkew.seconds
        guard let exp = claims["exp"]?.doubleValue, exp.isFinite else { return .failure(Refusal("the bearer token has no expiry (exp)")) }
        guard now.timeIntervalSince1970 <= exp + slack else { return .failure(Refusal("the bearer token has expired; log in again for a fresh one")) }
        if let nbf = claims["nbf"]?.doubleValue, nbf.isFinite, now.timeIntervalSince1970 + slack < nbf {
            return .failure(Refusal("the bearer token is not valid yet"))
        }
        let subject = claims["sub"]?.stringValue ?? claims["sub"]?.intValue.map(String.init)
        guard let subject, !subject.isEmpty, subject.utf8.count <= 256 else { return .failure(Refusal("the bearer token has no subject (sub)")) }
        return .success(subject)
    }

    struct Refusal: Error, Equatable {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// base64url without padding (RFC 7515 §2), at most 8 KiB decoded.
    static func base64URL(_ text: Substring) -> [UInt8]? {
        guard text.utf8.count <= 11_000 else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.utf8.count % 4 != 0 { base64.append("=") }
        return Data(base64Encoded: base64).map(Array.init)
    }
}
