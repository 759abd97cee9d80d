import Foundation
import JWTKit
import RelayCore

/// `Authorization: Bearer <jwt>` as an existing Rhea deployment issues them: HS256 over
/// `header.payload` with the configured secret, claims `sub`, `exp` (and `iat`, `email`, `role`,
/// which are not needed here).
///
/// jwt-kit checks the MAC (in constant time, before any claim is read); what is accepted is
/// decided here. Only HS256: jwt-kit checks the MAC with the one key it holds whatever algorithm
/// the header names, so the header's `alg` is read first and anything else (`none`, HS512…) is
/// refused. The claims are then read by ``BearerClaims``.
struct BearerToken: Sendable {
    /// jwt-kit's key collection holding the one HS256 key. It is an actor that takes keys
    /// asynchronously and the routes are built synchronously, so it is made once in a task that
    /// every check awaits (done, and so not waited for, after the first).
    let keys: Task<JWTKeyCollection, Never>
    let clockSkew: Duration
    let maxLifetime: Duration

    init(secret: String, clockSkew: Duration, maxLifetime: Duration) {
        // The HMAC key is the secret's UTF-8 bytes. jwt-kit asserts a key of at least 32 bytes,
        // which configuration enforces; a shorter one (jwt.io's example, in the tests) is padded
        // with zeros to 32, as HMAC pads every key shorter than its 64-byte block (RFC 2104 §2),
        // so the MAC is the same.
        var bytes = Array(secret.utf8)
        if bytes.count < 32 { bytes += [UInt8](repeating: 0, count: 32 - bytes.count) }
        let key = HMACKey(from: bytes)
        keys = Task {
            let keys = JWTKeyCollection()
            await keys.add(hmac: key, digestAlgorithm: .sha256)
            return keys
        }
        self.clockSkew = clockSkew
        self.maxLifetime = maxLifetime
    }

    /// The token's subject, or why the token is refused (in words safe to send back).
    func subject(of token: String, now: Date) async -> Result<String, Refusal> {
        guard token.utf8.count <= Self.maxLength, let header = try? DefaultJWTParser().parse(Array(token.utf8), as: Unread.self).header else {
            return .failure(Refusal("the bearer token is not a JWT (three base64url parts)"))
        }
        guard header.alg == "HS256" else { return .failure(Refusal("the bearer token must be signed with HS256")) }
        let claims: BearerClaims
        do {
            claims = try await keys.value.verify(token, as: BearerClaims.self)
        } catch let error as JWTError where error.errorType == .signatureVerificationFailed {
            return .failure(Refusal("the bearer token's signature does not match"))
        } catch {
            return .failure(Refusal("the bearer token's claims are not a JSON object"))
        }
        return claims.subject(now: now, clockSkew: clockSkew, maxLifetime: maxLifetime)
    }

    struct Refusal: Error, Equatable {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// Longer tokens are refused unread (a Rhea token is a few hundred bytes).
    static let maxLength = 16 * 1024

    /// A payload read for nothing: the header is read before the signature is checked.
    private struct Unread: JWTPayload {
        init(from decoder: any Decoder) {}
        func encode(to encoder: any Encoder) {}
        func verify(using algorithm: some JWTAlgorithm) {}
    }
}

/// The claims of a bearer token whose signature holds, each read leniently so that one of the
/// wrong type is refused by name: `exp` (required), `nbf` and `iat` must be JSON numbers, never
/// strings (`"nbf": "0"` is not "no `nbf`"); `sub` a string or an integer, at most 256 bytes.
struct BearerClaims: JWTPayload {
    enum Number: Equatable {
        case absent
        case number(Double)
        case notANumber
    }

    var exp: Number
    var nbf: Number
    var iat: Number
    /// nil when absent, empty, or neither a string nor an integer.
    var sub: String?

    private enum Key: String, CodingKey {
        case exp, nbf, iat, sub
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        func number(_ key: Key) -> Number {
            guard container.contains(key) else { return .absent }
            guard let value = try? container.decode(Double.self, forKey: key), value.isFinite else { return .notANumber }
            return .number(value)
        }
        exp = number(.exp)
        nbf = number(.nbf)
        iat = number(.iat)
        if let text = try? container.decode(String.self, forKey: .sub) {
            sub = text.isEmpty ? nil : text
        } else if let value = try? container.decode(Double.self, forKey: .sub), value == value.rounded(), abs(value) < 1e15 {
            sub = String(Int64(value))
        }
    }

    /// Never signed here; Codable asks for it.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        for (key, claim) in [(Key.exp, exp), (.nbf, nbf), (.iat, iat)] {
            if case .number(let value) = claim { try container.encode(value, forKey: key) }
        }
        try container.encodeIfPresent(sub, forKey: .sub)
    }

    /// Nothing: the checks need the relay's clock and settings, which jwt-kit does not pass;
    /// ``subject(now:clockSkew:maxLifetime:)`` makes them once the signature holds.
    func verify(using algorithm: some JWTAlgorithm) {}

    /// The subject, or why the claims are refused. Every comparison is in `Double`, so no number
    /// a token carries (`1e308`, `-1e308`) can trap.
    func subject(now: Date, clockSkew: Duration, maxLifetime: Duration) -> Result<String, BearerToken.Refusal> {
        for (name, claim) in [("exp", exp), ("nbf", nbf), ("iat", iat)] where claim == .notANumber {
            return .failure(.init("the bearer token's \(name) must be a number (seconds since 1970)"))
        }
        guard case .number(let expiry) = exp else { return .failure(.init("the bearer token has no expiry (exp)")) }
        let now = now.timeIntervalSince1970
        let slack = clockSkew.seconds
        guard now <= expiry + slack else { return .failure(.init("the bearer token has expired; log in again for a fresh one")) }
        guard expiry <= now + maxLifetime.seconds + slack else {
            return .failure(
                .init("the bearer token's expiry (exp) is more than \(maxLifetime.components.seconds) seconds ahead, further than this server accepts"))
        }
        if case .number(let notBefore) = nbf, now + slack < notBefore { return .failure(.init("the bearer token is not valid yet")) }
        guard let sub else { return .failure(.init("the bearer token has no subject (sub)")) }
        guard sub.utf8.count <= 256 else { return .failure(.init("the bearer token's subject (sub) is longer than 256 bytes")) }
        return .success(sub)
    }
}
