import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import RelayCore
import RelayHTTP
public import RelayPlatform

/// Why a Chat API call failed: the shared platform-call error with Google's refusals. Its
/// `endpoint` names the call (`messages.create`), never a URL.
public typealias GoogleChatAPIError = PlatformCallError<GoogleChatRefusal>

/// The Chat API (or the token endpoint) said no: Google's error `status` (`NOT_FOUND`,
/// `PERMISSION_DENIED`) or the token endpoint's `error` (`invalid_grant`), with the HTTP status.
public struct GoogleChatRefusal: PlatformRefusal {
    public static let platform = "Google Chat"

    public var code: String
    public var status: Int
    /// From the token endpoint: a 400/401 there is the service account's key refused.
    public var fromTokenEndpoint: Bool

    public init(code: String, status: Int, fromTokenEndpoint: Bool = false) {
        self.code = code
        self.status = status
        self.fromTokenEndpoint = fromTokenEndpoint
    }

    public var label: String { code }

    public var refusesCredentials: Bool {
        fromTokenEndpoint ? [400, 401].contains(status) && code != "invalid_scope" : status == 401
    }

    public var reason: String {
        if fromTokenEndpoint {
            return refusesCredentials
                ? "\(code) (Google refused the service account's key: check GOOGLE_CHAT_SERVICE_ACCOUNT; a deleted key must be made again)" : code
        }
        switch status {
        case 401: return "\(code) (the Chat API refused the relay's token)"
        case 403: return "\(code) (the app may not post here: is it a member of the space, and is the Chat API enabled?)"
        case 404: return "\(code) (no such space or message)"
        default: return code
        }
    }

    /// Google's `ABORTED` and `UNAVAILABLE` may pass; a 408 too.
    public var isTransient: Bool { status == 408 || code == "ABORTED" || code == "UNAVAILABLE" }

    /// A code as Google spells them, cut short: a proxy's body must not put arbitrary text into
    /// logs or metric labels.
    static func sanitized(_ code: String) -> String {
        let kept = code.unicodeScalars.filter { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
        let text = String(String.UnicodeScalarView(kept.prefix(64)))
        return text.isEmpty ? "unknown_error" : text
    }
}

/// The Chat API's messages, on the relay's one transport, as the app (its service account's
/// token, `GoogleChatTokens`): `spaces.messages.create` (in a thread, once per `requestId`, so a
/// resend after a crash returns the message made the first time) and `spaces.messages.patch`.
///
/// 429 waits `Retry-After` (else 1 s), as does a 5xx that sends one; other 5xx are retried by the
/// outbox; a 401 forgets the token, so the next try fetches a new one.
struct GoogleChatAPI: Sendable {
    static let timeout: Duration = .seconds(15)
    static let maxResponseBytes = 1024 * 1024

    let baseURL: String
    let transport: HTTPTransport
    let tokens: RenewingToken<String, GoogleChatAPIError>
    /// Where a token endpoint that refuses the key is reported (`/readyz`).
    let credentials: CredentialReporter
    let clock: any RelayClock
    let logger: Logger

    /// `POST /v1/{space}/messages`: the new message's `name`.
    func create(_ message: JSONValue, space: String, requestID: String) async throws(GoogleChatAPIError) -> String {
        let query = "messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD&requestId=\(Self.escaped(requestID))"
        let answer = try await call(.POST, path: "/v1/\(try Self.resource(space, "spaces/"))/messages?\(query)", body: message, endpoint: "messages.create")
        guard let name = (try? JSONDecoder().decode(MessageName.self, from: Data(answer.body)))?.name, !name.isEmpty else {
            throw .malformed(endpoint: "messages.create", reason: "no message name in the answer")
        }
        return name
    }

    /// `PATCH /v1/{message}?updateMask=text,cardsV2`.
    func patch(_ message: JSONValue, name: String) async throws(GoogleChatAPIError) {
        let path = "/v1/\(try Self.resource(name, "spaces/"))?updateMask=\(Self.escaped(GoogleChatMessage.updateMask))"
        _ = try await call(.PATCH, path: path, body: message, endpoint: "messages.patch")
    }

    private func call(_ method: HTTPMethod, path: String, body: JSONValue, endpoint: String) async throws(GoogleChatAPIError) -> HTTPAnswer {
        guard let bytes = body.serialized() else { throw .invalidRequest(endpoint: endpoint, reason: "the body holds a number JSON cannot express") }
        let token: String
        do throws(GoogleChatAPIError) {
            token = try await tokens.token()
            credentials.accepted("GOOGLE_CHAT_SERVICE_ACCOUNT")
        } catch {
            if error.refusesCredentials { credentials.refused("GOOGLE_CHAT_SERVICE_ACCOUNT", reason: error.reason) }
            throw error
        }
        var request = HTTPClientRequest(url: Self.join(baseURL, path))
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "rhea-relay")
        request.body = .bytes(ByteBuffer(bytes: bytes))
        let answer: HTTPAnswer
        do throws(HTTPFailure) {
            answer = try await transport.exchange(request, timeout: Self.timeout, maxBodyBytes: Self.maxResponseBytes)
        } catch {
            throw GoogleChatAPIError(error, endpoint: endpoint)
        }
        switch answer.status {
        case 200..<300:
            return answer
        case 429:
            throw .rateLimited(endpoint: endpoint, retryAfter: answer.retryAfter(now: clock.now) ?? .seconds(1))
        case 500...:
            if let retryAfter = answer.retryAfter(now: clock.now) { throw .rateLimited(endpoint: endpoint, retryAfter: retryAfter) }
            throw .server(endpoint: endpoint, status: answer.status)
        default:
            if answer.status == 401 { await tokens.forget() }
            let code = (try? JSONDecoder().decode(ErrorResponse.self, from: Data(answer.body)))?.error?.status ?? "http_\(answer.status)"
            throw .refused(endpoint: endpoint, GoogleChatRefusal(code: GoogleChatRefusal.sanitized(code), status: answer.status))
        }
    }

    /// A resource name as a path: `spaces/…` with segments of letters, digits, `-`, `_`, `.`, so
    /// no name from a payload can reach another path or carry a query.
    static func resource(_ name: String, _ prefix: String) throws(GoogleChatAPIError) -> String {
        let segments = name.split(separator: "/", omittingEmptySubsequences: false)
        guard name.hasPrefix(prefix), segments.count >= 2, segments.count <= 6,
            segments.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." && $0.unicodeScalars.allSatisfy(isNameScalar) })
        else {
            throw .invalidRequest(endpoint: "resource", reason: "`\(name.prefix(80))` is not a Chat resource name")
        }
        return name
    }

    private static func isNameScalar(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "-_.".unicodeScalars.contains(scalar))
    }

    static func join(_ base: String, _ path: String) -> String {
        (base.hasSuffix("/") ? String(base.dropLast()) : base) + path
    }

    /// A query or form value: everything but unreserved characters escaped.
    static func escaped(_ value: String) -> String {
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    struct MessageName: Decodable {
        var name: String?
    }

    /// `{"error": {"code": 404, "message": "…", "status": "NOT_FOUND"}}`.
    struct ErrorResponse: Decodable {
        struct Detail: Decodable {
            var status: String?
        }

        var error: Detail?
    }
}
