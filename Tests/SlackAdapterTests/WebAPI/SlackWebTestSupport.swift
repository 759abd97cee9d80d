import AsyncHTTPClient
import Logging
import RelayHTTP
import RelayTestSupport
import SlackAdapter
import Synchronization
import Testing

/// A fake Web API, a client pointed at it, and the client's log lines.
struct SlackWebHarness {
    let fake: FakeSlackWebAPI
    let client: SlackWebClient
    let logs: LogCapture
    let http: HTTPClient
}

/// The relay's own HTTP client: no redirects, refused connections fail at once.
func makeTestHTTPClient() -> HTTPClient {
    HTTPTransport.makeClient(maxConnectionsPerHost: 8)
}

/// Starts a fake Web API and a client for it, runs `body`, then checks that no credential was
/// logged and tears both down.
///
/// - Parameters:
///   - botToken: the client's token; nil uses the fake's (pass "" for none).
///   - timeout: the client's per-call timeout, generous for a loaded machine.
func withSlackWeb<T>(
    botToken: String? = nil,
    timeout: Duration = .seconds(10),
    socketMode: FakeSocketModeServer? = nil,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (SlackWebHarness) async throws -> T
) async throws -> T {
    let http = makeTestHTTPClient()
    let logs = LogCapture()
    do {
        let result = try await withFakeSlackWebAPI(socketMode: socketMode) { fake in
            let client = SlackWebClient(
                transport: HTTPTransport(client: http), apiURL: fake.apiURL, botToken: botToken ?? fake.botToken, timeout: timeout,
                logger: logs.logger)
            let result = try await body(SlackWebHarness(fake: fake, client: client, logs: logs, http: http))
            for secret in [fake.botToken, fake.appToken] {
                #expect(!logs.text.contains(secret), "a token was logged")
            }
            #expect(!logs.text.contains("/response/"), "a response_url was logged")
            return result
        }
        try await http.shutdown()
        return result
    } catch {
        try? await http.shutdown()
        throw error
    }
}

/// The `SlackAPIError` `operation` throws, or nil when it succeeds.
func slackError<T>(
    isolation: isolated (any Actor)? = #isolation,
    _ operation: () async throws -> T
) async -> SlackAPIError? {
    do {
        _ = try await operation()
        return nil
    } catch let error as SlackAPIError {
        return error
    } catch {
        Issue.record("not a SlackAPIError: \(error)")
        return nil
    }
}
