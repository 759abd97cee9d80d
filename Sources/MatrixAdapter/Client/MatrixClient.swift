import AsyncHTTPClient
import Foundation
public import Logging
import NIOCore
import NIOHTTP1
public import RelayCore
public import RelayHTTP
public import RelayPlatform

/// One call to the client-server API: a method, a path under `/_matrix/client/<version>/` given
/// as segments (the client percent-encodes each, so a room id's `!` and `:` or an event id's `$`
/// never change the path's meaning), a query, and a JSON body.
public struct MatrixRequest: Sendable, Hashable {
    public enum Method: String, Sendable, Hashable {
        case get = "GET"
        case post = "POST"
        case put = "PUT"
    }

    public var method: Method
    public var path: [String]
    public var query: [String: String]
    public var body: JSONValue?
    /// What the call is called in logs and errors (`send`, `sync`): never a path, which holds ids.
    public var endpoint: String
    /// The whole exchange's limit; the client's own when nil.
    public var timeout: Duration?
    /// `v3` for most calls; `v1` for those the spec added later (relations, media).
    public var version: String
    /// The API the path is under: `client` (`/_matrix/client/…`), or `media` for the
    /// unauthenticated media API that homeservers before spec v1.11 offer instead.
    public var api: String

    public init(
        _ method: Method, _ path: [String], query: [String: String] = [:], body: JSONValue? = nil, endpoint: String, timeout: Duration? = nil,
        version: String = "v3", api: String = "client"
    ) {
        self.version = version
        self.api = api
        self.method = method
        self.path = path
        self.query = query
        self.body = body
        self.endpoint = endpoint
        self.timeout = timeout
    }
}

/// The homeserver as the adapter sees it: one primitive, `call`, with the typed calls it uses in
/// an extension (`MatrixAPI+Calls.swift`), so a test double implements a single method.
public protocol MatrixAPI: Sendable {
    /// Makes `request` and returns the answer (a JSON object) for its caller to decode.
    ///
    /// - Throws: a `MatrixAPIError` for every failure; its `deliveryOutcome` says whether to retry.
    func call(_ request: MatrixRequest) async throws(MatrixAPIError) -> MatrixAnswer

    /// Makes `request` and streams the answer's body (media), cut off past `maxBytes`; a non-2xx
    /// answer comes back whole (it is small), for the caller to read.
    func download(_ request: MatrixRequest, maxBytes: Int) async throws(MatrixAPIError) -> HTTPTransport.Download
}

extension MatrixAPI {
    /// Test doubles that serve no media.
    public func download(_ request: MatrixRequest, maxBytes: Int) async throws(MatrixAPIError) -> HTTPTransport.Download {
        throw .invalidRequest(endpoint: request.endpoint, reason: "this client downloads no media")
    }
}

/// `MatrixAPI` on the relay's shared `HTTPTransport`, with `Authorization: Bearer <token>`.
///
/// A 429 (`M_LIMIT_EXCEEDED`) becomes `.rateLimited`, waiting `Retry-After` or else the body's
/// `retry_after_ms` (deprecated since spec v1.10; Synapse still sends both), else 1 s; the outbox
/// waits it out. No retries here. The token goes only into the header: neither it nor a URL ever
/// reaches a log or an error.
public struct MatrixClient: MatrixAPI {
    public static let defaultTimeout: Duration = .seconds(15)
    /// Longest answer read: a `/sync` of a busy account stays well under this.
    static let maxResponseBytes = 16 * 1024 * 1024

    let transport: HTTPTransport
    /// The homeserver's base URL without a trailing slash: `https://matrix.example.org`.
    public let homeserverURL: String
    let token: MatrixToken
    let logger: Logger
    public let timeout: Duration

