import AsyncHTTPClient
import Foundation
public import Logging
import NIOCore
import NIOHTTP1
public import RelayCore
public import RelayHTTP
public import RelayPlatform

/// Why a Mattermost call failed: the shared platform-call error with Mattermost's refusals.
/// Its `endpoint` is a route template (`POST /posts`) or `response_url`; never a token or a URL.
public typealias MattermostAPIError = PlatformCallError<MattermostRefusal>

/// Mattermost said no: its error JSON `{"id","message","request_id","status_code"}` with a 4xx.
public struct MattermostRefusal: PlatformRefusal {
    public static let platform = "Mattermost"

    /// A 401: the token is wrong, revoked, or its session expired.
    public var refusesCredentials: Bool { status == 401 }

    /// Mattermost's error id (`api.context.session_expired.app_error`), sanitised and bounded, or
    /// `http_<status>` when the body had none.
    public var id: String
    public var status: Int

    public init(id: String, status: Int) {
        self.id = id
        self.status = status
    }

    public var label: String { id }

    public var reason: String {
        switch status {
        case 401: "\(id) (the token was refused: check MATTERMOST_BOT_TOKEN)"
        case 403: "\(id) (the bot may not do this here: is it a member of the channel, with the permission?)"
        case 404: "\(id) (not found, or expired)"
        case 413: "\(id) (the message is too long)"
        default: id
        }
    }

    /// A 408 may pass.
    public var isTransient: Bool { status == 408 }
}

/// Mattermost's REST v4 as the adapter sees it: one primitive, typed helpers in extensions
/// (`MattermostAPI+Posts.swift`), so a test double implements a single method.
public protocol MattermostAPI: Sendable {
    /// Sends `request` and returns the answer for its caller to decode (`{}` for an empty or
    /// non-JSON 2xx body).
    /// - Throws: `MattermostAPIError` for every failure; its `deliveryOutcome` says whether to retry.
    func send(_ request: MattermostRequest) async throws(MattermostAPIError) -> MattermostAnswer

    /// Sends `request` (a REST `GET`) and streams the answer's body, cut off past `maxBytes`; a
    /// non-2xx answer comes back whole (it is small), for the caller to read.
    func download(_ request: MattermostRequest, maxBytes: Int, timeout: Duration) async throws(MattermostAPIError) -> HTTPTransport.Download
}

extension MattermostAPI {
    /// Test doubles that serve no files.
    public func download(_ request: MattermostRequest, maxBytes: Int, timeout: Duration) async throws(MattermostAPIError) -> HTTPTransport.Download {
        throw .invalidRequest(endpoint: request.label, reason: "this client downloads no files")
    }
}

/// One call: a REST route under `/api/v4` with the bot token, or a `response_url` (which is
/// its own credential, and is called only on `MATTERMOST_URL`'s `/hooks/commands/`). Its
/// descriptions never show a token or a URL.
public struct MattermostRequest: Sendable, Hashable, CustomStringConvertible {
    public enum Destination: Sendable, Hashable {
        /// `method` `/api/v4` + `path`; `label` names the route for logs (`POST /posts`).
        case api(method: String, path: String, label: String)
        /// A slash command's `response_url` (`/hooks/commands/{id}`): POSTed without a token.
        case responseURL(String)
    }

    public var destination: Destination
    public var body: JSONValue?

    public init(_ destination: Destination, body: JSONValue? = nil) {
        self.destination = destination
        self.body = body
    }

    public var label: String {
        switch destination {
        case .api(_, _, let label): label
        case .responseURL: "response_url"
        }
    }

    public var description: String { "MattermostRequest(\(label))" }
}

/// `MattermostAPI` over HTTP, on the relay's one transport.
///
/// Reads answers the way Mattermost means them: 2xx is success; 429 (`limit exceeded`, plain
/// text) is a rate limit for `X-Ratelimit-Reset` seconds (else `Retry-After`, else 1 s); 5xx a
/// server error; any other status a refusal with the error JSON's `id`.
public struct MattermostClient: MattermostAPI {
    static let timeout: Duration = .seconds(15)
    static let maxResponseBytes = 8 * 1024 * 1024

    let transport: HTTPTransport
    let serverURL: String?
    let botToken: MattermostToken?
    /// Where a `response_url` may be (`MattermostConfiguration.responseURLRule`), checked again
    /// before every call: an outbox entry stored before the rule, or any later caller, cannot
    /// send a request elsewhere either.
    let responseURLRule: CallbackRule
    let logger: Logger

    public init(transport: HTTPTransport, serverURL: String?, botToken: MattermostToken?, logger: Logger) {
        self.transport = transport
        self.serverURL = serverURL
        self.botToken = botToken
        self.responseURLRule = MattermostConfiguration.responseURLRule(serverURL: serverURL)
        self.logger = logger
    }

    public func send(_ request: MattermostRequest) async throws(MattermostAPIError) -> MattermostAnswer {
        let label = request.label
        let http = try makeRequest(request)
        let answer: HTTPAnswer
        do throws(HTTPFailure) {
            answer = try await transport.exchange(http, timeout: Self.timeout, maxBodyBytes: Self.maxResponseBytes)
        } catch {
            throw MattermostAPIError(error, endpoint: label)
        }
        return try Self.interpret(answer, endpoint: label).get()
    }

