/// Something `FakeSlackWebAPI` answers instead of its normal answer, once per request.
public enum FakeSlackFailure: Sendable, Hashable {
    /// HTTP 429 with `{"ok":false,"error":"ratelimited"}` and, when given,
    /// `Retry-After: retryAfter` (whole seconds, as Slack sends it).
    case rateLimited(retryAfter: Int?)
    /// This HTTP status with a plain-text body, as a proxy or Slack's edge answers a 5xx.
    case status(Int)
    /// HTTP 200 with `{"ok":false,"error":code}`, Slack's usual refusal.
    case error(String)
    /// The normal answer, after `seconds` (for timeouts).
    case slow(seconds: Double)
    /// HTTP 200 with a body that is not JSON.
    case malformed
}
