import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import RelayCore
import RelayHTTP
import RelayPlatform

extension SlackWebClient {
    /// The HTTP request for `request`; the token goes into the `Authorization` header only.
    func makeRequest(_ request: SlackWebRequest) throws(SlackAPIError) -> HTTPClientRequest {
        let label = request.label
        let url: String
        var authorization: String?
        switch request.destination {
        case .method(let method, let token):
            // A method name is a path segment; anything else could escape `{apiURL}/`.
            guard !method.isEmpty, method.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == ".") }) else {
                throw .invalidRequest(endpoint: "unknown", reason: "not a Web API method name")
            }
            guard let token = token ?? botToken, !token.isEmpty else {
                throw .invalidRequest(endpoint: label, reason: "no bot token is configured (SLACK_BOT_TOKEN)")
            }
            guard Self.isHTTPURL(apiURL) else {
                throw .invalidRequest(endpoint: label, reason: "the Slack API URL is not an http(s) URL")
            }
            url = "\(apiURL)/\(method)"
            authorization = "Bearer \(token)"
        case .responseURL(let responseURL):
            guard Self.isHTTPURL(responseURL) else {
                throw .invalidRequest(endpoint: label, reason: "the response_url is not an http(s) URL")
            }
            url = responseURL
        }
        let body: [UInt8]
        let contentType: String
        switch request.encoding {
        case .json:
            guard let bytes = request.body.serialized() else {
                throw .invalidRequest(endpoint: label, reason: "the body holds a number JSON cannot express")
            }
            body = bytes
            contentType = "application/json; charset=utf-8"
        case .form:
            body = Array(Self.formEncoded(request.body).utf8)
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
        httpRequest.body = .bytes(ByteBuffer(bytes: body))
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

    /// Sends `request` through the shared transport and reads the whole answer within
    /// `timeout`; any status comes back as an answer, for `interpret` to read.
    func exchange(_ request: HTTPClientRequest, label: String, timeout: Duration) async throws(SlackAPIError) -> HTTPAnswer {
        do throws(HTTPFailure) {
            return try await transport.exchange(request, timeout: timeout, maxBodyBytes: Self.maxResponseBytes)
        } catch {
            throw SlackAPIError(error, endpoint: label)
        }
    }

    static func isHTTPURL(_ url: String) -> Bool {
        let lowered = url.lowercased()
        return lowered.hasPrefix("https://") || lowered.hasPrefix("http://")
    }
}
