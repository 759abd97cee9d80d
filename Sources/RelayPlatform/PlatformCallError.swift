import RelayCore
public import RelayHTTP
public import RelayPipeline

/// What a platform's API says when it refuses a call in its own terms: an error code in a 200
/// answer (`{"ok":false,"error":"channel_not_found"}`), a JSON error code with its status, an
/// `error_code` and `description`. An adapter declares only this; every failure of the transport
/// and every rate limit is `PlatformCallError`'s, worded and sorted once for all platforms.
public protocol PlatformRefusal: Sendable, Hashable {
    /// The platform's name in sentences: "Foo answered HTTP 503".
    static var platform: String { get }
    /// How a rate limit reads in a reason, after the endpoint: "rate limited" unless the platform
    /// words it otherwise.
    static var rateLimitedPhrase: String { get }
    /// A bounded label for logs and metrics: the API's error code, `http_403`, `migrated`.
    var label: String { get }
    /// What the platform said, for the reason after the endpoint; never a credential.
    var reason: String { get }
    /// Whether the same call may succeed later (an `internal_error`, a 408): such a
    /// refusal is retried; any other is final.
    var isTransient: Bool { get }
    /// Whether the platform refused the relay's credentials (a wrong or revoked token), rather
    /// than the call: such a refusal is reported in `/readyz` (`CredentialReporter`).
    var refusesCredentials: Bool { get }
}

extension PlatformRefusal {
    public static var rateLimitedPhrase: String { "rate limited" }
    public var isTransient: Bool { false }
}

/// Why a call to a platform's API failed: the one error type of every platform client
/// (a platform's `FooAPIError` is this with its `Refusal`).
///
/// `endpoint` names what was called (an API method such as `postMessage`, a route
/// template, `response_url`), never a URL or a path, which may hold a token. `label` is bounded,
/// for metrics; `reason` is one line for logs and the outbox's `lastError`; `deliveryOutcome`
/// says what the outbox should do next.
public enum PlatformCallError<Refusal: PlatformRefusal>: DeliveryFailure, Sendable, Hashable {
    /// A 429 (or a wait in the client's own limiter longer than it queues for): no sooner than
    /// `retryAfter`, read and clamped by `RetryAfter`.
    case rateLimited(endpoint: String, retryAfter: Duration)
    /// The platform said no, in its own terms.
    case refused(endpoint: String, Refusal)
    /// HTTP 5xx.
    case server(endpoint: String, status: Int)
    /// No whole answer within the time limit.
    case timedOut(endpoint: String, after: Duration)
    /// No connection: refused, reset, DNS, network unreachable.
    case unreachable(endpoint: String, reason: String)
    /// The TLS handshake failed (certificate, protocol).
    case tls(endpoint: String, reason: String)
    /// A 2xx whose body is not what the endpoint returns.
    case malformed(endpoint: String, reason: String)
    /// The request could not be made: no token configured, a bad URL or path, a body JSON cannot
    /// express.
    case invalidRequest(endpoint: String, reason: String)
    /// The calling task was cancelled (shutdown); the outcome of the call is unknown.
    case cancelled(endpoint: String)
}

extension PlatformCallError {
    /// The transport's failure, in its fixed phrases: never an underlying error's text, which
    /// could quote the URL and the token or `response_url` in it.
    ///
    /// A status reaches here only through `HTTPAnswer.requireSuccess()`; the clients read their
    /// answers' statuses themselves, so it is taken as the server's failure and retried.
    public init(_ failure: HTTPFailure, endpoint: String) {
        switch failure {
        case .cancelled: self = .cancelled(endpoint: endpoint)
        case .timedOut(let after): self = .timedOut(endpoint: endpoint, after: after)
        case .unreachable(let reason): self = .unreachable(endpoint: endpoint, reason: reason)
        case .tls(let reason): self = .tls(endpoint: endpoint, reason: reason)
        case .malformed(let reason): self = .malformed(endpoint: endpoint, reason: reason)
        case .invalidURL(let reason): self = .invalidRequest(endpoint: endpoint, reason: reason)
        case .status(let answer): self = .server(endpoint: endpoint, status: answer.status)
        }
    }

