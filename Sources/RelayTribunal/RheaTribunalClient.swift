import AsyncHTTPClient
import Foundation
public import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
public import RelayCore
public import RelayHTTP
import Synchronization

/// The Rhea Tribunal gateway (`rhea-tribunal.fly.dev` or a self-hosted one) as a `Tribunal`.
///
/// - `quick` calls `POST /keyboard/quick` (one cheap model).
/// - `consensus` calls `POST /tribunal` when credentials are configured, else `POST /dialog`,
///   whose score only says how many of its two models answered (`ScoreMeaning.answeredShare`).
/// - `health` calls `GET /health`.
///
/// Transport failures and 5xx answers are retried with backoff; timeouts are not. After a 429
/// the endpoint is held back locally for the cooldown, so a busy chat does not keep the
/// server's window full.
public final class RheaTribunalClient: Tribunal, Sendable {
    /// The values this client was created with.
    public let configuration: RheaTribunalConfiguration
    /// The configuration's base URL without trailing slashes, and whether it has credentials:
    /// read once here rather than on every call.
    let baseURL: String
    let hasCredentials: Bool
    let transport: HTTPTransport
    /// Decides when a 429's hold ends and how long a retry waits.
    let clock: any RelayClock
    let logger: Logger
    let rateLimitGate = RateLimitGate()

    /// The `sender` the gateway writes into its office chat log for `/dialog` calls.
    static let dialogSender = "rhea-relay"

    /// Creates a client on the shared transport (whose `HTTPClient` the caller owns).
    public init(configuration: RheaTribunalConfiguration, transport: HTTPTransport, clock: any RelayClock = SystemClock(), logger: Logger) {
        self.configuration = configuration
        self.baseURL = configuration.normalizedBaseURL
        self.hasCredentials = configuration.hasCredentials
        self.transport = transport
        self.clock = clock
        var logger = logger
        logger[metadataKey: "tribunal.backend"] = "rhea"
        self.logger = logger
    }

    /// One cheap model applies one action to the text.
    ///
    /// `request.tier` is not sent: the gateway's `/keyboard/quick` always uses its cheap tier
    /// and has no field to ask for another.
    public func quick(_ request: QuickRequest) async throws(TribunalError) -> QuickResult {
        let body = try QuickMapping.body(for: request)
        let (response, measured) = try await send(
            .POST, "/keyboard/quick", body: body, timeout: configuration.timeouts.quick,
            as: RheaWire.QuickResponse.self)
        var result = try QuickMapping.result(from: response, measured: measured, url: baseURL)
        result.usage = [RheaUsage.quick(request, answer: result.text, model: result.model, elapsed: result.elapsed)]
        return result
    }

    /// Several models judge the claim: `/tribunal` with credentials, `/dialog` without.
    public func consensus(_ request: ConsensusRequest) async throws(TribunalError) -> ConsensusResult {
        if hasCredentials {
            return try await tribunalConsensus(request)
        }
        return try await dialogConsensus(request)
    }

    /// Whether the gateway answers; the detail counts providers that have keys configured
    /// (the server does not probe them).
    public func health() async throws(TribunalError) -> BackendHealth {
        let (response, _) = try await send(
            .GET, "/health", body: RheaWire.noBody, timeout: configuration.timeouts.health,
            as: RheaWire.HealthResponse.self)
        return BackendAnswers.health(from: response, endpoint: baseURL)
    }

    private func tribunalConsensus(_ request: ConsensusRequest) async throws(TribunalError) -> ConsensusResult {
        let body = try ConsensusMapping.tribunalBody(for: request)
        let (response, measured) = try await send(
            .POST, "/tribunal", body: body, timeout: configuration.timeouts.tribunal,
            as: RheaWire.TribunalResponse.self)
        var result = try ConsensusMapping.result(
            from: response, k: body.k, measured: measured, url: baseURL)
        result.usage = RheaUsage.tribunal(response.responses ?? [], claim: request.claim)
        return result
    }

    /// `/dialog` always asks two cheap models: `k` and `tier` cannot be passed on.
    private func dialogConsensus(_ request: ConsensusRequest) async throws(TribunalError) -> ConsensusResult {
        try TextLimits.check(request.claim, limit: TextLimits.text, what: "claim")
        let body = RheaWire.DialogRequest(text: request.claim, sender: Self.dialogSender)
        let (response, measured) = try await send(
            .POST, "/dialog", body: body, timeout: configuration.timeouts.dialog,
            as: RheaWire.DialogResponse.self)
        var result = try ConsensusMapping.result(from: response, measured: measured, url: baseURL)
        result.usage = RheaUsage.dialog(claim: request.claim, reply: result.answer, answered: result.answered, elapsed: result.elapsed)
        return result
    }
}

