import RelayCore
public import RelayPipeline

/// Why a Bot API call failed.
///
/// `method` is the Bot API method (`sendMessage`), never a URL: the URL's path holds the bot
/// token. `reason` is one line fit for logs and the outbox's `lastError`; `deliveryOutcome` says
/// what the outbox should do next.
public enum TelegramAPIError: Error, Sendable, Hashable {
    /// HTTP 429 (or a pacing wait longer than the client queues for): no sooner than
    /// `retryAfter` (`parameters.retry_after`, else `Retry-After`, else 1 s).
    case rateLimited(method: String, retryAfter: Duration)
    /// A 400 with `parameters.migrate_to_chat_id`: the group became a supergroup, which has a
    /// new id; the message must go there.
    case migrated(method: String, newChatID: Int64)
    /// Telegram said no (`ok:false`, a 4xx): `code` is its `error_code` (else the HTTP status),
    /// `description` its text, bounded (`Bad Request: chat not found`, `Forbidden: bot was
    /// blocked by the user`).
    case refused(method: String, code: Int, description: String)
    /// HTTP 5xx.
    case server(method: String, status: Int)
    /// No whole answer within the time limit.
    case timedOut(method: String, after: Duration)
    /// The connection failed: refused, reset, DNS, TLS.
    case unreachable(method: String, reason: String)
    /// A 2xx whose body is not the Bot API's JSON, or lacks what the method returns.
    case malformed(method: String, reason: String)
    /// The request could not be made: a bad method name or API URL, a body JSON cannot express,
    /// no numeric `chat_id` to pace by.
    case invalidRequest(method: String, reason: String)
    /// The calling task was cancelled (shutdown); the outcome of the call is unknown.
    case cancelled(method: String)
}

extension TelegramAPIError {
    /// The method called.
    public var method: String {
        switch self {
        case .rateLimited(let method, _), .migrated(let method, _), .refused(let method, _, _), .server(let method, _), .timedOut(let method, _),
            .unreachable(let method, _), .malformed(let method, _), .invalidRequest(let method, _), .cancelled(let method):
            method
        }
    }

    /// A bounded label for metrics and logs: `rate_limited`, `http_403`, `timeout`…
    public var label: String {
        switch self {
        case .rateLimited: "rate_limited"
        case .migrated: "migrated"
        case .refused(_, let code, _): "http_\(code)"
        case .server(_, let status): "http_\(status)"
        case .timedOut: "timeout"
        case .unreachable: "connection_failed"
        case .malformed: "malformed_response"
        case .invalidRequest: "invalid_request"
        case .cancelled: "cancelled"
        }
    }

    /// An edit that would leave the message as it is: Telegram refuses it, but for the relay the
    /// message already shows what it should.
    public var isMessageNotModified: Bool {
        guard case .refused(_, _, let description) = self else { return false }
        return description.lowercased().contains("message is not modified")
    }

    /// One line for logs and the outbox; never holds the token or a URL.
    public var reason: String {
        switch self {
        case .rateLimited(let method, let retryAfter):
            "\(method): rate limited by Telegram (retry after \(Self.seconds(retryAfter)) s)"
        case .migrated(let method, let newChatID):
            "\(method): the group became a supergroup; its new chat id is \(newChatID)"
        case .refused(let method, let code, let description):
            "\(method): Telegram refused it (\(code)\(description.isEmpty ? "" : " \(description)"))"
                + (Self.explanation(code: code, description: description).map { ": \($0)" } ?? "")
        case .server(let method, let status): "\(method): Telegram answered HTTP \(status)"
        case .timedOut(let method, let after): "\(method): no answer within \(Self.seconds(after)) s"
        case .unreachable(let method, let reason): "\(method): \(reason)"
        case .malformed(let method, let reason): "\(method): unexpected answer (\(reason))"
        case .invalidRequest(let method, let reason): "\(method): \(reason)"
        case .cancelled(let method): "\(method): cancelled"
        }
    }

    /// What the outbox should do with the entry whose delivery failed this way.
    ///
    /// 429s wait as Telegram asked; timeouts, 5xx, connection failures, malformed answers and
    /// cancellation are retried (the message may not have arrived: a duplicate is better than a
    /// lost answer); any other refusal is final. A migration is final for this chat id: the
    /// caller re-sends to the new one.
    public var deliveryOutcome: DeliveryOutcome {
        switch self {
        case .rateLimited(_, let retryAfter): .rateLimited(retryAfter: retryAfter, reason: reason)
        case .migrated, .refused, .invalidRequest: .rejected(reason: reason)
        case .server, .timedOut, .unreachable, .malformed, .cancelled: .retryable(reason: reason)
        }
    }

    /// The refusals an operator meets most often, in words they can act on.
    static func explanation(code: Int, description: String) -> String? {
        switch code {
        case 401: "the bot token is wrong or was revoked (TELEGRAM_BOT_TOKEN)"
        // A token Telegram does not know gets a bare 404 on every method.
        case 404 where description == "Not Found": "the bot token is wrong or was revoked (TELEGRAM_BOT_TOKEN)"
        case 403: "the bot cannot write here (blocked by the user, or not a member of the group)"
        case 409: "another process is polling getUpdates, or a webhook is set"
        default: nil
        }
    }

    /// `3` or `2.5`: whole seconds without a fraction.
    static func seconds(_ duration: Duration) -> String {
        let seconds = duration.seconds
        guard seconds.isFinite else { return "?" }
        return seconds == seconds.rounded() && abs(seconds) < 1e15 ? String(Int64(seconds)) : String(seconds)
    }

    /// This error with every occurrence of `token` in Telegram's own text replaced. Telegram
    /// has no reason to quote the token, but a proxy or a fake might, and the description goes
    /// to logs and the outbox.
    func redacting(_ token: TelegramToken) -> TelegramAPIError {
        guard !token.secret.isEmpty, case .refused(let method, let code, let description) = self, description.contains(token.secret) else {
            return self
        }
        return .refused(method: method, code: code, description: description.replacing(token.secret, with: "\(token)"))
    }
}
