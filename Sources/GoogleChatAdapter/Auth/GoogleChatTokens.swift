import AsyncHTTPClient
import Foundation
import JWTKit
import NIOCore
import NIOHTTP1
import RelayCore
import RelayHTTP
import RelayPlatform

/// The app's own token to the Chat API: the service account's JWT-bearer grant (RFC 7523, as
/// Google's client libraries make it): an RS256 assertion signed with the account's key
/// (`iss` the account, `scope` `chat.bot`, `aud` Google's token endpoint — always its canonical
/// URL, as google-auth writes it, wherever the grant is POSTed — an hour's life), POSTed to
/// `GOOGLE_CHAT_TOKEN_URL`. Kept until five minutes before it expires (one grant an hour, not one
/// per reply); replies that need a token while one is being fetched wait for that one.
enum GoogleChatTokens {
    static let timeout: Duration = .seconds(15)
    static let assertionLifetime: TimeInterval = 3600

    /// The kept token, granted on the relay's clock.
    static func renewing(configuration: GoogleChatConfiguration, transport: HTTPTransport, clock: any RelayClock) -> RenewingToken<String, GoogleChatAPIError> {
        RenewingToken(clock: clock) { now in await grant(configuration: configuration, transport: transport, now: now) }
    }

    static func grant(
        configuration: GoogleChatConfiguration, transport: HTTPTransport, now: Date
    ) async -> Result<(token: String, lifetime: Duration), GoogleChatAPIError> {
        let endpoint = "token"
        guard let account = configuration.serviceAccount else {
            return .failure(.invalidRequest(endpoint: endpoint, reason: "GOOGLE_CHAT_SERVICE_ACCOUNT is not set"))
        }
        let assertion: String
        do {
            assertion = try await self.assertion(account: account, audience: GoogleChatConfiguration.defaultTokenURL, now: now)
        } catch {
            return .failure(.invalidRequest(endpoint: endpoint, reason: "the service account's key cannot sign"))
        }
        var request = HTTPClientRequest(url: configuration.tokenURL)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "rhea-relay")
        let form = [("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"), ("assertion", assertion)]
        request.body = .bytes(ByteBuffer(string: form.map { "\($0)=\(GoogleChatAPI.escaped($1))" }.joined(separator: "&")))
        let answer: HTTPAnswer
        do throws(HTTPFailure) {
            answer = try await transport.exchange(request, timeout: timeout, maxBodyBytes: 64 * 1024)
        } catch {
            return .failure(GoogleChatAPIError(error, endpoint: endpoint))
        }
        switch answer.status {
        case 200..<300:
            guard let body = try? JSONDecoder().decode(TokenAnswer.self, from: Data(answer.body)), !body.access_token.isEmpty else {
                return .failure(.malformed(endpoint: endpoint, reason: "no access_token in the answer"))
            }
            return .success((body.access_token, .seconds(max(60, body.expires_in ?? 3600))))
        case 429:
            return .failure(.rateLimited(endpoint: endpoint, retryAfter: answer.retryAfter(now: now) ?? .seconds(1)))
        case 500...:
            return .failure(.server(endpoint: endpoint, status: answer.status))
        default:
            // `{"error": "invalid_grant", "error_description": "Invalid JWT Signature."}`.
            let code = (try? JSONDecoder().decode(TokenError.self, from: Data(answer.body)))?.error ?? "http_\(answer.status)"
            return .failure(
                .refused(endpoint: endpoint, GoogleChatRefusal(code: GoogleChatRefusal.sanitized(code), status: answer.status, fromTokenEndpoint: true)))
        }
    }

    /// The signed assertion the grant sends.
    static func assertion(account: GoogleServiceAccount, audience: String, now: Date) async throws -> String {
        let keys = JWTKeyCollection()
        let kid = JWKIdentifier(string: account.privateKeyID)
        await keys.add(rsa: try Insecure.RSA.PrivateKey(pem: account.privateKeyPEM), digestAlgorithm: .sha256, kid: kid)
        let issued = Int(now.timeIntervalSince1970)
        let claims = GrantClaims(
            iss: account.clientEmail, scope: GoogleChatConfiguration.botScope, aud: audience, iat: issued, exp: issued + Int(assertionLifetime))
        return try await keys.sign(claims, kid: kid)
    }

    struct GrantClaims: JWTPayload {
        var iss: String
        var scope: String
        var aud: String
        var iat: Int
        var exp: Int

        func verify(using algorithm: some JWTAlgorithm) {}
    }

    struct TokenAnswer: Decodable {
        var access_token: String
        var expires_in: Int?
    }

    struct TokenError: Decodable {
        var error: String?
    }
}