extension RheaTribunalClient {
    /// Largest response body read; real answers are a few kilobytes.
    static let maxResponseBytes = 4 * 1024 * 1024

    /// One call with retries, rate-limit hold and error mapping; decodes a 2xx body.
    ///
    /// Returns the decoded body and the wall time the caller waited, retries included.
    func send<Response: Decodable>(
        _ method: HTTPMethod,
        _ path: String,
        body: (some Encodable)?,
        timeout: Duration,
        as _: Response.Type
    ) async throws(TribunalError) -> (Response, elapsed: Duration) {
        let base = baseURL
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
            if let hold = rateLimitGate.refusal(for: path, now: clock.now) {
                logger.info(
                    "Rhea call held back by an earlier 429",
                    metadata: ["tribunal.path": "\(path)", "tribunal.retry_after": "\(hold.remainingSeconds)"])
                throw .rateLimited(detail: hold.detail, retryAfter: hold.remainingSeconds)
            }
            let outcome: Result<HTTPAnswer, HTTPFailure>
            do throws(HTTPFailure) {
                outcome = .success(try await exchange(method, base: base, path: path, body: bodyBytes, timeout: timeout, attempt: attempt))
            } catch {
                outcome = .failure(error)
            }
            let error: TribunalError
            switch outcome {
            case .success(let answer):
                do {
                    return (try RheaWire.decode(Response.self, from: answer.body), started.duration(to: .now))
                } catch {
                    logger.info("Rhea answer could not be decoded", metadata: ["tribunal.path": "\(path)", "tribunal.status": "\(answer.status)"])
                    throw .malformedResponse(url: base, reason: "\(path) answered \(answer.status) with a body that is not the expected JSON")
                }
            case .failure(let failure):
                let retryable: Bool
                (error, retryable) = map(failure, base: base, path: path, timeout: timeout)
                guard retryable, attempt < attempts else { throw error }
            }
            try await backOff(after: attempt, path: path, reason: error.label)
        }
    }

    /// `send` for a JSON POST.
    func post<Response: Decodable>(
        _ path: String, body: some Encodable, timeout: Duration, as type: Response.Type
    ) async throws(TribunalError) -> (Response, elapsed: Duration) {
        try await send(.POST, path, body: body, timeout: timeout, as: type)
    }

    /// One attempt through the shared transport; a non-2xx answer is thrown as `.status`.
    private func exchange(
        _ method: HTTPMethod, base: String, path: String, body: [UInt8]?, timeout: Duration, attempt: Int
    ) async throws(HTTPFailure) -> HTTPAnswer {
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
        logger.debug("Rhea request", metadata: ["tribunal.path": "\(path)", "tribunal.attempt": "\(attempt)"])
        let answer: HTTPAnswer
        do throws(HTTPFailure) {
            answer = try await transport.exchange(request, timeout: timeout, maxBodyBytes: Self.maxResponseBytes)
        } catch {
            logger.info("Rhea request failed", metadata: ["tribunal.path": "\(path)", "tribunal.attempt": "\(attempt)", "tribunal.error": "\(error.label)"])
            throw error
        }
        logger.debug(
            "Rhea response",
            metadata: [
                "tribunal.path": "\(path)", "tribunal.status": "\(answer.status)", "tribunal.attempt": "\(attempt)",
                "tribunal.elapsed": "\(answer.elapsed)",
            ])
        if answer.status == 429 {
            // The gateway sends no Retry-After; if a proxy does, honour it when it asks for longer.
            let wait = max(answer.retryAfter() ?? .zero, configuration.rateLimitCooldown)
            rateLimitGate.hold(path, for: wait, detail: ErrorDetail.readable(from: answer.body, status: 429), now: clock.now)
        }
        return try answer.requireSuccess()
    }

    /// The auth headers: a JWT wins over a key; `dev-bypass` only in development mode.
    func authHeaders() -> [(String, String)] {
        if configuration.token.isNonEmpty, let token = configuration.token {
            return [("Authorization", "Bearer \(token.trimmingWhitespace)")]
        }
        if configuration.apiKey.isNonEmpty, let key = configuration.apiKey {
            return [("X-API-Key", key.trimmingWhitespace)]
        }
        if configuration.developmentMode {
            return [("X-API-Key", "dev-bypass")]
        }
        return []
    }

    /// The transport's failure as this client's error, and whether another attempt may help:
    /// transport failures and 5xx are retried; timeouts are not (the user has already waited
    /// the whole deadline once).
    private func map(_ failure: HTTPFailure, base: String, path: String, timeout: Duration) -> (TribunalError, retryable: Bool) {
        switch failure {
        case .status(let answer):
            return (mapStatus(answer.status, body: answer.body, path: path), answer.status >= 500)
        case .timedOut:
            return (.timedOut(url: base, after: timeout), false)
        case .invalidURL:
            return (.notConfigured(detail: "the tribunal URL \(base) is not a valid http(s) URL"), false)
        case .cancelled:
            return (.unreachable(url: base, reason: "request cancelled"), false)
        case .malformed(let reason):
            return (.malformedResponse(url: base, reason: "\(path): \(reason)"), false)
        case .tls(let reason):
            return (.unreachable(url: base, reason: reason), false)
        case .unreachable(let reason):
            return (.unreachable(url: base, reason: reason), true)
        }
    }

    private func mapStatus(_ status: Int, body: [UInt8], path: String) -> TribunalError {
        let detail = ErrorDetail.readable(from: body, status: status)
        switch status {
        case 401, 403:
            return .unauthorized(detail: detail)
        case 402:
            return .paymentRequired(detail: detail)
        case 429:
            let seconds = rateLimitGate.refusal(for: path, now: clock.now)?.remainingSeconds ?? Int(configuration.rateLimitCooldown.seconds.rounded(.up))
            return .rateLimited(detail: detail, retryAfter: max(1, seconds))
        case 500...:
            return .serverError(status: status, detail: detail)
        case 404:
            return .rejected(detail: "\(path) not found (HTTP 404): the server may be an older Rhea Tribunal version")
        default:
            return .rejected(detail: detail)
        }
    }

    private func backOff(after attempt: Int, path: String, reason: String) async throws(TribunalError) {
        let delay = configuration.retry.delay(afterAttempt: attempt)
        logger.info(
            "Retrying Rhea request",
            metadata: ["tribunal.path": "\(path)", "tribunal.attempt": "\(attempt)", "tribunal.reason": "\(reason)", "tribunal.delay": "\(delay)"])
        do {
            try await clock.sleep(for: delay)
        } catch {
            throw .unreachable(url: baseURL, reason: "request cancelled")
        }
    }
}

