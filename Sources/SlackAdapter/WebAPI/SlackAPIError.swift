/// Why a Slack Web API call or `response_url` post failed.
///
/// `method` is the Web API method (`chat.postMessage`) or `response_url`; nothing here ever
/// holds a token or a `response_url`. `reason` is one line fit for logs and the outbox's
/// `lastError`; `deliveryOutcome` says what the outbox should do next.
public enum SlackAPIError: Error, Sendable, Hashable {
    /// HTTP 429 or `{"ok":false,"error":"ratelimited"}`: wait `retryAfter` (`Retry-After`,
    /// read and clamped by `RetryAfter`; 1 s when the header is missing or unreadable).
    case rateLimited(method: String, retryAfter: Duration)
    /// Slack said no: `{"ok":false,"error":code}` (usually with HTTP 200), or a 4xx such as
    /// a 404 from an expired `response_url`. `code` is Slack's error string.
    case api(method: String, code: String, status: Int)
    /// HTTP 5xx.
    case server(method: String, status: Int)
    /// No whole answer within the per-call timeout.
    case timedOut(method: String, after: Duration)
    /// The connection failed: refused, reset, DNS, TLS.
    case unreachable(method: String, reason: String)
    /// A 2xx whose body is not Slack's JSON, or lacks what the method returns (a `ts`…).
    case malformed(method: String, reason: String)
    /// The request could not be made: no token configured, a bad URL, a body that is not JSON.
    case invalidRequest(method: String, reason: String)
    /// The calling task was cancelled (shutdown); the outcome of the call is unknown.
    case cancelled(method: String)
}

extension SlackAPIError {
    /// The method called, or `response_url`.
    public var method: String {
        switch self {
        case .rateLimited(let method, _), .api(let method, _, _), .server(let method, _),
            .timedOut(let method, _), .unreachable(let method, _), .malformed(let method, _),
            .invalidRequest(let method, _), .cancelled(let method):
            method
        }
    }

    /// Slack's error code (`channel_not_found`), or a code of ours in the same style for
    /// failures Slack did not name (`http_503`, `timeout`, `connection_failed`…). Bounded,
    /// so fit for a metric label.
    public var code: String {
        switch self {
        case .rateLimited: "ratelimited"
        case .api(_, let code, _): code
        case .server(_, let status): "http_\(status)"
        case .timedOut: "timeout"
        case .unreachable: "connection_failed"
        case .malformed: "malformed_response"
        case .invalidRequest: "invalid_request"
        case .cancelled: "cancelled"
        }
    }
}
