import AsyncHTTPClient
import Foundation
public import Logging
import NIOCore
import NIOHTTP1
public import RelayCore
public import RelayHTTP
public import RelayPlatform
import Synchronization

/// Why a Bot Connector call failed: the shared platform-call error with Teams' refusals. Its
/// `endpoint` names the call (`send activity`), never a URL (a `serviceUrl` holds ids).
public typealias TeamsAPIError = PlatformCallError<TeamsRefusal>

/// The Bot Connector (or the token endpoint) said no: its error code with a 4xx.
public struct TeamsRefusal: PlatformRefusal {
    public static let platform = "Teams"

    /// The Bot Connector's `error.code` (`BadArgument`, `ConversationNotFound`), or the token
    /// endpoint's `error` (`invalid_client`), sanitised; `http_<status>` when the body had none.
    public var code: String
    public var status: Int
    /// From the token endpoint: a 400/401 there is the app password (or id) refused.
    public var fromTokenEndpoint: Bool

    public init(code: String, status: Int, fromTokenEndpoint: Bool = false) {
        self.code = code
        self.status = status
        self.fromTokenEndpoint = fromTokenEndpoint
    }

    public var label: String { code }

    /// The token endpoint refusing the app's id or password (`invalid_client`,
    /// `unauthorized_client`), or the connector refusing the relay's token.
    public var refusesCredentials: Bool {
        fromTokenEndpoint ? [400, 401].contains(status) && code != "invalid_scope" : status == 401
    }

    public var reason: String {
        if fromTokenEndpoint {
            return refusesCredentials
                ? "\(code) (Microsoft refused the app's credentials: check TEAMS_APP_ID and TEAMS_APP_PASSWORD, and TEAMS_TENANT_ID for a single-tenant bot)"
                : code
        }
        switch status {
        case 401: return "\(code) (the Bot Connector refused the relay's token)"
        case 403: return "\(code) (the bot may not post here: is the app installed in this team or chat?)"
        case 404: return "\(code) (no such conversation or message)"
        case 413: return "\(code) (the message is too large)"
        default: return code
        }
    }

    /// Microsoft's guidance retries 412 as well as 429 and 5xx.
    public var isTransient: Bool { status == 412 || status == 408 }

    /// An error code as Microsoft spells them, cut short: a proxy's body must not put arbitrary
    /// text into logs or metric labels.
    static func sanitized(_ code: String) -> String {
        let kept = code.unicodeScalars.filter { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
        let text = String(String.UnicodeScalarView(kept.prefix(64)))
        return text.isEmpty ? "unknown_error" : text
    }
}

/// The Bot Connector's conversation API, on the relay's one transport, with the bot's token
/// (`TeamsBotTokens`): new activities (a reply in a conversation or thread), their updates (a
/// placeholder edited into an answer), and one-to-one conversations (a private answer).
///
/// 429 waits `Retry-After` (else 1 s), as does a 5xx that sends one; other 5xx and 412 are retried
/// by the outbox; a 401 forgets the token, so the next try fetches a new one.
struct TeamsConnector: Sendable {
    static let timeout: Duration = .seconds(15)
    static let maxResponseBytes = 1024 * 1024

    let transport: HTTPTransport
    let tokens: RenewingToken<TeamsSecret, TeamsAPIError>
    /// Where a token endpoint that refuses the app's password is reported (`/readyz`): Teams
    /// is webhook-only, so a reply is where a revoked secret shows.
    let credentials: CredentialReporter
    let clock: any RelayClock
    let logger: Logger
    /// Each asker's personal chat, once made (`POST /v3/conversations` answers the same id each
    /// time; this saves the call).
    let personalChats = TeamsPersonalChats()

    /// `POST {serviceUrl}/v3/conversations/{id}/activities[/{replyTo}]`; the new activity's id.
    func send(_ activity: JSONValue, serviceURL: String, conversation: String, replyTo: String?) async throws(TeamsAPIError) -> String? {
        var path = "/v3/conversations/\(Self.segment(conversation))/activities"
        if let replyTo { path += "/" + Self.segment(replyTo) }
        let answer = try await call(.POST, serviceURL: serviceURL, path: path, body: activity, endpoint: "send activity")
        return (try? JSONDecoder().decode(ResourceResponse.self, from: Data(answer.body)))?.id
    }

