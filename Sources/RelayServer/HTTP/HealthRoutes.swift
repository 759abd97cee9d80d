import Foundation
import Hummingbird
import Prometheus
import RelayCore
import RelayPipeline
import RelayPlatform

/// `GET /healthz` (the process answers), `GET /readyz` (ready or not; the detailed report needs
/// the admin token), `GET /metrics` (Prometheus text; needs the admin token when one is set).
///
/// The public learns only whether the relay is ready: the detailed report names the backend's
/// address, the store's errors and each platform's state, which help an attacker more than a
/// user. Operators send `Authorization: Bearer <http.adminToken>`.
struct HealthRoutes: Sendable {
    let store: any Store
    let tribunal: any Tribunal
    let platforms: [String: String]
    /// The platforms that refuse the relay's credentials now: each makes the relay not ready.
    let refusals: CredentialRefusals
    let registry: PrometheusCollectorRegistry
    /// Runs in flight right now (reported: with the outbox depth it tells when the relay is idle).
    let runsInFlight: @Sendable () -> Int
    /// Whether the dispatcher takes runs: not before it has taken back what a dead process left
    /// (until then a command waits in the inbox), nor once shutting down.
    let takingRuns: @Sendable () -> Bool
    /// Who may read the detailed report and the metrics; nil when no token is configured.
    let admin: AdminToken?

    func add(to router: Router<some RequestContext>) {
        router.get("healthz") { _, _ in "ok\n" }
        router.get("readyz") { request, _ in
            switch AdminToken.access(request.headers, token: admin) {
            // The public answer does not ask the backend: probing it cannot make the relay call out.
            case .anonymous: return try await readiness(detailed: false).publicResponse
            case .admin: return try await readiness(detailed: true).detailedResponse
            case .refused(let why): return AdminToken.refusal(why)
            }
        }
        router.get("metrics") { request, _ in
            if admin != nil {
                switch AdminToken.access(request.headers, token: admin) {
                case .admin: break
                case .anonymous: return AdminToken.refusal("/metrics needs the admin token: send Authorization: Bearer <http.adminToken>.")
                case .refused(let why): return AdminToken.refusal(why)
                }
            }
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
        }
    }

    /// Whether the relay is ready, and the report behind it.
    struct Readiness {
        var ready: Bool
        var report: [String: JSONValue]

        /// `ready` (200) or `not ready` (503), and nothing else.
        var publicResponse: Response {
            Response(
                status: ready ? .ok : .serviceUnavailable, headers: [.contentType: "text/plain; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: ready ? "ready\n" : "not ready\n")))
        }

        /// The whole report as JSON, with the same status.
        var detailedResponse: Response {
            Response(
                status: ready ? .ok : .serviceUnavailable, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: JSONValue.object(report).encoded())))
        }
    }

    /// Ready when the store answers. An unreachable backend is reported but does not make the
    /// relay unready: replies then say what is wrong, and nothing is lost.
    /// Each platform's state in words: on or off (and why), and each credential it refuses now.
    static func states(_ platforms: [String: String], refusals: CredentialRefusals) -> [String: String] {
        var states = platforms
        for (platform, refused) in refusals.current {
            let reasons = refused.map { "\($0.credential) refused since \($0.since.formatted(.iso8601)): \($0.reason)" }
            states[platform] = ([platforms[platform] ?? "on"] + reasons).joined(separator: "; ")
        }
        return states
    }

    func readiness(detailed: Bool) async throws -> Readiness {
        var body: [String: JSONValue] = [:]
        var ready = true
        // Runs first, then the outbox: a run stores its replies before it stops counting, so a
        // report of no run and an empty outbox means idle. (Read the other way round, a run could
        // store its reply and end between the two reads, and look idle with a reply pending.)
        let inFlight = runsInFlight()
        let taking = takingRuns()
        if !taking { ready = false }
        do {
            let depth = try await store.pendingOutboxCount()
            body["store"] = ["status": "ok", "outboxDepth": .int(depth)]
        } catch {
            ready = false
            body["store"] = ["status": "unavailable", "detail": .string("\(error)")]
        }
        // A refused token does not fix itself: a deployment whose bot cannot answer is not ready
        // (a rolling update stops there, before it replaces replicas that work).
        let refused = refusals.current
        if !refused.isEmpty { ready = false }
        guard detailed else { return Readiness(ready: ready, report: body) }
        do throws(TribunalError) {
            let health = try await tribunal.health()
            body["backend"] = [
                "status": .string(health.status), "endpoint": .string(MaskedURL.display(health.endpoint)), "detail": health.detail.map { .string($0) } ?? nil,
            ]
        } catch {
            // The admin's report: it names the address and the reason.
            body["backend"] = ["status": "unreachable", "detail": .string(error.operatorMessage)]
        }
        body["platforms"] = .object(Self.states(platforms, refusals: refusals).mapValues { JSONValue.string($0) })
        body["runs"] = ["inFlight": .int(inFlight), "status": taking ? "taking runs" : "starting or stopping"]
        body["status"] = .string(ready ? "ready" : "not ready")
        return Readiness(ready: ready, report: body)
    }
}
