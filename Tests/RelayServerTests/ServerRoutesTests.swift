import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Metrics
import Prometheus
import RelayCore
import RelayServer
import RelayTestSupport
import RelayTribunal
import SlackAdapter
import Testing

/// swift-metrics is bootstrapped once per process, as `serve` does it.
enum TestMetrics {
    static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory.relay(registry: registry))
        return registry
    }()
}

@Suite("serve: health, readiness, metrics")
struct ServerRoutesTests {
    static let adminToken = "routes-admin-token-0123456789"

    func withApp(adminToken: String? = Self.adminToken, _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        try await TemporaryDatabase.with { db in
            var configuration = AppConfiguration(storePath: db.path)
            configuration.tribunal.baseURL = "http://127.0.0.1:1"  // nothing listens there
            configuration.tribunal.timeouts.health = .seconds(1)
            configuration.platforms = [SlackPlatform(configuration: SlackConfiguration())]  // no credentials: off
            configuration.http.adminToken = adminToken
            let app = try await RelayApplication.build(configuration: configuration, registry: TestMetrics.registry, logger: Logger(label: "test.server"))
            try await app.test(.live) { client in try await body(client) }
        }
    }

    @Test func healthzAnswersOK() async throws {
        try await withApp { client in
            try await client.execute(uri: "/healthz", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == "ok\n")
            }
        }
    }

    @Test func readyzTellsThePublicOnlyWhetherTheRelayIsReady() async throws {
        try await withApp { client in
            try await client.execute(uri: "/readyz", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == "ready\n")
            }
            // A wrong token, or another scheme, is refused and says why; no report leaks.
            for header in ["Bearer not-the-admin-token-000000", "Basic \(Self.adminToken)"] {
                try await client.execute(uri: "/readyz", method: .get, headers: [.authorization: header]) { response in
                    #expect(response.status == .unauthorized)
                    let text = String(buffer: response.body)
                    #expect(text.contains("error"))
                    #expect(!text.contains("127.0.0.1"))
                    #expect(!text.contains("outboxDepth"))
                }
            }
        }
        // No token configured: no detailed report for anyone.
        try await withApp(adminToken: nil) { client in
            try await client.execute(uri: "/readyz", method: .get, headers: [.authorization: "Bearer \(Self.adminToken)"]) { response in
                #expect(response.status == .unauthorized)
                #expect(!String(buffer: response.body).contains("outboxDepth"))
            }
            try await client.execute(uri: "/readyz", method: .get) { response in #expect(String(buffer: response.body) == "ready\n") }
        }
    }

    @Test func readyzReportsTheStoreTheBackendAndWhyPlatformsAreOffToTheAdmin() async throws {
        try await withApp { client in
            try await client.execute(uri: "/readyz", method: .get, headers: [.authorization: "Bearer \(Self.adminToken)"]) { response in
                #expect(response.status == .ok)
                let body = try #require(JSONValue.parse(response.body.readableBytesView))
                #expect(body["status"]?.stringValue == "ready")
                #expect(body["store"]?["status"]?.stringValue == "ok")
                #expect(body["backend"]?["status"]?.stringValue == "unreachable")
                #expect(body["backend"]?["detail"]?.stringValue?.contains("127.0.0.1:1") == true)
                #expect(body["platforms"]?["slack"]?.stringValue?.hasPrefix("off: set SLACK_SIGNING_SECRET") == true)
            }
        }
    }

    @Test func metricsNeedTheAdminTokenWhenOneIsSet() async throws {
        try await withApp { client in
            try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(response.status == .unauthorized)
                #expect(String(buffer: response.body).contains("admin token"))
            }
            try await client.execute(uri: "/metrics", method: .get, headers: [.authorization: "Bearer \(Self.adminToken)"]) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).contains("# TYPE hb_requests counter"))
            }
        }
    }

    @Test func metricsAreInPrometheusFormatWithRequestsByRouteAndStatus() async throws {
        try await withApp(adminToken: nil) { client in
            try await client.execute(uri: "/healthz", method: .get) { _ in }
            try await client.execute(uri: "/nowhere", method: .get) { response in #expect(response.status == .notFound) }
            try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType]?.hasPrefix("text/plain") == true)
                let text = String(buffer: response.body)
                #expect(text.contains("# TYPE hb_requests counter"))
                #expect(text.contains(#"http_route="/healthz""#))
                #expect(text.contains(#"http_response_status_code="200""#))
            }
            // The outbox worker records its depth when it first looks, which may come a moment
            // after the server answers (services start concurrently).
            try await eventually("the outbox depth gauge") {
                String(buffer: try await client.execute(uri: "/metrics", method: .get).body).contains("relay_outbox_depth")
            }
            let text = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
            #expect(text.contains("# TYPE relay_outbox_depth gauge"))
        }
    }

    @Test func serverTimeoutsAndTheAdminTokenComeFromConfiguration() async throws {
        let configuration = try await ConfigurationLoader.load(
            file: nil,
            environment: ["HTTP_IDLE_TIMEOUT": "45", "HTTP_READ_TIMEOUT": "2.5", "HTTP_MAX_CONNECTIONS": "2000", "HTTP_ADMIN_TOKEN": Self.adminToken],
            platforms: [])
        #expect(configuration.http.idleTimeout == .seconds(45))
        #expect(configuration.http.readTimeout == .milliseconds(2500))
        #expect(configuration.http.maxConnections == 2000)
        #expect(configuration.http.adminToken == Self.adminToken)
        #expect(!"\(configuration.http)".contains(Self.adminToken), "the token is never printed")

        let defaults = try await ConfigurationLoader.load(file: nil, environment: [:], platforms: [])
        #expect(defaults.http.idleTimeout == .seconds(30))
        #expect(defaults.http.readTimeout == .seconds(10))
        #expect(defaults.http.maxConnections == 512)
        #expect(defaults.http.adminToken == nil)

        for (key, value, says) in [
            ("HTTP_READ_TIMEOUT", "0", "http.readTimeout (HTTP_READ_TIMEOUT)"), ("HTTP_IDLE_TIMEOUT", "soon", "http.idleTimeout (HTTP_IDLE_TIMEOUT)"),
            ("HTTP_ADMIN_TOKEN", "short", "at least 16 characters"), ("HTTP_MAX_CONNECTIONS", "0", "http.maxConnections (HTTP_MAX_CONNECTIONS)"),
        ] {
            await #expect {
                _ = try await ConfigurationLoader.load(file: nil, environment: [key: value], platforms: [])
            } throws: { error in
                "\(error)".contains(says) && !"\(error)".contains("short")
            }
        }
    }
}