    /// `PUT {serviceUrl}/v3/conversations/{id}/activities/{activityId}`.
    func update(_ activity: JSONValue, serviceURL: String, conversation: String, activityID: String) async throws(TeamsAPIError) {
        let path = "/v3/conversations/\(Self.segment(conversation))/activities/\(Self.segment(activityID))"
        _ = try await call(.PUT, serviceURL: serviceURL, path: path, body: activity, endpoint: "update activity")
    }

    /// `POST {serviceUrl}/v3/conversations`: the one-to-one chat of the bot and `user` in
    /// `tenant`; its id.
    func personalConversation(serviceURL: String, user: String, tenant: String?, bot: String?) async throws(TeamsAPIError) -> String {
        var body: [String: JSONValue] = ["isGroup": false, "members": [["id": .string(user)]]]
        if let tenant {
            body["tenantId"] = .string(tenant)
            body["channelData"] = ["tenant": ["id": .string(tenant)]]
        }
        if let bot { body["bot"] = ["id": .string(bot)] }
        let answer = try await call(.POST, serviceURL: serviceURL, path: "/v3/conversations", body: .object(body), endpoint: "create conversation")
        guard let id = (try? JSONDecoder().decode(ResourceResponse.self, from: Data(answer.body)))?.id, !id.isEmpty else {
            throw .malformed(endpoint: "create conversation", reason: "no conversation id in the answer")
        }
        return id
    }

    private func call(_ method: HTTPMethod, serviceURL: String, path: String, body: JSONValue, endpoint: String) async throws(TeamsAPIError) -> HTTPAnswer {
        guard TeamsServiceURL.isAllowed(serviceURL) else {
            throw .invalidRequest(endpoint: endpoint, reason: "the activity's serviceUrl is not https")
        }
        guard let bytes = body.serialized() else { throw .invalidRequest(endpoint: endpoint, reason: "the body holds a number JSON cannot express") }
        let token: TeamsSecret
        do throws(TeamsAPIError) {
            token = try await tokens.token()
            credentials.accepted("TEAMS_APP_PASSWORD")
        } catch {
            if error.refusesCredentials { credentials.refused("TEAMS_APP_PASSWORD", reason: error.reason) }
            throw error
        }
        var request = HTTPClientRequest(url: TeamsServiceURL.join(serviceURL, path))
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token.secret)")
        request.headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "rhea-relay")
        request.body = .bytes(ByteBuffer(bytes: bytes))
        let answer: HTTPAnswer
        do throws(HTTPFailure) {
            answer = try await transport.exchange(request, timeout: Self.timeout, maxBodyBytes: Self.maxResponseBytes)
        } catch {
            throw TeamsAPIError(error, endpoint: endpoint)
        }
        switch answer.status {
        case 200..<300:
            return answer
        case 429:
            throw .rateLimited(endpoint: endpoint, retryAfter: answer.retryAfter(now: clock.now) ?? .seconds(1))
        case 500...:
            // A 503 that says when to come back is waited out as asked, not retried at once.
            if let retryAfter = answer.retryAfter(now: clock.now) { throw .rateLimited(endpoint: endpoint, retryAfter: retryAfter) }
            throw .server(endpoint: endpoint, status: answer.status)
        default:
            if answer.status == 401 { await tokens.forget() }
            let code = (try? JSONDecoder().decode(ErrorResponse.self, from: Data(answer.body)))?.error?.code ?? "http_\(answer.status)"
            throw .refused(endpoint: endpoint, TeamsRefusal(code: TeamsRefusal.sanitized(code), status: answer.status))
        }
    }

    /// One path segment: conversation ids hold `:`, `@` and `;` (`19:…@thread.tacv2;messageid=…`).
    static func segment(_ value: String) -> String {
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    /// `{"id": "…"}`, the Bot Connector's answer to a new activity or conversation.
    struct ResourceResponse: Decodable {
        var id: String?
    }

    /// `{"error": {"code": "BadArgument", "message": "…"}}`.
    struct ErrorResponse: Decodable {
        struct Detail: Decodable {
            var code: String?
        }

        var error: Detail?
    }
}

/// Each asker's personal chat with the bot, by their id: a saving, not a record, so it is
/// bounded — past `limit` askers it starts again (each is one `POST /v3/conversations` away).
final class TeamsPersonalChats: Sendable {
    static let limit = 10_000
    private let chats = Mutex<[String: String]>([:])

    subscript(user: String) -> String? {
        get { chats.withLock { $0[user] } }
        set {
            chats.withLock { chats in
                if chats.count >= Self.limit, chats[user] == nil { chats.removeAll(keepingCapacity: true) }
                chats[user] = newValue
            }
        }
    }
}