/// Remembers 429s per endpoint and refuses calls locally until the cooldown has passed.
///
/// The gateway counts every request, refused ones included, so retrying into a 429 only
/// extends it. Endpoints are held separately: `/tribunal` is rate-limited, while
/// `/keyboard/quick` and `/dialog` are not limited by the server at all.
final class RateLimitGate: Sendable {
    private struct Hold {
        var until: Date
        var detail: String
    }

    private let holds = Mutex<[String: Hold]>([:])

    /// If `path` is held back, the error to answer with instead of calling the server.
    func refusal(for path: String, now: Date) -> RateLimitHold? {
        holds.withLock { holds in
            guard let hold = holds[path] else { return nil }
            guard now < hold.until else {
                holds[path] = nil
                return nil
            }
            return RateLimitHold(detail: hold.detail, remaining: hold.until.duration(since: now))
        }
    }

    /// Holds `path` back for `duration` after a 429.
    func hold(_ path: String, for duration: Duration, detail: String, now: Date) {
        let until = now + duration
        holds.withLock { holds in
            // Never shorten a hold another concurrent request has already set.
            if let existing = holds[path], existing.until > until { return }
            holds[path] = Hold(until: until, detail: detail)
        }
    }
}

/// A refusal from the gate: the server's last 429 text and how long is left.
struct RateLimitHold: Sendable {
    var detail: String
    var remaining: Duration

    /// Whole seconds left, at least 1, as `TribunalError.rateLimited` reports them.
    var remainingSeconds: Int {
        let (seconds, attoseconds) = remaining.components
        return max(1, Int(seconds) + (attoseconds > 0 ? 1 : 0))
    }
}
