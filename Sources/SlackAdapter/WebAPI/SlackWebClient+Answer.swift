import Foundation
import RelayCore
import RelayPlatform

extension SlackWebClient {
    /// Longest error code kept from an answer; Slack's are short snake_case words.
    static let maxCodeLength = 64

    /// Reads one answer the way Slack means it.
    ///
    /// - HTTP 429, or `ok: false` with `ratelimited`: rate limited for `retryAfter` (the
    ///   `Retry-After` header as `RetryAfter` reads it; 1 s when missing or unreadable, as
    ///   slack_sdk waits then too).
    /// - 2xx: `ok: true` is success and `ok: false` is Slack's refusal, whatever the status.
    ///   A `response_url` may answer plain text (`ok`), which is success too.
    /// - 5xx: a server error; other statuses: refused, with the body's `error` when it has one
    ///   (`expired_url` for a 404 from a `response_url` that says nothing).
    static func interpret(
        status: Int, retryAfter: Duration?, body: [UInt8], method: String, isResponseURL: Bool
    ) -> Result<JSONValue, SlackAPIError> {
        let json = JSONValue.parse(body)
        let ok = json?["ok"]?.boolValue
        let code = json?["error"]?.stringValue.map(sanitized)

        if status == 429 || (ok == false && code == "ratelimited") {
            return .failure(.rateLimited(endpoint: method, retryAfter: retryAfter ?? .seconds(1)))
        }
        switch status {
        case 200..<300:
            if ok == true, let json { return .success(json) }
            if ok == false { return .failure(.refused(endpoint: method, SlackRefusal(code: code ?? "unknown_error", status: status))) }
            if isResponseURL {
                if let json, json.objectValue != nil { return .success(json) }
                return .success([:])
            }
            return .failure(
                .malformed(endpoint: method, reason: json == nil ? "the body is not JSON" : "the body has no \"ok\""))
        case 500...:
            return .failure(.server(endpoint: method, status: status))
        default:
            let fallback = isResponseURL && (status == 404 || status == 410) ? "expired_url" : "http_\(status)"
            return .failure(.refused(endpoint: method, SlackRefusal(code: code ?? fallback, status: status)))
        }
    }

    /// Warnings on a successful answer: `warning` ("a,b") and `response_metadata.warnings`.
    static func warnings(in json: JSONValue) -> [String] {
        var found: [String] = []
        if let text = json["warning"]?.stringValue {
            found += text.split(separator: ",").map { sanitized(String($0)) }
        }
        for item in json["response_metadata"]?["warnings"]?.arrayValue ?? [] {
            if let text = item.stringValue { found.append(sanitized(text)) }
        }
        var seen = Set<String>()
        return found.filter { !$0.isEmpty && seen.insert($0).inserted }
    }

    /// An error code as Slack spells them (`[a-z0-9_.-]`), cut short: a proxy's body must not
    /// put arbitrary text into logs or metric labels.
    static func sanitized(_ code: String) -> String {
        let kept = code.lowercased().unicodeScalars.filter {
            ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "." || $0 == "-"
        }
        let text = String(String.UnicodeScalarView(kept.prefix(maxCodeLength)))
        return text.isEmpty ? "unknown_error" : text
    }
}
