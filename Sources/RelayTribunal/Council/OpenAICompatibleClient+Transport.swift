import AsyncHTTPClient
import RelayHTTP

extension OpenAICompatibleClient {
    /// Sends `request` through the shared transport and reads the whole answer within `timeout`.
    /// A non-2xx status comes back as an answer, for `complete` to read its error body.
    func exchange(_ request: HTTPClientRequest, timeout: Duration) async throws(ModelCallError) -> HTTPAnswer {
        do throws(HTTPFailure) {
            return try await transport.exchange(request, timeout: timeout, maxBodyBytes: Self.maxResponseBytes)
        } catch {
            throw Self.modelCallError(error, timeout: timeout)
        }
    }

    /// The transport's failure as a `ModelCallError`.
    static func modelCallError(_ failure: HTTPFailure, timeout: Duration) -> ModelCallError {
        switch failure {
        case .cancelled: .cancelled
        case .timedOut: .timedOut(after: timeout)
        case .malformed(let reason): .malformed(reason: reason)
        case .invalidURL: .unreachable(reason: "base URL is not a valid http(s) URL")
        case .unreachable(let reason), .tls(let reason): .unreachable(reason: reason)
        case .status(let answer): error(status: answer.status, retryAfter: answer.retryAfter(), detail: "HTTP \(answer.status)")
        }
    }

    /// A non-2xx status as a `ModelCallError`.
    static func error(status: Int, retryAfter: Duration?, detail: String) -> ModelCallError {
        switch status {
        case 401, 403: .unauthorized(detail: detail)
        case 404: .notFound(detail: detail)
        case 429: .rateLimited(retryAfter: retryAfter)
        case 500...: .serverError(status: status, detail: detail)
        default: .rejected(status: status, detail: detail)
        }
    }
}
