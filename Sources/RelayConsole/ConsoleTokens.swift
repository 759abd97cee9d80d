import Crypto
public import Foundation
import JWTKit
public import RelayPipeline

/// Sign-in links and sessions, as HS256 JWTs under a key derived from the relay's lasting secret
/// (so every replica sharing a store makes and reads the same), and the CSRF token of a session.
///
/// A link and a session carry the same grant (platform, team, person) but are told apart by
/// `kind`: a link cannot be presented as a session, nor a session as a link. A link is used once:
/// its `jti` is claimed in the store (`Store.claimEvent`), which every replica shares. A session is
/// not kept anywhere: it ends when its `exp` passes, or when its cookie is dropped (sign-out).
public struct ConsoleTokens: ConsoleLinkMaker {
    /// jwt-kit's key collection (an actor, filled asynchronously) holding the one HS256 key.
    private let keys: Task<JWTKeyCollection, Never>
    private let csrfKey: SymmetricKey
    public let settings: ConsoleSettings

    public init(relaySecret: String, settings: ConsoleSettings) {
        let secret = SymmetricKey(data: Data(relaySecret.utf8))
        let salt = Data("rhea-relay console".utf8)
        let signing = HKDF<SHA256>.deriveKey(inputKeyMaterial: secret, salt: salt, info: Data("tokens".utf8), outputByteCount: 32)
        csrfKey = HKDF<SHA256>.deriveKey(inputKeyMaterial: secret, salt: salt, info: Data("csrf".utf8), outputByteCount: 32)
        let key = signing.withUnsafeBytes { HMACKey(from: Array($0)) }
        keys = Task {
            let keys = JWTKeyCollection()
            await keys.add(hmac: key, digestAlgorithm: .sha256)
            return keys
        }
        self.settings = settings
    }

    public func link(for grant: ConsoleGrant, now: Date) async throws -> ConsoleLink {
        let expires = now.addingTimeInterval(Self.seconds(ConsoleSettings.linkLifetime))
        let token = try await sign(grant, kind: .link, expires: expires)
        return ConsoleLink(url: settings.consoleURL + "signin?t=" + token, expiresAt: expires)
    }

    /// A session for `grant`, as the cookie's value, and when it ends.
    func session(for grant: ConsoleGrant, now: Date) async throws -> (token: String, expiresAt: Date) {
        let expires = now.addingTimeInterval(Self.seconds(settings.sessionLifetime))
        return (try await sign(grant, kind: .session, expires: expires), expires)
    }

    private func sign(_ grant: ConsoleGrant, kind: ConsoleClaims.Kind, expires: Date) async throws -> String {
        let claims = ConsoleClaims(
            kind: kind, platform: grant.platform, team: grant.team, sub: grant.user, name: grant.userName,
            exp: ExpirationClaim(value: expires), jti: IDClaim(value: UUID().uuidString))
        return try await keys.value.sign(claims)
    }

    /// The claims of a token of `kind`, or why it is refused (words safe to show).
    func read(_ token: String, as kind: ConsoleClaims.Kind, now: Date) async -> Result<ConsoleClaims, ConsoleRefusal> {
        // Only the header is read before the signature is checked (its claims are not).
        guard token.utf8.count <= 4_096, let header = try? DefaultJWTParser().parse(Array(token.utf8), as: Unread.self).header,
            header.alg == "HS256"
        else { return .failure(kind == .link ? .badLink : .noSession) }
        guard let claims = try? await keys.value.verify(token, as: ConsoleClaims.self), claims.kind == kind else {
            return .failure(kind == .link ? .badLink : .noSession)
        }
        guard claims.exp.value > now else { return .failure(kind == .link ? .expiredLink : .expiredSession) }
        return .success(claims)
    }

    /// The session's CSRF token: an HMAC of its id, so it needs no storage and no other session has it.
    func csrf(for claims: ConsoleClaims) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data(("csrf:" + claims.jti.value).utf8), using: csrfKey)
        return Data(mac).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Whether `presented` is the session's CSRF token (compared in constant time).
    func checks(csrf presented: String, for claims: ConsoleClaims) -> Bool {
        // Digest to digest: swift-crypto compares digests in constant time, whatever the lengths.
        SHA256.hash(data: Array(presented.utf8)) == SHA256.hash(data: Array(csrf(for: claims).utf8))
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// A payload left unread: the header is read before the signature is checked.
private struct Unread: JWTPayload {
    init(from decoder: any Decoder) {}
    func encode(to encoder: any Encoder) {}
    func verify(using algorithm: some JWTAlgorithm) {}
}

/// What a sign-in link or a session says.
struct ConsoleClaims: JWTPayload {
    enum Kind: String, Codable {
        case link
        case session
    }

    var kind: Kind
    var platform: String
    var team: String
    /// The person (their platform id).
    var sub: String
    /// Their name as the platform showed it.
    var name: String
    var exp: ExpirationClaim
    var jti: IDClaim

    var grant: ConsoleGrant { ConsoleGrant(platform: platform, team: team, user: sub, userName: name) }

    /// The relay's clock decides expiry (`ConsoleTokens.read`), not jwt-kit's.
    func verify(using algorithm: some JWTAlgorithm) {}
}

/// Why the console refuses a request, each with its HTTP status and what to do.
enum ConsoleRefusal: Error, Equatable {
    case badLink
    case expiredLink
    case usedLink
    case noSession
    case expiredSession
    case otherTeam(signedInTo: String)
    case badCSRF
    case badForm
    case formTooLarge

    var status: Int {
        switch self {
        case .badLink, .badForm: 400
        case .formTooLarge: 413
        case .expiredLink, .usedLink: 410
        case .noSession, .expiredSession: 401
        case .otherTeam, .badCSRF: 403
        }
    }

    var title: String {
        switch self {
        case .badLink: "This sign-in link is not valid"
        case .expiredLink: "This sign-in link has expired"
        case .usedLink: "This sign-in link was used already"
        case .noSession: "Sign in first"
        case .expiredSession: "Your sign-in has ended"
        case .otherTeam: "This page is another team's"
        case .badCSRF: "This form is out of date"
        case .badForm: "This form could not be read"
        case .formTooLarge: "This form is too large"
        }
    }

    var message: String {
        let ask = "Type `/admin console` in the team's chat (as one of its admins) for a new link."
        switch self {
        case .badLink: return "The link is damaged or was not made by this relay. \(ask)"
        case .expiredLink: return "A link works for \(Int(ConsoleTokens.seconds(ConsoleSettings.linkLifetime) / 60)) minutes. \(ask)"
        case .usedLink: return "Each link signs in once. \(ask)"
        case .noSession: return "The console opens with a one-time link. \(ask)"
        case .expiredSession: return "Sign-ins last a limited time. \(ask)"
        case .otherTeam(let team): return "You are signed in to \(team) only; each team's console opens with a link from that team's chat."
        case .badCSRF: return "The form did not come from your current sign-in. Reload the page and try again."
        case .badForm: return "It was not sent as the console's forms are (URL-encoded, with their fields). Reload the page and try again."
        case .formTooLarge: return "A form may send at most \(ConsoleRoutes.maxForm / 1024) KB; import fewer chains at once."
        }
    }
}
