/// Why a backend call failed, as a small value that knows how to explain itself to a chat user.
public enum TribunalError: Error, Sendable, Hashable {
    /// No connection could be made (refused, DNS, TLS).
    case unreachable(url: String, reason: String)
    /// No answer within the configured timeout.
    case timedOut(url: String, after: Duration)
    /// 401: credentials missing or refused.
    case unauthorized(detail: String)
    /// 402: the account has no credits left.
    case paymentRequired(detail: String)
    /// 429: too many requests; calls are held back for `retryAfter` seconds.
    case rateLimited(detail: String, retryAfter: Int)
    /// 422 or 400: the backend refused the request as given.
    case rejected(detail: String)
    /// 5xx after retries.
    case serverError(status: Int, detail: String)
    /// The backend answered 200 but its model provider failed (`Error: …` text).
    case providerFailed(detail: String)
    /// The answer could not be read.
    case malformedResponse(url: String, reason: String)
    /// The backend is not set up (no URL, no models).
    case notConfigured(detail: String)

    /// What failed and what to do, in words a chat user understands. Never contains a secret.
    public var userMessage: String {
        switch self {
        case .unreachable(let url, let reason):
            "Could not reach the AI backend at \(url) (\(reason)). Check that it is running, or set TRIBUNAL_URL (tribunal.url in the config file) to a reachable backend."
        case .timedOut(let url, let limit):
            "The AI backend at \(url) did not answer within \(Self.format(limit)) s. Try again in a minute, or ask an admin to raise the timeout (tribunal.timeouts)."
        case .unauthorized(let detail):
            "The AI backend refused our credentials (\(detail)). Ask an admin to set TRIBUNAL_TOKEN or TRIBUNAL_API_KEY."
        case .paymentRequired(let detail):
            "The AI backend account is out of credits (\(detail)). Ask an admin to top it up."
        case .rateLimited(_, let retryAfter):
            "The AI backend is rate-limiting us. Try again in about \(retryAfter) s."
        case .rejected(let detail):
            "The AI backend refused the request: \(detail)"
        case .serverError(let status, _):
            "The AI backend failed (HTTP \(status)) even after retries. Try again in a few minutes."
        case .providerFailed(let detail):
            "The AI model provider failed: \(detail). Try again, or pick another tier with --tier."
        case .malformedResponse(let url, _):
            "The AI backend at \(url) sent an answer we could not read. Check that TRIBUNAL_URL points at a Rhea Tribunal server."
        case .notConfigured(let detail):
            "No AI backend is configured: \(detail)"
        }
    }

    /// A bounded label for metrics and logs.
    public var label: String {
        switch self {
        case .unreachable: "unreachable"
        case .timedOut: "timeout"
        case .unauthorized: "unauthorized"
        case .paymentRequired: "payment_required"
        case .rateLimited: "rate_limited"
        case .rejected: "rejected"
        case .serverError: "server_error"
        case .providerFailed: "provider_failed"
        case .malformedResponse: "malformed"
        case .notConfigured: "not_configured"
        }
    }

    private static func format(_ duration: Duration) -> String {
        let seconds = duration.seconds
        return seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}