    public func download(_ request: MattermostRequest, maxBytes: Int, timeout: Duration) async throws(MattermostAPIError) -> HTTPTransport.Download {
        let http = try makeRequest(request)
        do throws(HTTPFailure) {
            return try await transport.download(http, timeout: timeout, maxBytes: maxBytes)
        } catch {
            throw MattermostAPIError(error, endpoint: request.label)
        }
    }

    /// The HTTP request: the bot token in the header for the REST API, none for a response URL.
    func makeRequest(_ request: MattermostRequest) throws(MattermostAPIError) -> HTTPClientRequest {
        let label = request.label
        var http: HTTPClientRequest
        switch request.destination {
        case .api(let method, let path, _):
            guard let serverURL, let botToken else {
                throw .invalidRequest(endpoint: label, reason: "MATTERMOST_URL and MATTERMOST_BOT_TOKEN are not both set")
            }
            http = HTTPClientRequest(url: serverURL + "/api/v4" + path)
            http.method = HTTPMethod(rawValue: method)
            http.headers.add(name: "Authorization", value: "Bearer \(botToken.secret)")
        case .responseURL(let url):
            let allowed: String
            do throws(CallbackRefusal) {
                allowed = try responseURLRule.check(url)
            } catch {
                throw .invalidRequest(endpoint: label, reason: "the response_url is refused: \(error.reason)")
            }
            http = HTTPClientRequest(url: allowed)
            http.method = .POST
        }
        http.headers.add(name: "Accept", value: "application/json")
        http.headers.add(name: "User-Agent", value: "rhea-relay")
        if let body = request.body {
            guard let bytes = body.serialized() else { throw .invalidRequest(endpoint: label, reason: "the body holds a number JSON cannot express") }
            http.headers.add(name: "Content-Type", value: "application/json")
            http.body = .bytes(ByteBuffer(bytes: bytes))
        }
        return http
    }

    /// What an answer means (see the type's documentation).
    static func interpret(_ answer: HTTPAnswer, endpoint: String) -> Result<MattermostAnswer, MattermostAPIError> {
        switch answer.status {
        case 200..<300:
            // A `response_url` may answer with an empty body: read as `{}`.
            let isJSON = (try? JSONDecoder().decode(MattermostErrorBody.self, from: Data(answer.body))) != nil
            return .success(MattermostAnswer(body: isJSON ? answer.body : Array("{}".utf8)))
        case 429:
            return .failure(.rateLimited(endpoint: endpoint, retryAfter: rateLimitReset(answer.headers) ?? .seconds(1)))
        case 500...:
            return .failure(.server(endpoint: endpoint, status: answer.status))
        default:
            let id = (try? JSONDecoder().decode(MattermostErrorBody.self, from: Data(answer.body)))?.id.map(sanitized) ?? "http_\(answer.status)"
            return .failure(.refused(endpoint: endpoint, MattermostRefusal(id: id, status: answer.status)))
        }
    }

    /// How long a 429 asks to wait: `X-Ratelimit-Reset` (seconds until the window resets), else
    /// `Retry-After`; read and clamped by `RetryAfter`, like every platform's.
    static func rateLimitReset(_ headers: HTTPHeaders) -> Duration? {
        if let reset = headers.first(name: "X-Ratelimit-Reset").flatMap({ Double($0.trimmingCharacters(in: .whitespaces)) }) {
            return RetryAfter.clamp(seconds: reset, source: "mattermost")
        }
        return RetryAfter.parse(headers.first(name: "Retry-After"), source: "mattermost")
    }

    /// An error id as Mattermost spells them (`[a-z0-9_.]`), cut short: a proxy's body must not
    /// put arbitrary text into logs or metric labels.
    static func sanitized(_ id: String) -> String {
        let kept = id.lowercased().unicodeScalars.filter { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "." }
        let text = String(String.UnicodeScalarView(kept.prefix(96)))
        return text.isEmpty ? "unknown_error" : text
    }
}

/// A 2xx answer's body, which the call that made the request decodes into the model of what
/// that route returns.
public struct MattermostAnswer: Sendable, Hashable {
    public var body: [UInt8]

    public init(body: [UInt8]) {
        self.body = body
    }

    /// The body read as `T`; one without what `T` requires is `.malformed`, naming the field.
    public func decode<T: Decodable>(_ type: T.Type, endpoint: String) throws(MattermostAPIError) -> T {
        do {
            return try PayloadDecoding.json(type, from: body, as: endpoint)
        } catch {
            throw .malformed(endpoint: endpoint, reason: error.problem)
        }
    }
}

/// An error answer (`{"id": "api.post.create_post.…", "message": …}`), for its `id`; read
/// leniently, as a proxy's JSON may hold anything.
struct MattermostErrorBody: Decodable {
    var id: String?

    private enum CodingKeys: String, CodingKey {
        case id
    }

    init(from decoder: any Decoder) throws {
        id = (try? decoder.container(keyedBy: CodingKeys.self))?.lenient(String.self, .id)
    }
}
