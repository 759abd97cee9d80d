import RelayCore
public import RelayPipeline

/// Why a Discord REST call failed.
///
/// `route` is the method and path template (`PATCH /webhooks/{application_id}/{interaction_token}/messages/@original`),
/// never the path itself, which may hold an interaction token; nothing here holds a token.
/// `reason` is one line fit for logs and the outbox's `lastError`; `deliveryOutcome` says what
/// the outbox should do next.
public enum DiscordAPIError: Error, Sendable, Hashable {
    /// A 429 (or a wait longer than the client queues for): no sooner than `retryAfter`;
    /// `global` when every request is held.
    case rateLimited(route: String, retryAfter: Duration, global: Bool)
    /// Discord said no with a 4xx; `code` is its JSON error code (10015 unknown webhook, 50001
    /// missing access…), `message` its text, bounded.
    case api(route: String, status: Int, code: Int?, message: String)
    /// HTTP 5xx.
    case server(route: String, status: Int)
    /// No whole answer within the time limit.
    case timedOut(route: String, after: Duration)
    /// The connection failed: refused, reset, DNS, TLS.
    case unreachable(route: String, reason: String)
    /// A 2xx whose body is not what the route returns.
    case malformed(route: String, reason: String)
    /// The request could not be made: no bot token, a bad URL or path, a body that is not JSON.
    case invalidRequest(route: String, reason: String)
    /// The calling task was cancelled (shutdown); the outcome of the call is unknown.
    case cancelled(route: String)
}

extension DiscordAPIError {
    /// The route called (method and template).
    public var route: String {
        switch self {
        case .rateLimited(let route, _, _), .api(let route, _, _, _), .server(let route, _), .timedOut(let route, _), .unreachable(let route, _),
            .malformed(let route, _), .invalidRequest(let route, _), .cancelled(let route):
            route
        }
    }

    /// A bounded label for metrics and logs: `http_404`, `rate_limited`, `timeout`…
    public var code: String {
        switch self {
        case .rateLimited: "rate_limited"
        case .api(_, let status, _, _): "http_\(status)"
        case .server(_, let status): "http_\(status)"
        case .timedOut: "timeout"
        case .unreachable: "connection_failed"
        case .malformed: "malformed_response"
        case .invalidRequest: "invalid_request"
        case .cancelled: "cancelled"
        }
    }

    /// What the JSON codes a relay meets most often mean, in words an operator can act on.
    static let explanations: [Int: String] = [
        10003: "the channel does not exist or the bot cannot see it",
        10008: "the message does not exist",
        10015: "the interaction token has expired or was never valid",
        50001: "the bot cannot see this channel; check its permissions there",
        50013: "the bot lacks a permission here (Send Messages, Embed Links, Read Message History)",
        50035: "Discord refused the message as malformed",
        50006: "the message is empty",
        50007: "the user does not accept direct messages from the bot",
    ]

    /// One line for logs and the outbox; never holds a token.
    public var reason: String {
        switch self {
        case .rateLimited(let route, let retryAfter, let global):
            "\(route): rate limited\(global ? " (global)" : "") (retry after \(retryAfter.seconds) s)"
        case .api(let route, let status, let code, let message):
            "\(route): HTTP \(status)" + (code.map { " code \($0)" } ?? "") + (message.isEmpty ? "" : " (\(message))")
                + (code.flatMap { Self.explanations[$0] }.map { ": \($0)" } ?? "")
        case .server(let route, let status): "\(route): Discord answered HTTP \(status)"
        case .timedOut(let route, let after): "\(route): no answer within \(after.seconds) s"
        case .unreachable(let route, let reason): "\(route): \(reason)"
        case .malformed(let route, let reason): "\(route): unexpected answer (\(reason))"
        case .invalidRequest(let route, let reason): "\(route): \(reason)"
        case .cancelled(let route): "\(route): cancelled"
        }
    }

    /// What the outbox should do with the entry whose delivery failed this way.
    ///
    /// 429s wait as Discord asked; timeouts, 5xx, connection failures, malformed answers and
    /// cancellation are retried (the message may not have arrived: a duplicate is better than a
    /// lost answer); any other 4xx is final (a route refused for good hands the part to the next
    /// route), except 408.
    public var deliveryOutcome: DeliveryOutcome {
        switch self {
        case .rateLimited(_, let retryAfter, _): .rateLimited(retryAfter: retryAfter, reason: reason)
        case .api(_, 408, _, _): .retryable(reason: reason)
        case .api, .invalidRequest: .rejected(reason: reason)
        case .server, .timedOut, .unreachable, .malformed, .cancelled: .retryable(reason: reason)
        }
    }
}
