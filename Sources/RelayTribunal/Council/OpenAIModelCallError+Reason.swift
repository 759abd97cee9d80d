public import RelayCore

extension ModelCallError {
    /// One short line for dissent notes and logs: "timed out after 20 s",
    /// "HTTP 404: The model `x` does not exist", "connection refused". Never contains the key
    /// (server details are redacted when they are read).
    public var reason: String {
        switch self {
        case .unauthorized(let detail): "unauthorized: \(detail)"
        case .notFound(let detail): "HTTP 404: \(detail)"
        case .rateLimited(let retryAfter?): "rate limited (retry after \(Self.format(retryAfter)) s)"
        case .rateLimited(nil): "rate limited"
        case .serverError(let status, let detail), .rejected(let status, let detail):
            status > 0 ? "HTTP \(status): \(detail)" : detail
        case .timedOut(let limit): "timed out after \(Self.format(limit)) s"
        case .unreachable(let reason): reason
        case .malformed(let reason): reason
        case .cancelled: "cancelled"
        }
    }

    /// The same in words safe to show to an API client: the kind of failure, never the
    /// provider's own text (which may name an address or an account).
    public var publicReason: String {
        switch self {
        case .unauthorized: "the model's provider refused the relay's credentials"
        case .notFound: "the model was not found at its provider"
        case .rateLimited: "the model's provider is rate-limiting"
        case .serverError(let status, _): status > 0 ? "the model's provider failed (HTTP \(status))" : "the model's provider failed"
        case .rejected(let status, _): status > 0 ? "the model's provider refused the request (HTTP \(status))" : "the model's provider refused the request"
        case .timedOut(let limit): "timed out after \(Self.format(limit)) s"
        case .unreachable: "the model's provider could not be reached"
        case .malformed: "the model's answer could not be read"
        case .cancelled: "no answer before the deadline"
        }
    }

    /// The error to show when no model could answer, naming the model and its URL.
    ///
    /// `.cancelled` becomes `.timedOut(url, deadline ?? 0)`: the council cancels a call only
    /// when its overall deadline has passed, so to the user the model did not answer in time.
    /// Pass the deadline so the message names it.
    /// `ownTimeout`: the model sets its own call timeout (`council.<name>.timeout`), which is then
    /// the setting a timeout names; else the council's.
    public func tribunalError(modelName: String, url: String, deadline: Duration? = nil, ownTimeout: Bool = false) -> TribunalError {
        switch self {
        case .unauthorized(let detail):
            .unauthorized(detail: "model \(modelName): \(detail)")
        case .notFound:
            .rejected(detail: "model \(modelName): not found at \(MaskedURL.display(url)) — check baseURL and model id")
        case .rateLimited(let retryAfter):
            .rateLimited(
                detail: "model \(modelName) is rate-limited",
                retryAfter: max(1, Int((retryAfter ?? .seconds(60)).seconds.rounded(.up))))
        case .serverError(let status, let detail):
            .serverError(status: status, detail: "model \(modelName): \(detail)")
        case .rejected:
            .rejected(detail: "model \(modelName): \(reason)")
        case .timedOut(let limit):
            .timedOut(url: url, after: limit, setting: ownTimeout ? "council.\(modelName).timeout" : "council.timeout (COUNCIL_TIMEOUT)")
        case .unreachable(let reason):
            .unreachable(url: url, reason: reason)
        case .malformed(let reason):
            .malformedResponse(url: url, reason: "model \(modelName): \(reason)")
        case .cancelled:
            .timedOut(url: url, after: deadline ?? .zero, setting: "council.deadline (COUNCIL_DEADLINE)")
        }
    }

    /// "20", "2.5", "0.25": whole seconds without a fraction, short ones to the hundredth.
    private static func format(_ duration: Duration) -> String {
        let seconds = duration.seconds
        guard seconds.isFinite, abs(seconds) < 1e9 else { return "\(seconds)" }
        let factor = seconds < 1 ? 100.0 : 10.0
        let rounded = (seconds * factor).rounded() / factor
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}
