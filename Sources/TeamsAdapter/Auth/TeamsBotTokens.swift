import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import RelayCore
import RelayHTTP
import RelayPlatform

/// The relay's own token to the Bot Connector: the client-credentials grant of the Microsoft
/// identity platform (`POST TEAMS_TOKEN_URL`, `grant_type=client_credentials`, the app id and
/// password, scope `https://api.botframework.com/.default`). Kept until shortly before it
/// expires (tokens last an hour): one grant an hour, not one per reply; replies that need a
/// token while one is being fetched wait for that one.
enum TeamsBotTokens {
    static let timeout: Duration = .seconds(15)

    /// The kept token, granted on the relay's clock.
    static func renewing(configuration: TeamsConfiguration, transport: HTTPTransport, clock: any RelayClock) -> RenewingToken<TeamsSecret, TeamsAPIError> {
        RenewingToken(clock: clock) { now in await grant(configuration: configuration, transport: transport, now: now) }
    }

    static func grant(
        configuration: TeamsConfiguration, transport: HTTPTransport, now: Date
    ) async -> Result<(token: TeamsSecret, lifetime: Duration), TeamsAPIError> {
        let endpoint = "token"
        guard let appID = configuration.appID, let password = configuration.appPassword else {
            return .failure(.invalidRequest(endpoint: endpoint, reason: "TEAMS_APP_ID and TEAMS_APP_PASSWORD are not both set"))
        }
        var request = HTTPClientRequest(url: configuration.tokenURL)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "rhea-relay")
        let form = [
            ("grant_type", "client_credentials"), ("client_id", appID), ("client_secret", password.secret),
            ("scope", TeamsConfiguration.connectorScope),
        ]
        request.body = .bytes(ByteBuffer(string: form.map { "\($0)=\(formEncoded($1))" }.joined(separator: "&")))
        let answer: HTTPAnswer
        do throws(HTTPFailure) {
            answer = try await transport.exchange(request, timeout: timeout, maxBodyBytes: 64 * 1024)
        } catch {
            return .failure(TeamsAPIError(error, endpoint: endpoint))
        }
        switch answer.status {
        case 200..<300:
            guard let body = try? JSONDecoder().decode(TokenAnswer.self, from: Data(answer.body)), !body.accessToken.isEmpty else {
                return .failure(.malformed(endpoint: endpoint, reason: "no access_token in the answer"))
            }
            return .success((TeamsSecret(body.accessToken), .seconds(max(60, body.expiresIn ?? 3600))))
        case 429:
            return .failure(.rateLimited(endpoint: endpoint, retryAfter: answer.retryAfter(now: now) ?? .seconds(1)))
        case 500...:
            return .failure(.server(endpoint: endpoint, status: answer.status))
        default:
            // `{"error": "invalid_client", "error_description": "AADSTS7000215: Invalid client secret…"}`.
            let code = (try? JSONDecoder().decode(TokenError.self, from: Data(answer.body)))?.error ?? "http_\(answer.status)"
            return .failure(.refused(endpoint: endpoint, TeamsRefusal(code: TeamsRefusal.sanitized(code), status: answer.status, fromTokenEndpoint: true)))
        }
    }

    /// `application/x-www-form-urlencoded`: everything but unreserved characters escaped.
    static func formEncoded(_ value: String) -> String {
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    struct TokenAnswer: Decodable {
        var accessToken: String
        var expiresIn: Int?

        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token"
            case expiresIn = "expires_in"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            accessToken = try container.decode(String.self, forKey: .accessToken)
            // Microsoft's endpoints have sent it as a number and as a string.
            expiresIn = container.lenient(Int.self, .expiresIn) ?? container.lenient(String.self, .expiresIn).flatMap { Int($0) }
        }
    }

    struct TokenError: Decodable {
        var error: String?
    }
}
