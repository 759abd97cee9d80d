public import Hummingbird
public import Logging
public import Prometheus
import RelayCore
import ServiceLifecycle

/// `rhea-relay serve`, assembled: the HTTP routes, the run dispatcher, the outbox worker and
/// each configured platform. `serve` and the tests build it the same way, so what is tested is
/// what runs.
public enum RelayApplication {
    public typealias App = Application<RouterResponder<BasicRequestContext>>

    /// Builds the application; run it with `runService()` (SIGTERM/SIGINT shut it down
    /// gracefully) or HummingbirdTesting's `test(.live)`.
    public static func build(
        configuration: AppConfiguration, registry: PrometheusCollectorRegistry, logger: Logger
    ) async throws -> App {
        let runtime = try await RelayRuntime.start(configuration, logger: logger)
        let relay = Relay(tribunal: MeteredTribunal(runtime.relay.tribunal), store: runtime.store, configuration: configuration.relay)
        let outbox = Outbox(store: runtime.store)
        let dispatcher = RunDispatcher(relay: relay, outbox: outbox, grace: configuration.shutdownGrace, logger: logger)
        let platforms = PlatformSetup(configuration: configuration, runtime: runtime, inbox: Inbox(dispatcher: dispatcher, outbox: outbox), logger: logger)

        let router = Router()
        router.add(middleware: MetricsMiddleware())
        HealthRoutes(store: runtime.store, tribunal: relay.tribunal, platforms: configuration.platformStatus, registry: registry)
            .add(to: router)
        platforms.addRoutes(to: router)

        let worker = OutboxWorker(
            outbox: outbox, senders: platforms.senders, policy: configuration.delivery,
            parkedRuns: { entry, event in await dispatcher.resume(entry, event: event) }, logger: logger)
        // Shut down in reverse: the server stops accepting first, then platform connections,
        // then runs are finished or parked, then the outbox drains, then the store closes.
        var services: [any Service] = [RuntimeCloser(runtime: runtime), worker, dispatcher]
        services += platforms.services
        return Application(
            router: router,
            configuration: .init(address: .hostname(configuration.http.host, port: configuration.http.port), serverName: "rhea-relay"),
            services: services,
            logger: logger)
    }
}

/// Closes the store and the shared HTTP client once everything else has stopped.
struct RuntimeCloser: Service {
    let runtime: RelayRuntime

    func run() async throws {
        try? await gracefulShutdown()
        await runtime.shutdown()
    }
}
