import Foundation
import Hummingbird

/// Decides who is calling, as the gateway does (contract §1.2), with its gaps closed: keys are
/// matched by digest (the file holds no key), a bearer token must be HS256-signed with the
/// configured secret, unexpired and not too long-lived, `dev-bypass` works only in development mode.
///
/// As on the gateway, a bad bearer token does not end the check when an `X-API-Key` is also
/// sent; without one, the answer says what was wrong with the token.
struct APIAuthenticator: Sendable {
    let keyDigests: Set<String>
    let bearer: BearerToken?
    let developmentMode: Bool

    init(_ settings: RheaAPISettings) {
        keyDigests = settings.keyDigests
        bearer = settings.jwtSecret.map { BearerToken(secret: $0, clockSkew: settings.clockSkew, maxLifetime: settings.maxTokenLifetime) }
        developmentMode = settings.developmentMode
    }

    /// The rate-limit bucket of an accepted caller (`user:<sub>` or `key:<digest prefix>`, never
    /// a key), or the 401 detail. Async for bearer tokens only: jwt-kit's key collection is an
    /// actor; a call with `X-API-Key` alone never waits.
    func caller(_ headers: HTTPFields, now: Date) async -> Result<String, Refused> {
        var tokenProblem: String?
        if let authorization = headers[.authorization] {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" {
                if let bearer {
                    switch await bearer.subject(of: String(parts[1]).trimmingCharacters(in: " \t"), now: now) {
                    case .success(let subject): return .success("user:\(subject)")
                    case .failure(let refusal): tokenProblem = refusal.reason
                    }
                } else {
                    tokenProblem = "this server accepts no bearer tokens (no api.jwtSecret is configured); send X-API-Key"
                }
            }
        }
        if let key = headers[Self.apiKey], !key.isEmpty {
            if developmentMode, key == RheaAPISettings.devBypassKey { return .success("key:dev-bypass") }
            let digest = APIKeyFile.digest(of: key)
            if keyDigests.contains(digest) { return .success("key:\(digest.prefix(16))") }
            return .failure(Refused(detail: "Invalid API key"))
        }
        if let tokenProblem { return .failure(Refused(detail: "Invalid bearer token: \(tokenProblem)")) }
        return .failure(Refused(detail: "Invalid or missing API key: send X-API-Key or Authorization: Bearer <token>"))
    }

    struct Refused: Error, Equatable {
        let detail: String
    }

    // `HTTPField.Name` through Hummingbird's re-exported `HTTPFields` (see `SlackHeaders`).
    static let apiKey = HTTPFields.Element.Name("X-API-Key")!
}
