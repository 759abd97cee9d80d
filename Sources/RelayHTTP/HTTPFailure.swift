import AsyncHTTPClient
import NIOCore
import RelayCore

/// Why an outbound HTTP exchange did not produce the answer the caller wanted: the one
/// classification every client maps to its own typed error.
///
/// Reasons are fixed phrases, never an underlying error's description, which could quote a URL
/// (a Slack `response_url` or a webhook URL is a credential).
public enum HTTPFailure: Error, Sendable {
    /// No connection: refused, reset, closed early, DNS, network unreachable, connect timeout.
    /// Usually worth retrying.
    case unreachable(reason: String)
    /// The TLS handshake failed (certificate, protocol): retrying will not help.
    case tls(reason: String)
    /// The whole answer did not arrive within the time limit.
    case timedOut(after: Duration)
    /// The server answered with a non-2xx status (from `HTTPAnswer.requireSuccess()`).
    case status(HTTPAnswer)
    /// The answer could not be used: too large, or not what the API promises.
    case malformed(reason: String)
    /// The URL cannot be requested (not http(s), no host): a configuration problem.
    case invalidURL(reason: String)
    /// The calling task was cancelled.
    case cancelled

    /// A bounded label for logs and metrics: the kind, never a text from outside.
    public var label: String {
        switch self {
        case .unreachable: "unreachable"
        case .tls: "tls"
        case .timedOut: "timed_out"
        case .status(let answer): "status_\(answer.status)"
        case .malformed: "malformed"
        case .invalidURL: "invalid_url"
        case .cancelled: "cancelled"
        }
    }

    /// Sorts an error thrown while sending or reading. Cancellation by the caller wins over
    /// whatever error the cancelled request happened to end with.
    static func classify(_ error: any Error, timeout: Duration, maxBodyBytes: Int) -> HTTPFailure {
        if Task.isCancelled || error is CancellationError { return .cancelled }
        if error is TimeLimitExceeded { return .timedOut(after: timeout) }
        if error is NIOTooManyBytesError {
            return .malformed(reason: "answer larger than \(maxBodyBytes / 1024) KB")
        }
        if let clientError = error as? HTTPClientError {
            switch clientError {
            case .deadlineExceeded, .readTimeout, .writeTimeout:
                return .timedOut(after: timeout)
            case .connectTimeout:
                return .unreachable(reason: "connect timed out")
            case .remoteConnectionClosed:
                return .unreachable(reason: "connection closed by the server")
            case .tlsHandshakeTimeout:
                return .tls(reason: "TLS handshake timed out")
            case .cancelled, .alreadyShutdown:
                // Not cancelled by our caller (checked above) nor by the time limit.
                return .unreachable(reason: "HTTP client shut down")
            case .invalidURL, .emptyHost, .emptyScheme:
                return .invalidURL(reason: "not a valid http(s) URL")
            default:
                // `unsupportedScheme(_:)` carries a value, so it cannot be matched as a constant.
                if "\(clientError)".contains("unsupportedScheme") {
                    return .invalidURL(reason: "not an http(s) URL")
                }
            }
        }
        let reason = ConnectionFailure.reason(error)
        return reason == ConnectionFailure.tlsReason ? .tls(reason: reason) : .unreachable(reason: reason)
    }
}
