import AsyncHTTPClient
import Logging
import RelayCore
import RelayHTTP
import RelayTestSupport
import RelayTribunal
import Synchronization
import Testing

/// A fake gateway, a client pointed at it, and the client's log lines.
struct TribunalHarness {
    let fake: FakeRheaTribunal
    let client: RheaTribunalClient
    let logs: LogCapture
    let configuration: RheaTribunalConfiguration
}

/// Fast retries so the suite runs in seconds.
let fastRetry = RetryPolicy(attempts: 3, baseDelay: .milliseconds(10), maxDelay: .milliseconds(50))

/// Generous defaults for a loaded CI machine; timeout tests pass their own.
let testTimeouts = RheaTribunalConfiguration.Timeouts(quick: .seconds(10), dialog: .seconds(10), tribunal: .seconds(10), health: .seconds(10))

/// Starts a fake and a client for it, runs `body`, then checks that no credential was logged
/// and tears both down.
func withTribunal<T>(
    token: String? = nil,
    apiKey: String? = nil,
    developmentMode: Bool = false,
    timeouts: RheaTribunalConfiguration.Timeouts = testTimeouts,
    retry: RetryPolicy = fastRetry,
    rateLimitCooldown: Duration = .seconds(60),
    baseURL: ((FakeRheaTribunal) -> String)? = nil,
    allowDevBypass: Bool = true,
    clock: any RelayClock = SystemClock(),
    isolation: isolated (any Actor)? = #isolation,
    _ body: (TribunalHarness) async throws -> T
) async throws -> T {
    let http = HTTPTransport.makeClient(maxConnectionsPerHost: 8)
    let logs = LogCapture()
    do {
        let result = try await withFakeRheaTribunal(allowDevBypass: allowDevBypass) { fake in
            let configuration = RheaTribunalConfiguration(
                baseURL: baseURL?(fake) ?? fake.url, token: token, apiKey: apiKey, developmentMode: developmentMode,
                timeouts: timeouts, retry: retry, rateLimitCooldown: rateLimitCooldown)
            let client = RheaTribunalClient(configuration: configuration, transport: HTTPTransport(client: http), clock: clock, logger: logs.logger)
            return try await body(
                TribunalHarness(fake: fake, client: client, logs: logs, configuration: configuration))
        }
        for secret in [token, apiKey].compactMap({ $0 }) {
            #expect(!logs.text.contains(secret), "a credential was logged")
        }
        try await http.shutdown()
        return result
    } catch {
        try? await http.shutdown()
        throw error
    }
}

/// The `TribunalError` `operation` throws, or nil when it succeeds.
///
/// Closures are not inferred as `throws(TribunalError)`, so any error is accepted here and
/// anything else is recorded as an issue.
func failure<T>(
    _ operation: () async throws -> T, sourceLocation: SourceLocation = #_sourceLocation
) async -> TribunalError? {
    do {
        _ = try await operation()
        return nil
    } catch let error as TribunalError {
        return error
    } catch {
        Issue.record("expected a TribunalError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Checks what every error shown to a chat user must satisfy.
func expectPresentable(_ error: TribunalError, secrets: [String?] = [], sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(!error.userMessage.isEmpty, sourceLocation: sourceLocation)
    for secret in secrets.compactMap({ $0 }) {
        #expect(!error.userMessage.contains(secret), "userMessage leaks a credential", sourceLocation: sourceLocation)
        #expect(!error.operatorMessage.contains(secret), "operatorMessage (logged) leaks a credential", sourceLocation: sourceLocation)
        #expect(!"\(error)".contains(secret), "error description leaks a credential", sourceLocation: sourceLocation)
    }
}
