import Hummingbird
import HummingbirdTesting
import RelayCore
import RelayTestSupport

/// Waits until the relay behind `client` is idle, as its `/readyz` says: taking runs, none in
/// flight, the outbox empty — every reply sent (and, on a socket platform, confirmed by the
/// server). Each harness's `settled()` is this with its admin token.
func waitUntilIdle(_ client: any TestClientProtocol, adminToken: String, safety: Duration = .seconds(120)) async throws {
    try await eventually("the relay to be idle (no run in flight, outbox empty)", safety: safety) {
        let response = try await client.execute(uri: "/readyz", method: .get, headers: [.authorization: "Bearer \(adminToken)"], body: nil)
        let report = JSONValue.parse(response.body.readableBytesView)
        return report?["runs"]?["status"]?.stringValue == "taking runs" && report?["runs"]?["inFlight"]?.intValue == 0
            && report?["store"]?["outboxDepth"]?.intValue == 0
    }
}
