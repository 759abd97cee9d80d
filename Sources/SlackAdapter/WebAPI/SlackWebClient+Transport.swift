import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import RelayCore

extension SlackWebClient {
    /// A whole answer: status, `Retry-After` as sent, and the body.
    struct RawResponse: Sendable {
        var status: Int
        var retryAfter: String?
        var body: [UInt8]
    }

    /// The HTTP request for `request`; the token goes into the `Authorization` header only.
    func makeRequest(_ request: SlackWebRequest) throws(SlackAPIError) -> HTTPClientRequest {
        let label = request.label
        let url: String
        var authorization: String?
        switch request.destination {
        case .method(let method, let token):
            // A method name is a path segment; anything else could escape `{apiURL}/`.
            guard !method.isEmpty, method.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == ".") }) else {
                throw .invalidRequest(method: "unknown", reason: "not a Web API method name")
            }
            guard let token = token ?? botToken, !token.isEmpty else {
                throw .invalidRequest(method: label, reason: "no bot token is configured (SLACK_BOT_TOKEN)")
            }
            guard Self.isHTTPURL(apiURL) else {
                throw .invalidRequest(method: label, reason: "the Slack API URL is not an http(s) URL")
            }
            url = "\(apiURL)/\(method)"
            authorization = "Bearer \(token)"
        case .responseURL(let responseURL):
            guard Self.isHTTPURL(responseURL) else {
                throw .invalidRequest(method: label, reason: "the response_url is not an http(s) URL")
            }
            url = responseURL
        }
        let body: Data
        let contentType: String
        switch request.encoding {
        case .json:
            do {
                body = try JSONEncoder().encode(request.body)
            } catch {
                // Only a non-finite number gets here.
                throw .invalidRequest(method: label, reason: "the body holds a number JSON cannot express")
            }
            contentType = "application/json; charset=utf-8"
        case .form:
            body = Data(Self.formEncoded(request.body).utf8)
            contentType = "application/x-www-form-urlencoded"
        }
        var httpRequest = HTTPClientRequest(url: url)
        httpRequest.method = .POST
        httpRequest.headers.add(name: "Content-Type", value: contentType)
        httpRequest.headers.add(name: "Accept", value: "application/json")
        httpRequest.headers.add(name: "User-Agent", value: "rhea-relay")
        if let authorization {
            httpRequest.headers.add(name: "Authorization", value: authorization)
        }
        httpRequest.body = .bytes(ByteBuffer(data: body))
        return httpRequest
    }

    /// `a=1&b=x%20y` from an object's top-level scalars, in key order.
    static func formEncoded(_ body: JSONValue) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let pairs = (body.objectValue ?? [:]).sorted { $0.key < $1.key }.compactMap { key, value -> String? in
            let text: String
            switch value {
            case .string(let string): text = string
            case .int(let number): text = String(number)
            case .double(let number): text = String(number)
            case .bool(let flag): text = flag ? "true" : "false"
            default: return nil
            }
            let name = key.addingPercentEncoding(withAllowedCharacters: allowed) ?? key
            return name + "=" + (text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text)
        }
        return pairs.joined(separator: "&")
    }

    /// Sends `request` and reads the whole answer within `timeout` seconds.
    ///
    /// AsyncHTTPClient's deadline only bounds the wait for the response head, so the exchange
    /// runs under a time limit that also bounds a server that sends its head and then stalls.
    /// Cancelling the calling task cancels the request, and AsyncHTTPClient then closes the
    /// connection.
    func exchange(_ request: HTTPClientRequest, label: String, timeout: Double) async throws(SlackAPIError) -> RawResponse {
        if Task.isCancelled { throw .cancelled(method: label) }
        let client = httpClient
        let seconds = max(0.001, timeout)
        // A little later than the time limit, so the limit decides and this is a safety net.
        let deadline = NIODeadline.now() + .milliseconds(Int64((seconds * 1000).rounded(.up)) + 1000)
        do {
            return try await Self.withTimeLimit(seconds: seconds) {
                let response = try await client.execute(request, deadline: deadline)
                let body = try await response.body.collect(upTo: Self.maxResponseBytes)
                return RawResponse(
                    status: Int(response.status.code),
                    retryAfter: response.headers.first(name: "Retry-After"),
                    body: Array(body.readableBytesView))
            }
        } catch {
            throw Self.classify(error, method: label, timeout: seconds)
        }
    }

    /// A transport failure as a `SlackAPIError`. The reasons are fixed phrases, never an
    /// error's description, which could quote the URL (a `response_url` is a credential).
    static func classify(_ error: any Error, method: String, timeout: Double) -> SlackAPIError {
        if Task.isCancelled || error is CancellationError { return .cancelled(method: method) }
        if error is TimeLimitExceeded { return .timedOut(method: method, seconds: timeout) }
        if error is NIOTooManyBytesError {
            return .malformed(method: method, reason: "answer larger than \(maxResponseBytes / 1024) KB")
        }
        if let clientError = error as? HTTPClientError {
            switch clientError {
            case .deadlineExceeded, .readTimeout, .writeTimeout:
                return .timedOut(method: method, seconds: timeout)
            case .connectTimeout:
                return .unreachable(method: method, reason: "connect timed out")
            case .remoteConnectionClosed:
                return .unreachable(method: method, reason: "connection closed by the server")
            case .tlsHandshakeTimeout:
                return .unreachable(method: method, reason: "TLS handshake timed out")
            case .cancelled:
                // Not cancelled by our caller (checked above) nor by the time limit.
                return .unreachable(method: method, reason: "HTTP client shut down")
            case .invalidURL, .emptyHost, .emptyScheme:
                return .invalidRequest(method: method, reason: "not a valid http(s) URL")
            default:
                break
            }
        }
        return .unreachable(method: method, reason: ConnectionFailure.reason(error))
    }

    static func isHTTPURL(_ url: String) -> Bool {
        let lowered = url.lowercased()
        return lowered.hasPrefix("https://") || lowered.hasPrefix("http://")
    }
}

extension SlackWebClient {
    /// The answer did not arrive within the per-call time limit.
    struct TimeLimitExceeded: Error {}

    /// Runs `operation`, throwing `TimeLimitExceeded` (and cancelling it) after `seconds`.
    static func withTimeLimit<T: Sendable>(
        seconds: Double, _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await Task.sleep(for: .milliseconds(Int64((seconds * 1000).rounded(.up))))
                throw TimeLimitExceeded()
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { throw TimeLimitExceeded() }
            return first
        }
    }
}
