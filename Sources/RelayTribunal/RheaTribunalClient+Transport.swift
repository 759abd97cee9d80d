import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import RelayCore

extension RheaTribunalClient {
    /// Largest response body read; real answers are a few kilobytes.
    static let maxResponseBytes = 4 * 1024 * 1024

    /// One HTTP exchange with retries, rate-limit hold and error mapping; decodes a 200 body.
    ///
    /// Returns the decoded body and the wall time the caller waited, retries included.
    func send<Response: Decodable>(
        _ method: HTTPMethod,
        _ path: String,
        body: (some Encodable)?,
        timeout: Double,
        as _: Response.Type
    ) async throws(TribunalError) -> (Response, elapsed: Double) {
        let base = configuration.normalizedBaseURL
        let started = ContinuousClock.now

        var bodyBytes: [UInt8]?
        if let body {
            do {
                bodyBytes = Array(try JSONEncoder().encode(body))
            } catch {
                throw .rejected(detail: "the request could not be encoded as JSON")
            }
        }

        let attempts = configuration.retry.attempts
        var attempt = 0
        while true {
            attempt += 1
            // Checked before every attempt: a concurrent call may have hit a 429 meanwhile.
            if let hold = rateLimitGate.refusal(for: path) {
                logger.info(
                    "Rhea call held back by an earlier 429",
                    metadata: ["tribunal.path": "\(path)", "tribunal.retry_after": "\(hold.remainingSeconds)"])
                throw .rateLimited(detail: hold.detail, retryAfter: hold.remainingSeconds)
            }
            let error: TribunalError
            let retryable: Bool
            switch await exchange(method, base: base, path: path, body: bodyBytes, timeout: timeout, attempt: attempt) {
            case .response(let status, let bytes, _) where (200..<300).contains(status):
                do {
                    let decoded = try JSONDecoder().decode(Response.self, from: Data(bytes))
                    return (decoded, ContinuousClock.now.secondsSince(started))
                } catch {
                    logger.info(
                        "Rhea answer could not be decoded",
                        metadata: ["tribunal.path": "\(path)", "tribunal.status": "\(status)"])
                    throw .malformedResponse(
                        url: base, reason: "\(path) answered \(status) with a body that is not the expected JSON")
                }
            case .response(let status, let bytes, _):
                error = mapStatus(status, body: bytes, path: path)
                retryable = status >= 500
            case .failure(let failure):
                error = failure.error
                retryable = failure.retryable
            }
            guard retryable, attempt < attempts else { throw error }
            try await backOff(after: attempt, path: path, reason: error.label)
        }
    }

    /// `send` for a JSON POST.
    func post<Response: Decodable>(
        _ path: String, body: some Encodable, timeout: Double, as type: Response.Type
    ) async throws(TribunalError) -> (Response, elapsed: Double) {
        try await send(.POST, path, body: body, timeout: timeout, as: type)
    }

    /// What one attempt produced: a status and body, or a failure before any status.
    enum Outcome {
        case response(status: Int, body: [UInt8], elapsed: Double)
        case failure(AttemptFailure)
    }

    struct AttemptFailure {
        var error: TribunalError
        var retryable: Bool
    }

    private func exchange(
        _ method: HTTPMethod, base: String, path: String, body: [UInt8]?, timeout: Double, attempt: Int
    ) async -> Outcome {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "rhea-relay")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        // Credentials go into headers only; nothing below logs headers.
        for (name, value) in authHeaders() {
            request.headers.add(name: name, value: value)
        }

