public import Hummingbird

/// Why a request was not accepted as coming from Slack.
///
/// Surfaces as HTTP 401 with the body `{"error":"invalid request"}`, whatever the reason, so a
/// caller probing the endpoint learns nothing; `description` says the reason for the log. Neither
/// ever holds the signing secret or the expected signature.
public enum SlackVerificationError: Error, Sendable, Hashable, CustomStringConvertible {
    case missingTimestamp
    case malformedTimestamp
    case missingSignature
    case malformedSignature
    /// Older than the replay window: possibly a replay.
    case staleTimestamp(secondsOld: Int)
    /// Ahead of the replay window: a clock far off, or a request made to be replayed later.
    case futureTimestamp(secondsAhead: Int)
    case signatureMismatch

    public var description: String {
        switch self {
        case .missingTimestamp: "X-Slack-Request-Timestamp is missing"
        case .malformedTimestamp: "X-Slack-Request-Timestamp is not a Unix time in seconds"
        case .missingSignature: "X-Slack-Signature is missing"
        case .malformedSignature: "X-Slack-Signature is not v0= and 64 hex digits"
        case .staleTimestamp(let seconds): "X-Slack-Request-Timestamp is \(seconds) s old, beyond the replay window (stale or replayed)"
        case .futureTimestamp(let seconds): "X-Slack-Request-Timestamp is \(seconds) s in the future, beyond the replay window"
        case .signatureMismatch: "X-Slack-Signature does not match the body (wrong signing secret, or the body was altered)"
        }
    }

    /// A bounded label for metrics (`missing_timestamp`, `stale`…).
    public var metricLabel: String {
        switch self {
        case .missingTimestamp: "missing_timestamp"
        case .malformedTimestamp: "malformed_timestamp"
        case .missingSignature: "missing_signature"
        case .malformedSignature: "malformed_signature"
        case .staleTimestamp: "stale"
        case .futureTimestamp: "future"
        case .signatureMismatch: "bad_signature"
        }
    }
}

extension SlackVerificationError: HTTPResponseError {
    public var status: HTTPResponse.Status { .unauthorized }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        SlackErrorResponse.json(status: status, error: "invalid request")
    }
}
