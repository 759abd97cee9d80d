import AsyncHTTPClient
import NIOCore
import NIOHTTP1

extension OpenAICompatibleClient {
    /// A whole answer: status, the one header that matters, and the body.
    struct RawResponse: Sendable {
        var status: Int
        /// `Retry-After` in seconds, when the header is a number.
        var retryAfter: Double?
        var body: [UInt8]
    }

    /// Sends `request` and reads the whole answer within `timeout` seconds.
    ///
    /// AsyncHTTPClient's own deadline only bounds the wait for the response head, so the
    /// exchange runs under `withTimeLimit`, which also bounds a server that sends its head and
    /// then stalls. Cancelling the calling task cancels both children, and AsyncHTTPClient
    /// closes the connection when its task is cancelled.
    func exchange(_ request: HTTPClientRequest, timeout: Double) async throws(ModelCallError) -> RawResponse {
        if Task.isCancelled { throw .cancelled }
        let client = httpClient
        let seconds = max(0.001, timeout)
        // A little later than the time limit, so the limit decides and this is a safety net.
        let deadline = NIODeadline.now() + .milliseconds(Int64((seconds * 1000).rounded(.up)) + 1000)
        do {
            return try await withTimeLimit(seconds: seconds) {
                let response = try await client.execute(request, deadline: deadline)
                let body = try await response.body.collect(upTo: Self.maxResponseBytes)
                return RawResponse(
                    status: Int(response.status.code),
                    retryAfter: Self.seconds(retryAfter: response.headers.first(name: "Retry-After")),
                    body: Array(body.readableBytesView))
            }
        } catch {
            throw Self.classify(error, timeout: timeout)
        }
    }

    /// `Retry-After` as seconds; the HTTP-date form is rare on APIs and is ignored.
    static func seconds(retryAfter header: String?) -> Double? {
        guard let value = header.flatMap({ Double($0.trimmingWhitespace) }), value.isFinite, value >= 0 else {
            return nil
        }
        return value
    }

    /// A transport failure as a `ModelCallError`; cancellation by the caller wins over
    /// whatever error the cancelled request happened to end with.
    static func classify(_ error: any Error, timeout: Double) -> ModelCallError {
        if Task.isCancelled || error is CancellationError { return .cancelled }
        if error is TimeLimitExceeded { return .timedOut(seconds: timeout) }
        if error is NIOTooManyBytesError {
            return .malformed(reason: "answer larger than \(maxResponseBytes / (1024 * 1024)) MB")
        }
        if let clientError = error as? HTTPClientError {
            switch clientError {
            case .deadlineExceeded, .readTimeout, .writeTimeout:
                return .timedOut(seconds: timeout)
            case .cancelled:
                // Not cancelled by our caller (checked above) nor by the time limit: the client
                // is shutting down.
                return .unreachable(reason: "HTTP client shut down")
            case .invalidURL, .emptyHost, .emptyScheme:
                return .unreachable(reason: "base URL is not a valid http(s) URL")
            default:
                break
            }
        }
        return .unreachable(reason: RheaTribunalClient.transportReason(error))
    }

    /// A non-2xx status as a `ModelCallError`.
    static func error(status: Int, retryAfter: Double?, detail: String) -> ModelCallError {
        switch status {
        case 401, 403: .unauthorized(detail: detail)
        case 404: .notFound(detail: detail)
        case 429: .rateLimited(retryAfter: retryAfter)
        case 500...: .serverError(status: status, detail: detail)
        default: .rejected(status: status, detail: detail)
        }
    }
}
