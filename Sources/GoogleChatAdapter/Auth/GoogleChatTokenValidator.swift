import Foundation
import JWTKit
import RelayCore
import RelayPlatform

/// Checks the `Authorization: Bearer` token Google Chat sends with each event, as Google's own
/// libraries verify it (`google.oauth2.id_token.verify_token`): an RS256 JWT whose `kid` is one
/// of the published certificates' (`GoogleChatSigningKeys`) and whose signature holds; for this
/// app (`aud` = `GOOGLE_CHAT_AUDIENCE`); within its `iat`/`exp`, five minutes either way for
/// clocks that differ; and issued by Google Chat — `iss` `chat@system.gserviceaccount.com` for a
/// project-number audience, and for an endpoint-URL audience a Google ID token (`iss`
/// `accounts.google.com`) whose verified `email` is `chat@system.gserviceaccount.com` (any other
/// Google account can get an ID token for the same URL).
struct GoogleChatTokenValidator: Sendable {
    static let clockSkew: TimeInterval = 5 * 60
    /// Longer tokens are refused unread (Google's are about 1 KB).
    static let maxLength = 16 * 1024
    static let idTokenIssuers: Set<String> = ["accounts.google.com", "https://accounts.google.com"]

    let audience: GoogleChatAudience
    let keys: PublishedKeys<JWTKeyCollection>
    let clock: any RelayClock

    /// Accepts the token in an `Authorization` header, or says why not.
    func validate(authorization: String?) async throws(GoogleChatAuthError) {
        guard let authorization, !authorization.isEmpty else { throw .missing }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { throw .notBearer }
        let token = String(parts[1]).trimmingCharacters(in: .whitespaces)
        guard token.utf8.count <= Self.maxLength, let header = try? DefaultJWTParser().parse(Array(token.utf8), as: Unread.self).header else {
            throw .malformed("the bearer token is not a JWT (three base64url parts)")
        }
        // jwt-kit would verify with whatever algorithm the header names (and with its default key
        // for an unknown kid): both are decided here first.
        guard header.alg == "RS256" else { throw .malformed("the token must be signed with RS256") }
        guard let kid = header.kid, !kid.isEmpty else { throw .malformed("the token names no signing key (kid)") }
        let collection: JWTKeyCollection
        switch await keys.lookUp(kid: kid) {
        case .found(let found): collection = found
        case .unknown: throw .unknownKey
        case .unavailable(let reason): throw .keysUnavailable(reason)
        }
        let claims: ChatClaims
        do {
            claims = try await collection.verify(token, as: ChatClaims.self)
        } catch let error as JWTError where error.errorType == .signatureVerificationFailed {
            throw .badSignature
        } catch {
            throw .malformed("the token's claims are not what Google Chat sends")
        }
        switch audience {
        case .projectNumber:
            guard claims.iss == GoogleChatConfiguration.chatIssuer else { throw .wrongIssuer }
        case .endpointURL:
            guard let iss = claims.iss, Self.idTokenIssuers.contains(iss) else { throw .wrongIssuer }
            guard claims.email == GoogleChatConfiguration.chatIssuer, claims.emailVerified != false else { throw .notGoogleChat }
        }
        guard claims.aud.contains(audience.value) else { throw .wrongAudience }
        let now = clock.now.timeIntervalSince1970
        guard let exp = claims.exp else { throw .malformed("the token has no expiry (exp)") }
        guard now <= exp + Self.clockSkew else { throw .expired }
        if let iat = claims.iat, now + Self.clockSkew < iat { throw .notYetValid }
        if let nbf = claims.nbf, now + Self.clockSkew < nbf { throw .notYetValid }
    }

    /// The claims read, each leniently, so that one of a wrong type is refused by name rather
    /// than as unreadable.
    struct ChatClaims: JWTPayload {
        var iss: String?
        var aud: [String]
        var exp: Double?
        var iat: Double?
        var nbf: Double?
        var email: String?
        var emailVerified: Bool?

        enum CodingKeys: String, CodingKey {
            case iss, aud, exp, iat, nbf, email
            case emailVerified = "email_verified"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            iss = container.lenient(String.self, .iss)
            if let one = container.lenient(String.self, .aud) {
                aud = [one]
            } else {
                aud = container.lenient([String].self, .aud) ?? []
            }
            exp = container.lenient(Double.self, .exp)
            iat = container.lenient(Double.self, .iat)
            nbf = container.lenient(Double.self, .nbf)
            email = container.lenient(String.self, .email)
            emailVerified = container.lenient(Bool.self, .emailVerified)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(iss, forKey: .iss)
            try container.encode(aud, forKey: .aud)
            try container.encodeIfPresent(exp, forKey: .exp)
        }

        /// Checked by the validator, on the relay's clock.
        func verify(using algorithm: some JWTAlgorithm) {}
    }

    /// A payload read for nothing: the header is read before the signature is checked.
    private struct Unread: JWTPayload {
        init(from decoder: any Decoder) {}
        func encode(to encoder: any Encoder) {}
        func verify(using algorithm: some JWTAlgorithm) {}
    }
}

/// Why a request's token is refused: 401, or 503 while Google's certificates cannot be had.
/// Worded for the operator; never the token.
enum GoogleChatAuthError: Error, Sendable, Hashable, CustomStringConvertible {
    case missing
    case notBearer
    case malformed(String)
    case unknownKey
    case keysUnavailable(String)
    case badSignature
    case wrongIssuer
    case notGoogleChat
    case wrongAudience
    case expired
    case notYetValid

    var isUnavailable: Bool {
        if case .keysUnavailable = self { return true }
        return false
    }

    var description: String {
        switch self {
        case .missing: "No Authorization header: Google Chat signs every event with a bearer token."
        case .notBearer: "The Authorization header is not `Bearer <token>`."
        case .malformed(let reason): "The token is refused: \(reason)."
        case .unknownKey: "The token is refused: it is signed with a key Google does not publish."
        case .keysUnavailable(let reason): "Google's signing certificates could not be fetched (\(reason)); try again later."
        case .badSignature: "The token is refused: its signature does not match."
        case .wrongIssuer: "The token is refused: it was not issued by Google Chat."
        case .notGoogleChat: "The token is refused: it is a Google ID token, but not Google Chat's (its email is not chat@system.gserviceaccount.com)."
        case .wrongAudience: "The token is refused: it is for another app (its audience is not GOOGLE_CHAT_AUDIENCE)."
        case .expired: "The token is refused: it has expired."
        case .notYetValid: "The token is refused: it is not valid yet."
        }
    }
}
