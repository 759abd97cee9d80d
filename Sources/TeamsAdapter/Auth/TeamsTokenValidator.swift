import Foundation
import JWTKit
import RelayCore
import RelayPlatform

/// Checks the Bot Connector's `Authorization: Bearer` token on each request, as the Bot
/// Framework's own channel validation does: an RS256 JWT whose `kid` is one of the Bot
/// Connector's keys (`TeamsSigningKeys`) and whose signature holds; issued by the metadata's
/// issuer (`https://api.botframework.com`); for this bot (`aud` = `TEAMS_APP_ID`); within its
/// `nbf`/`exp`, five minutes either way for clocks that differ. `check(activity:)` then holds it
/// to the activity it came with: the key endorsed for the activity's channel, and the token's
/// `serviceurl` the activity's `serviceUrl`, so a token for one service cannot send the bot's
/// answers (and its bot token) to another.
struct TeamsTokenValidator: Sendable {
    /// How far the relay's clock and the Bot Connector's may differ.
    static let clockSkew: TimeInterval = 5 * 60
    /// Longer tokens are refused unread (the Bot Connector's are about 1.5 KB).
    static let maxLength = 16 * 1024

    let appID: String
    let keys: PublishedKeys<TeamsSigningKeys.KeySet>
    let clock: any RelayClock

    /// A token whose signature, issuer, audience and times hold, for `check(activity:)`.
    struct Accepted: Sendable {
        let serviceURL: String?
        let endorsements: Set<String>
    }

    /// The token in an `Authorization` header, or why it is refused.
    func validate(authorization: String?) async throws(TeamsAuthError) -> Accepted {
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
        let keySet: TeamsSigningKeys.KeySet
        switch await keys.lookUp(kid: kid) {
        case .found(let found): keySet = found
        case .unknown: throw .unknownKey
        case .unavailable(let reason): throw .keysUnavailable(reason)
        }
        let claims: ConnectorClaims
        do {
            claims = try await keySet.keys.verify(token, as: ConnectorClaims.self)
        } catch let error as JWTError where error.errorType == .signatureVerificationFailed {
            throw .badSignature
        } catch {
            throw .malformed("the token's claims are not what the Bot Connector sends")
        }
        guard claims.iss == keySet.issuer else { throw .wrongIssuer }
        guard claims.aud.contains(appID) else { throw .wrongAudience }
        let now = clock.now.timeIntervalSince1970
        guard let exp = claims.exp else { throw .malformed("the token has no expiry (exp)") }
        guard now <= exp + Self.clockSkew else { throw .expired }
        if let nbf = claims.nbf, now + Self.clockSkew < nbf { throw .notYetValid }
        return Accepted(serviceURL: claims.serviceurl, endorsements: keySet.endorsements[kid] ?? [])
    }

    /// Holds `accepted` to the activity it came with.
    func check(_ accepted: Accepted, activity: TeamsActivity) throws(TeamsAuthError) {
        guard accepted.endorsements.contains(activity.channelID) else { throw .notEndorsed }
        guard let claimed = accepted.serviceURL, Self.sameService(claimed, activity.serviceURL) else { throw .serviceURLMismatch }
        guard TeamsServiceURL.isAllowed(activity.serviceURL) else { throw .serviceURLNotAllowed }
    }

    /// The Bot Framework compares the two as strings; a trailing slash is all they may differ in.
    static func sameService(_ a: String, _ b: String) -> Bool {
        TeamsServiceURL.join(a, "") == TeamsServiceURL.join(b, "")
    }

    /// The claims read: each leniently, so that one of a wrong type is refused by name rather
    /// than as unreadable.
    struct ConnectorClaims: JWTPayload {
        var iss: String?
        var aud: [String]
        var exp: Double?
        var nbf: Double?
        var serviceurl: String?

        enum CodingKeys: String, CodingKey { case iss, aud, exp, nbf, serviceurl }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            iss = container.lenient(String.self, .iss)
            if let one = container.lenient(String.self, .aud) {
                aud = [one]
            } else {
                aud = container.lenient([String].self, .aud) ?? []
            }
            exp = container.lenient(Double.self, .exp)
            nbf = container.lenient(Double.self, .nbf)
            serviceurl = container.lenient(String.self, .serviceurl)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(iss, forKey: .iss)
            try container.encode(aud, forKey: .aud)
            try container.encodeIfPresent(exp, forKey: .exp)
            try container.encodeIfPresent(nbf, forKey: .nbf)
            try container.encodeIfPresent(serviceurl, forKey: .serviceurl)
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
