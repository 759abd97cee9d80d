public import RelayCore

/// One message of a chat completion request.
public struct ChatMessage: Sendable, Hashable, Codable {
    public var role: String
    public var content: String

    public init(role: String, content: String) {
        self.role = role
        self.content = content
    }

    public static func system(_ content: String) -> ChatMessage { ChatMessage(role: "system", content: content) }
    public static func user(_ content: String) -> ChatMessage { ChatMessage(role: "user", content: content) }
}

/// A model's answer.
public struct ChatCompletion: Sendable, Hashable {
    /// `choices[0].message.content`.
    public var text: String
    /// The model id the server reports, if any.
    public var model: String?
    /// Wall time of the exchange.
    public var elapsed: Duration
    /// What the call used, under the council's name for the model.
    public var usage: ModelUsage

    public init(text: String, model: String?, elapsed: Duration, usage: ModelUsage) {
        self.text = text
        self.model = model
        self.elapsed = elapsed
        self.usage = usage
    }
}

/// Why one model call failed: small, typed, and able to say it in one line.
public enum ModelCallError: Error, Sendable, Hashable {
    /// 401/403: the key is missing or refused.
    case unauthorized(detail: String)
    /// 404: wrong base URL or unknown model id.
    case notFound(detail: String)
    /// 429; `retryAfter` from the header when present.
    case rateLimited(retryAfter: Duration?)
    /// 5xx.
    case serverError(status: Int, detail: String)
    /// Other 4xx.
    case rejected(status: Int, detail: String)
    /// No answer within the per-call timeout.
    case timedOut(after: Duration)
    /// Connection refused, DNS, TLS.
    case unreachable(reason: String)
    /// A 200 whose body is not a chat completion, or has no text.
    case malformed(reason: String)
    /// The caller gave up (the council's deadline passed).
    case cancelled
}