        let clock = ContinuousClock()
        let start = clock.now
        logger.debug(
            "Rhea request",
            metadata: ["tribunal.path": "\(path)", "tribunal.attempt": "\(attempt)"])
        do {
            let response = try await httpClient.execute(request, timeout: .milliseconds(Int64((timeout * 1000).rounded(.up))))
            // AsyncHTTPClient's deadline ends at the response head; the body gets what is left.
            let left = timeout - clock.now.secondsSince(start)
            let buffer = try await withTimeLimit(seconds: max(0.001, left)) {
                try await response.body.collect(upTo: Self.maxResponseBytes)
            }
            let elapsed = clock.now.secondsSince(start)
            let status = Int(response.status.code)
            logger.debug(
                "Rhea response",
                metadata: [
                    "tribunal.path": "\(path)", "tribunal.status": "\(status)",
                    "tribunal.attempt": "\(attempt)", "tribunal.elapsed": "\(elapsed.rounded(toPlaces: 3))",
                ])
            if status == 429 {
                holdAfterRateLimit(path: path, headers: response.headers, body: Array(buffer.readableBytesView))
            }
            return .response(status: status, body: Array(buffer.readableBytesView), elapsed: elapsed)
        } catch {
            let failure = classify(error, base: base, timeout: timeout)
            logger.info(
                "Rhea request failed",
                metadata: [
                    "tribunal.path": "\(path)", "tribunal.attempt": "\(attempt)",
                    "tribunal.error": "\(failure.error.label)",
                    "tribunal.elapsed": "\(clock.now.secondsSince(start).rounded(toPlaces: 3))",
                ])
            return .failure(failure)
        }
    }

    /// The auth headers: a JWT wins over a key; `dev-bypass` only in development mode.
    func authHeaders() -> [(String, String)] {
        if let token = configuration.token, token.isNonEmptyString {
            return [("Authorization", "Bearer \(token.trimmingWhitespace)")]
        }
        if let key = configuration.apiKey, key.isNonEmptyString {
            return [("X-API-Key", key.trimmingWhitespace)]
        }
        if configuration.developmentMode {
            return [("X-API-Key", "dev-bypass")]
        }
        return []
    }

    private func holdAfterRateLimit(path: String, headers: HTTPHeaders, body: [UInt8]) {
        // The gateway sends no Retry-After; if a proxy does, honour it when it asks for longer.
        let retryAfter = headers.first(name: "Retry-After").flatMap { Double($0.trimmingWhitespace) } ?? 0
        let seconds = max(retryAfter, configuration.rateLimitCooldown)
        rateLimitGate.hold(path, seconds: seconds, detail: ErrorDetail.readable(from: body, status: 429))
    }

    private func mapStatus(_ status: Int, body: [UInt8], path: String) -> TribunalError {
        let detail = ErrorDetail.readable(from: body, status: status)
        switch status {
        case 401, 403:
            return .unauthorized(detail: detail)
        case 402:
            return .paymentRequired(detail: detail)
        case 429:
            let seconds = rateLimitGate.refusal(for: path)?.remainingSeconds
                ?? Int(configuration.rateLimitCooldown.rounded(.up))
            return .rateLimited(detail: detail, retryAfter: max(1, seconds))
        case 500...:
            return .serverError(status: status, detail: detail)
        case 404:
            return .rejected(detail: "\(path) not found (HTTP 404): the server may be an older Rhea Tribunal version")
        default:
            return .rejected(detail: detail)
        }
    }

    private func classify(_ error: any Error, base: String, timeout: Double) -> AttemptFailure {
        if let clientError = error as? HTTPClientError {
            switch clientError {
            case .deadlineExceeded, .readTimeout, .writeTimeout:
                // Not retried: the user has already waited the whole deadline.
                return AttemptFailure(error: .timedOut(url: base, seconds: timeout), retryable: false)
            case .invalidURL, .emptyHost, .emptyScheme:
                return AttemptFailure(
                    error: .notConfigured(detail: "the tribunal URL \(base) is not a valid http(s) URL"), retryable: false)
            case .cancelled:
                return AttemptFailure(error: .unreachable(url: base, reason: "request cancelled"), retryable: false)
            default:
                // `unsupportedScheme(_:)` carries a value, so it cannot be compared to a constant.
                if "\(clientError)".contains("unsupportedScheme") {
                    return AttemptFailure(
                        error: .notConfigured(detail: "the tribunal URL \(base) is not a valid http(s) URL"),
                        retryable: false)
                }
            }
        }
        if error is TimeLimitExceeded {
            return AttemptFailure(error: .timedOut(url: base, seconds: timeout), retryable: false)
        }
        if error is CancellationError || Task.isCancelled {
            return AttemptFailure(error: .unreachable(url: base, reason: "request cancelled"), retryable: false)
        }
        return AttemptFailure(error: .unreachable(url: base, reason: Self.transportReason(error)), retryable: true)
    }

    /// A short reason for a transport failure. NIO's error types live in modules this target
    /// does not import, so their descriptions are read instead.
    static func transportReason(_ error: any Error) -> String {
        if let clientError = error as? HTTPClientError {
            if clientError == .remoteConnectionClosed { return "connection closed by the server" }
            if clientError == .connectTimeout { return "connect timed out" }
            if clientError == .tlsHandshakeTimeout { return "TLS handshake timed out" }
        }
        return ConnectionFailure.reason(error)
    }

    private func backOff(after attempt: Int, path: String, reason: String) async throws(TribunalError) {
        let delay = configuration.retry.delay(afterAttempt: attempt)
        logger.info(
            "Retrying Rhea request",
            metadata: [
                "tribunal.path": "\(path)", "tribunal.attempt": "\(attempt)",
                "tribunal.reason": "\(reason)", "tribunal.delay": "\(delay.rounded(toPlaces: 3))",
            ])
        do {
            try await Task.sleep(for: .milliseconds(Int64((delay * 1000).rounded())))
        } catch {
            throw .unreachable(url: configuration.normalizedBaseURL, reason: "request cancelled")
        }
    }
}

/// The body did not arrive within the time left by the deadline.
struct TimeLimitExceeded: Error {}

/// Runs `operation`, throwing `TimeLimitExceeded` (and cancelling it) after `seconds`.
func withTimeLimit<T: Sendable>(
    seconds: Double, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: .milliseconds(Int64((seconds * 1000).rounded(.up))))
            throw TimeLimitExceeded()
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw TimeLimitExceeded() }
        return first
    }
}

extension ContinuousClock.Instant {
    /// Seconds from `start` to this instant, as a Double.
    func secondsSince(_ start: ContinuousClock.Instant) -> Double {
        let (seconds, attoseconds) = start.duration(to: self).components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

extension Double {
    func rounded(toPlaces places: Int) -> Double {
        var factor = 1.0
        for _ in 0..<places { factor *= 10 }
        return (self * factor).rounded() / factor
    }
}

extension String {
    var isNonEmptyString: Bool { !trimmingWhitespace.isEmpty }
}
