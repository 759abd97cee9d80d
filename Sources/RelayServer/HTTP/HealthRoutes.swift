import Foundation
import Hummingbird
import Prometheus
import RelayCore

/// `GET /healthz` (the process answers), `GET /readyz` (the store is open; the backend's
/// reachability, each platform's state and the runs in flight are reported), `GET /metrics` (Prometheus text).
struct HealthRoutes: Sendable {
    let store: any Store
    let tribunal: any Tribunal
    let platforms: [String: String]
    let registry: PrometheusCollectorRegistry
    /// Runs in flight right now (reported: with the outbox depth it tells when the relay is idle).
    let runsInFlight: @Sendable () -> Int

    func add(to router: Router<some RequestContext>) {
        router.get("healthz") { _, _ in "ok\n" }
        router.get("readyz") { _, _ in try await readiness() }
        router.get("metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
        }
    }

    /// 200 when the store answers, 503 when it does not. An unreachable backend is reported
    /// but does not make the relay unready: replies then say what is wrong, and nothing is lost.
    func readiness() async throws -> Response {
        var body: [String: JSONValue] = [:]
        var ready = true
        do {
            let depth = try await store.pendingOutboxCount()
            body["store"] = ["status": "ok", "outboxDepth": .int(depth)]
        } catch {
            ready = false
            body["store"] = ["status": "unavailable", "detail": .string("\(error)")]
        }
        do throws(TribunalError) {
            let health = try await tribunal.health()
            body["backend"] = ["status": .string(health.status), "endpoint": .string(health.endpoint), "detail": health.detail.map { .string($0) } ?? nil]
        } catch {
            body["backend"] = ["status": "unreachable", "detail": .string(error.userMessage)]
        }
        body["platforms"] = .object(platforms.mapValues { .string($0) })
        body["runs"] = ["inFlight": .int(runsInFlight())]
        body["status"] = .string(ready ? "ready" : "not ready")
        return Response(
            status: ready ? .ok : .serviceUnavailable, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: JSONValue.object(body).encoded())))
    }
}