    public init(transport: HTTPTransport, homeserverURL: String, token: MatrixToken, logger: Logger, timeout: Duration = MatrixClient.defaultTimeout) {
        self.transport = transport
        var base = homeserverURL.trimmingCharacters(in: .whitespaces)
        while base.hasSuffix("/") { base.removeLast() }
        self.homeserverURL = base
        self.token = token
        self.timeout = timeout
        var logger = logger
        logger[metadataKey: "platform"] = "matrix"
        self.logger = logger
    }

    public func call(_ request: MatrixRequest) async throws(MatrixAPIError) -> MatrixAnswer {
        let http = try makeRequest(request)
        let answer: HTTPAnswer
        do throws(HTTPFailure) {
            answer = try await transport.exchange(http, timeout: request.timeout ?? timeout, maxBodyBytes: Self.maxResponseBytes)
        } catch {
            let failure = MatrixAPIError(error, endpoint: request.endpoint)
            log(failure)
            throw failure
        }
        do throws(MatrixAPIError) {
            return try Self.interpret(answer, endpoint: request.endpoint)
        } catch {
            log(error)
            throw error
        }
    }

    public func download(_ request: MatrixRequest, maxBytes: Int) async throws(MatrixAPIError) -> HTTPTransport.Download {
        let http = try makeRequest(request)
        do throws(HTTPFailure) {
            return try await transport.download(http, timeout: request.timeout ?? timeout, maxBytes: maxBytes)
        } catch {
            let failure = MatrixAPIError(error, endpoint: request.endpoint)
            log(failure)
            throw failure
        }
    }

    /// The HTTP request: the path's segments percent-encoded, the token in the header only.
    func makeRequest(_ request: MatrixRequest) throws(MatrixAPIError) -> HTTPClientRequest {
        let lowered = homeserverURL.lowercased()
        guard lowered.hasPrefix("https://") || lowered.hasPrefix("http://") else {
            throw .invalidRequest(endpoint: request.endpoint, reason: "the homeserver URL is not an http(s) URL (MATRIX_HOMESERVER_URL)")
        }
        guard !token.secret.isEmpty, token.secret.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F }) else {
            throw .invalidRequest(endpoint: request.endpoint, reason: "the access token is empty or not printable ASCII (MATRIX_ACCESS_TOKEN)")
        }
        guard ["client", "media"].contains(request.api), request.version.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw .invalidRequest(endpoint: request.endpoint, reason: "not a client-server API")
        }
        var url = homeserverURL + "/_matrix/" + request.api + "/" + request.version
        for segment in request.path {
            guard !segment.isEmpty, let encoded = segment.addingPercentEncoding(withAllowedCharacters: Self.segmentCharacters) else {
                throw .invalidRequest(endpoint: request.endpoint, reason: "an empty or unencodable path segment")
            }
            url += "/" + encoded
        }
        if !request.query.isEmpty {
            url +=
                "?"
                + request.query.sorted { $0.key < $1.key }.map { key, value in
                    key + "=" + (value.addingPercentEncoding(withAllowedCharacters: Self.segmentCharacters) ?? "")
                }.joined(separator: "&")
        }
        var http = HTTPClientRequest(url: url)
        http.method = HTTPMethod(rawValue: request.method.rawValue)
        http.headers.add(name: "Authorization", value: "Bearer " + token.secret)
        http.headers.add(name: "Accept", value: "application/json")
        http.headers.add(name: "User-Agent", value: "rhea-relay")
        if let body = request.body {
            guard let bytes = body.serialized() else {
                throw .invalidRequest(endpoint: request.endpoint, reason: "the body holds a number JSON cannot express")
            }
            http.headers.add(name: "Content-Type", value: "application/json")
            http.body = .bytes(ByteBuffer(bytes: bytes))
        }
        return http
    }

    /// RFC 3986's unreserved characters: everything else in a segment or a query value is escaped.
    static let segmentCharacters = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// The JSON of a 2xx answer; anything else as the matching error.
    ///
    /// - 429 (or `M_LIMIT_EXCEEDED`): `.rateLimited`, waiting `Retry-After`, else `retry_after_ms`, else 1 s.
    /// - 5xx: `.server`.
    /// - Another 4xx: refused, with the body's `errcode` and `error`.
    /// - A 2xx that is not a JSON object: `.malformed`.
    public static func interpret(_ answer: HTTPAnswer, endpoint: String) throws(MatrixAPIError) -> MatrixAnswer {
        let json = MatrixErrorBody.read(answer.body)
        let errcode = json?.errcode
        if answer.status == 429 || errcode == "M_LIMIT_EXCEEDED" {
            let fromHeader = RetryAfter.parse(answer.headers.first(name: "Retry-After"), source: "matrix")
            let fromBody = json?.retryAfterMS.flatMap { RetryAfter.clamp(seconds: $0 / 1000, source: "matrix") }
            throw .rateLimited(endpoint: endpoint, retryAfter: fromHeader ?? fromBody ?? .seconds(1))
        }
        if (200..<300).contains(answer.status) {
            guard let json, json.isObject else { throw .malformed(endpoint: endpoint, reason: json == nil ? "not JSON" : "not a JSON object") }
            return MatrixAnswer(body: answer.body)
        }
        if answer.status >= 500 { throw .server(endpoint: endpoint, status: answer.status) }
        throw .refused(
            endpoint: endpoint,
            MatrixRefusal(status: answer.status, errcode: errcode ?? "M_UNKNOWN", message: MatrixRefusal.bounded(json?.error ?? "")))
    }

    /// One line per failed call: a notice for a 429, debug for the rest (the outbox and the
    /// syncer report what they do about it).
    private func log(_ error: MatrixAPIError) {
        if case .rateLimited(let endpoint, let retryAfter) = error {
            logger.notice(
                "the homeserver rate limited a call", metadata: ["matrix.call": "\(endpoint)", "matrix.retry_after": "\(MatrixAPIError.seconds(retryAfter))"])
        } else {
            logger.debug("Matrix call failed", metadata: ["matrix.call": "\(error.endpoint)", "matrix.error": "\(error.label)"])
        }
    }
}

