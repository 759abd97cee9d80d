import HTTPTypes
import HummingbirdTesting
import NIOCore

/// What a live relay answered a harness's request: status, headers and body, as `TestResponse`
/// has them (whose initialiser HummingbirdTesting keeps to itself).
struct HarnessResponse: Sendable {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var body: ByteBuffer
}

extension TestClientProtocol {
    /// `execute`, on a connection of its own that waits 90 s for the answer.
    ///
    /// HummingbirdTesting's live client gives up after a fixed 20 s without a byte back
    /// (`.readTimeout`). In the peers group (about 300 tests at once on two cores, beside real
    /// PostgreSQL, Synapse and the speech model) requests the relay answers in milliseconds alone
    /// have outlasted that: a Google Chat event holding a 300 KB answer, and one of the Teams
    /// case's requests in the parity suite (a clean clone's CI, 2026-12-06). So a platform's
    /// webhook POST waits as long as the loaded machine takes; the platforms' own deadlines are
    /// checked by the tests that time the answer, never by this wait.
    func patientExecute(uri: String, method: HTTPRequest.Method, headers: HTTPFields = [:], body: ByteBuffer? = nil) async throws -> HarnessResponse {
        guard let port else { throw HarnessClientError.notLive }
        let client = TestClient(host: "127.0.0.1", port: port, configuration: .init(timeout: .seconds(90)))
        client.connect()
        let response: TestClient.Response
        do {
            response = try await client.execute(TestClient.Request(uri, method: method, authority: "localhost", headers: headers, body: body))
        } catch {
            try? await client.shutdown()
            throw error
        }
        try? await client.shutdown()
        return HarnessResponse(status: response.status, headers: response.head.headerFields, body: response.body ?? ByteBuffer())
    }
}

enum HarnessClientError: Error, CustomStringConvertible {
    case notLive

    var description: String { "the harness's client is not connected to a live relay (no port)" }
}
