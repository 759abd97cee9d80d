public import Logging
import NIOHTTP1
public import RelayCore
public import RelayHTTP

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
        return try QuickMapping.result(from: response, measured: measured, url: configuration.normalizedBaseURL)
    }

    /// Several models judge the claim: `/tribunal` with credentials, `/dialog` without.
    public func consensus(_ request: ConsensusRequest) async throws(TribunalError) -> ConsensusResult {
        if configuration.hasCredentials {
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
        return BackendAnswers.health(from: response, endpoint: configuration.normalizedBaseURL)
    }

    private func tribunalConsensus(_ request: ConsensusRequest) async throws(TribunalError) -> ConsensusResult {
        let body = try ConsensusMapping.tribunalBody(for: request)
        let (response, measured) = try await send(
            .POST, "/tribunal", body: body, timeout: configuration.timeouts.tribunal,
            as: RheaWire.TribunalResponse.self)
        return try ConsensusMapping.result(
            from: response, k: body.k, measured: measured, url: configuration.normalizedBaseURL)
    }

    /// `/dialog` always asks two cheap models: `k` and `tier` cannot be passed on.
    private func dialogConsensus(_ request: ConsensusRequest) async throws(TribunalError) -> ConsensusResult {
        try TextLimits.check(request.claim, limit: TextLimits.text, what: "claim")
        let body = RheaWire.DialogRequest(text: request.claim, sender: Self.dialogSender)
        let (response, measured) = try await send(
            .POST, "/dialog", body: body, timeout: configuration.timeouts.dialog,
            as: RheaWire.DialogResponse.self)
        return try ConsensusMapping.result(from: response, measured: measured, url: configuration.normalizedBaseURL)
    }
}