/// A 2xx answer (a JSON object), which the call that made the request decodes into the model of
/// what that endpoint returns.
public struct MatrixAnswer: Sendable, Hashable {
    public var body: [UInt8]

    public init(body: [UInt8]) {
        self.body = body
    }

    /// An answer with these members: what a test double returns.
    public init(_ members: JSONValue) {
        self.init(body: members.encoded())
    }

    /// The body read as `T`; one without what `T` requires is `.malformed`, naming the field.
    public func decode<T: Decodable>(_ type: T.Type, endpoint: String) throws(MatrixAPIError) -> T {
        do {
            return try PayloadDecoding.json(type, from: body, as: endpoint)
        } catch {
            throw .malformed(endpoint: endpoint, reason: error.problem)
        }
    }
}

/// The members of an answer the client reads whatever the call (`errcode`, `error`,
/// `retry_after_ms`), leniently: a proxy's JSON may hold anything.
struct MatrixErrorBody: Decodable {
    var isObject = false
    var errcode: String?
    var error: String?
    var retryAfterMS: Double?

    private enum CodingKeys: String, CodingKey {
        case errcode, error
        case retryAfterMS = "retry_after_ms"
    }

    init(from decoder: any Decoder) throws {
        guard let container = try? decoder.container(keyedBy: CodingKeys.self) else { return }
        isObject = true
        errcode = container.lenient(String.self, .errcode)
        error = container.lenient(String.self, .error)
        retryAfterMS = container.lenient(Double.self, .retryAfterMS)
    }

    /// The members of `body`; nil when it is not JSON at all.
    static func read(_ body: [UInt8]) -> MatrixErrorBody? {
        try? JSONDecoder().decode(MatrixErrorBody.self, from: Data(body))
    }
}