    /// What was called.
    public var endpoint: String {
        switch self {
        case .rateLimited(let endpoint, _), .refused(let endpoint, _), .server(let endpoint, _), .timedOut(let endpoint, _),
            .unreachable(let endpoint, _), .tls(let endpoint, _), .malformed(let endpoint, _), .invalidRequest(let endpoint, _),
            .cancelled(let endpoint):
            endpoint
        }
    }

    /// A bounded label for logs and metrics: the refusal's own, or the kind of failure
    /// (`rate_limited`, `http_503`, `timed_out`…).
    public var label: String {
        switch self {
        case .rateLimited: "rate_limited"
        case .refused(_, let refusal): refusal.label
        case .server(_, let status): "http_\(status)"
        case .timedOut: "timed_out"
        case .unreachable: "unreachable"
        case .tls: "tls"
        case .malformed: "malformed_response"
        case .invalidRequest: "invalid_request"
        case .cancelled: "cancelled"
        }
    }

    /// One line for logs and the outbox: "postMessage: Foo answered HTTP 503". Never
    /// holds a token or a URL.
    public var reason: String {
        switch self {
        case .rateLimited(let endpoint, let retryAfter):
            "\(endpoint): \(Refusal.rateLimitedPhrase) (retry after \(Self.seconds(retryAfter)) s)"
        case .refused(let endpoint, let refusal): "\(endpoint): \(refusal.reason)"
        case .server(let endpoint, let status): "\(endpoint): \(Refusal.platform) answered HTTP \(status)"
        case .timedOut(let endpoint, let after): "\(endpoint): no answer within \(Self.seconds(after)) s"
        case .unreachable(let endpoint, let reason), .tls(let endpoint, let reason), .invalidRequest(let endpoint, let reason):
            "\(endpoint): \(reason)"
        case .malformed(let endpoint, let reason): "\(endpoint): unexpected answer (\(reason))"
        case .cancelled(let endpoint): "\(endpoint): cancelled"
        }
    }

    /// Whether the platform refused the relay's credentials (`PlatformRefusal.refusesCredentials`).
    public var refusesCredentials: Bool {
        if case .refused(_, let refusal) = self { refusal.refusesCredentials } else { false }
    }

    /// What the outbox should do with the entry whose delivery failed this way.
    ///
    /// A rate limit waits as asked. Timeouts, 5xx, connection and TLS failures, malformed
    /// answers and cancellation are retried: the message may not have arrived, and a duplicate
    /// is better than a lost answer. A request that could not be made, and anything the platform
    /// refused, is final — unless the refusal is transient.
    public var deliveryOutcome: DeliveryOutcome {
        switch self {
        case .rateLimited(_, let retryAfter): .rateLimited(retryAfter: retryAfter, reason: reason)
        case .refused(_, let refusal) where refusal.isTransient: .retryable(reason: reason)
        case .refused, .invalidRequest: .rejected(reason: reason)
        case .server, .timedOut, .unreachable, .tls, .malformed, .cancelled: .retryable(reason: reason)
        }
    }

    /// Whether trying the same call again later may succeed.
    public var isRetryable: Bool {
        switch deliveryOutcome {
        case .rateLimited, .retryable: true
        case .sent, .partDelivered, .rejected: false
        }
    }

    /// A duration as the reasons write it: whole seconds without a fraction ("2"), else to the
    /// hundredth ("0.5").
    public static func seconds(_ duration: Duration) -> String {
        let seconds = duration.seconds
        guard seconds.isFinite, abs(seconds) < 1e9 else { return "\(seconds)" }
        let rounded = (seconds * 100).rounded() / 100
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}
