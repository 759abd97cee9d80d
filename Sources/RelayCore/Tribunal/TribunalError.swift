/// Why a backend call failed, as a small value that knows how to explain itself: to a chat user
/// in their terms (`userMessage`), and to the operator with every detail (`operatorMessage`).
public enum TribunalError: Error, Sendable, Hashable {
    /// No connection could be made (refused, DNS, TLS).
    case unreachable(url: String, reason: String)
    /// No answer within the configured timeout; `setting` names the setting that sets it, for
    /// the operator (nil: the Rhea gateway's `tribunal.timeouts`).
    case timedOut(url: String, after: Duration, setting: String? = nil)
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
    /// A failure the relay has logged under an error id (`FailureReporting`): its user message
    /// carries the id instead of the details, which wait in the log line with the same id.
    indirect case reported(FailureReport)

    /// What failed and what to do, in words a chat user understands: never an address, a file
    /// path, a provider's own error text or a secret. A reported failure adds its error id (or,
    /// for the operator's terminal, shows `operatorMessage`).
    public var userMessage: String {
        if case .reported(let report) = self { return report.userMessage }
        return "\(summary). \(advice)"
    }

    /// The same, with the id of the log line that holds the details.
    public func userMessage(errorID: String) -> String {
        if case .reported(let report) = self { return report.error.userMessage(errorID: errorID) }
        return "\(summary) (error id \(errorID)). \(advice); if it keeps failing, give the id to an admin."
    }

    /// The same for a client of the served Rhea API, whose advice names the request's fields,
    /// never a chat command's flags (`--tier`); with the error id when the failure was logged.
    public var apiMessage: String {
        if case .reported(let report) = self {
            return "\(report.error.summary) (error id \(report.id)). \(report.error.apiAdvice); if it keeps failing, give the id to an admin."
        }
        return "\(summary). \(apiAdvice)"
    }

    /// `advice`, in the served API's terms.
    var apiAdvice: String {
        switch self {
        case .rejected: "Try shorter or simpler text, or another tier (the request's `tier` field)"
        case .providerFailed: "Try again, or ask for another tier (the request's `tier` field)"
        case .reported(let report): report.error.apiAdvice
        default: advice
        }
    }

    /// What failed, in the user's terms, without a full stop.
    var summary: String {
        switch self {
        case .unreachable: "The AI backend could not be reached"
        case .timedOut(_, let limit, _) where limit > .zero: "The AI backend did not answer in time (within \(Self.format(limit)) s)"
        case .timedOut: "The AI backend did not answer in time"
        case .unauthorized: "The AI backend refused the relay's credentials"
        case .paymentRequired: "The AI backend account is out of credits"
        case .rateLimited: "The AI backend is rate-limiting the relay"
        case .rejected: "The AI backend refused this request"
        case .serverError: "The AI backend failed, even after retries"
        case .providerFailed: "The AI model provider failed to answer"
        case .malformedResponse: "The AI backend sent an answer the relay could not read"
        case .notConfigured: "No AI backend is set up for this relay"
        case .reported(let report): report.error.summary
        }
    }

    /// What the user can do about it.
    var advice: String {
        switch self {
        case .unreachable, .timedOut, .serverError: "Try again in a minute"
        case .unauthorized, .notConfigured, .malformedResponse: "Ask an admin to check the relay's backend settings"
        case .paymentRequired: "Ask an admin to top up the account"
        case .rateLimited(_, let retryAfter): "Try again in about \(Self.clampedSeconds(retryAfter)) s"
        case .rejected: "Try shorter or simpler text, or another tier with --tier"
        case .providerFailed: "Try again, or pick another tier with --tier"
        case .reported(let report): report.error.advice
        }
    }

    /// What failed with every detail — the address, the reason, the provider's own text — for
    /// the log and the operator's terminal. Never contains a secret (clients redact keys when
    /// they read error bodies).
    public var operatorMessage: String {
        switch self {
        case .unreachable(let url, let reason):
            "Could not reach the AI backend at \(MaskedURL.display(url)) (\(reason)). Check that it is running, or set TRIBUNAL_URL (tribunal.url in the config file) to a reachable backend."
        case .timedOut(let url, let limit, let setting):
            "The AI backend at \(MaskedURL.display(url)) did not answer within \(Self.format(limit)) s. Try again in a minute, or raise the timeout (\(setting ?? "tribunal.timeouts"))."
        case .unauthorized(let detail):
            "The AI backend refused our credentials (\(detail)). Set TRIBUNAL_TOKEN or TRIBUNAL_API_KEY."
        case .paymentRequired(let detail):
            "The AI backend account is out of credits (\(detail)). Top it up."
        case .rateLimited(let detail, let retryAfter):
            "The AI backend is rate-limiting us (\(detail)). Try again in about \(Self.clampedSeconds(retryAfter)) s."
        case .rejected(let detail):
            "The AI backend refused the request: \(detail)"
        case .serverError(let status, let detail):
            "The AI backend failed (HTTP \(status)) even after retries: \(detail)"
        case .providerFailed(let detail):
            "The AI model provider failed: \(detail). Try again, or pick another tier with --tier."
        case .malformedResponse(let url, let reason):
            "The AI backend at \(MaskedURL.display(url)) sent an answer we could not read (\(reason)). Check that TRIBUNAL_URL points at a Rhea Tribunal server."
        case .notConfigured(let detail):
            "No AI backend is configured: \(detail)"
        case .reported(let report):
            "\(report.error.operatorMessage) (error id \(report.id))"
        }
    }

    /// A bounded label for metrics and logs.
    public var label: String {
        switch self {
        case .unreachable: "unreachable"
        case .timedOut: "timed_out"
        case .unauthorized: "unauthorized"
        case .paymentRequired: "payment_required"
        case .rateLimited: "rate_limited"
        case .rejected: "rejected"
        case .serverError: "server_error"
        case .providerFailed: "provider_failed"
        case .malformedResponse: "malformed"
        case .notConfigured: "not_configured"
        case .reported(let report): report.error.label
        }
    }

    /// The failure without its report: what the backend said.
    public var unreported: TribunalError {
        if case .reported(let report) = self { return report.error.unreported }
        return self
    }

    private static func format(_ duration: Duration) -> String {
        let seconds = duration.seconds
        guard seconds.isFinite, seconds >= 0, seconds < 1e9 else { return "?" }
        return seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }

    /// A wait to show: between 1 s and an hour, whatever a backend said.
    private static func clampedSeconds(_ seconds: Int) -> Int {
        min(max(seconds, 1), 3600)
    }
}

/// A backend failure the relay has logged: its error id, the failure, and who reads the reply.
public struct FailureReport: Sendable, Hashable {
    /// Short, unambiguous, and in the log line that holds the details (`7KQ2-M9`).
    public var id: String
    public var error: TribunalError
    public var audience: FailureReporting.Audience

    public init(id: String, error: TribunalError, audience: FailureReporting.Audience) {
        self.id = id
        self.error = error
        self.audience = audience
    }

    var userMessage: String {
        switch audience {
        case .chat: error.userMessage(errorID: id)
        case .operator: error.operatorMessage
        }
    }
}
