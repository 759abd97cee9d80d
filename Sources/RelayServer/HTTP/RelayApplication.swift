public import Hummingbird
import HummingbirdCore
public import Logging
import NIOCore
public import Prometheus
import RelayConsole
public import RelayCore
public import RelayHTTP
public import RelayPipeline
public import RelayPlatform
import RelayTribunal
import RheaAPI
import ServiceLifecycle

import class Foundation.ProcessInfo

/// `rhea-relay serve`, assembled: the HTTP routes, the run dispatcher, the outbox worker and
/// each configured platform. `serve` and the tests build it the same way, so what is tested is
/// what runs.
public enum RelayApplication {
    public typealias App = Application<RouterResponder<BasicRequestContext>>

    /// Everything the application is made of, already made: tests pass their own store, backend,
    /// platforms and clock; `build(configuration:…)` makes them from configuration.
    public struct Dependencies: Sendable {
        /// Listening address, relay defaults, delivery policy, shutdown grace.
        public var configuration: AppConfiguration
        public var store: any Store
        /// The backend as configured; the application counts its calls for metrics.
        public var backend: any Tribunal
        /// The configured platforms; those whose status is off are not connected.
        public var platforms: [any ChatPlatform]
        public var transport: HTTPTransport
        public var clock: any RelayClock
        public var registry: PrometheusCollectorRegistry
        public var logger: Logger
        /// Runs last at shutdown, after the outbox has drained (closes what the caller opened).
        public var close: @Sendable () async -> Void
        /// The relay's lasting secret (`RelaySecretFile`), handed to platforms.
        public var relaySecret: String?
        /// This process among the replicas: the holder of the connection leases it takes.
        public var replica: String
        /// Whether to ask each platform at start whether it takes the credentials
        /// (`CredentialStartCheck`): `serve` does; tests that count a platform's requests do not.
        public var checkCredentialsAtStart = false

        public init(
            configuration: AppConfiguration, store: any Store, backend: any Tribunal, platforms: [any ChatPlatform],
            transport: HTTPTransport, clock: any RelayClock = SystemClock(), registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
            logger: Logger, close: @escaping @Sendable () async -> Void = {}, relaySecret: String? = nil, replica: String = RelayApplication.replicaName()
        ) {
            self.configuration = configuration
            self.store = store
            self.backend = backend
            self.platforms = platforms
            self.transport = transport
            self.clock = clock
            self.registry = registry
            self.logger = logger
            self.close = close
            self.relaySecret = relaySecret
            self.replica = replica
        }
    }

    /// `<host>/<pid>/<8 random hex digits>`: which machine and process holds a lease, for the
    /// operator reading the store; the random part tells a restarted process (which may get the
    /// same pid in a container) from the one before it.
    public static func replicaName() -> String {
        let process = ProcessInfo.processInfo
        let random = String(UInt32.random(in: .min ... .max), radix: 16)
        return "\(process.hostName)/\(process.processIdentifier)/\(String(repeating: "0", count: 8 - random.count) + random)"
    }

    /// Builds the application from configuration: opens the store, the transport and the
    /// backend, then composes them. Run it with `runService()` (SIGTERM/SIGINT shut it down
    /// gracefully) or HummingbirdTesting's `test(.live)`. `onListening` is told the port the
    /// server listens on once it does (the one the system chose for `HTTP_PORT=0`).
    public static func build(
        configuration: AppConfiguration, registry: PrometheusCollectorRegistry, logger: Logger, checkCredentialsAtStart: Bool = false,
        onListening: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) async throws -> App {
        let runtime = try await RelayRuntime.start(configuration, logger: logger)
        do {
            let secret =
                try configuration.storeURL.map(RelaySecretFile.shared(for:))
                ?? RelaySecretFile.loadOrCreate(path: RelaySecretFile.path(forStore: configuration.storePath))
            var dependencies = Dependencies(
                configuration: configuration, store: runtime.store, backend: runtime.tribunal, platforms: configuration.platforms,
                transport: runtime.transport, registry: registry, logger: logger, close: { await runtime.shutdown() }, relaySecret: secret)
            dependencies.checkCredentialsAtStart = checkCredentialsAtStart
            return try build(dependencies, onListening: onListening)
        } catch {
            await runtime.shutdown()
            throw error
        }
    }

    /// Composes the application from made dependencies: the one `Relay`, the outbox, the
    /// dispatcher, every platform that is on, and the routes.
    public static func build(_ dependencies: Dependencies, onListening: @escaping @Sendable (_ port: Int) async -> Void = { _ in }) throws -> App {
        let configuration = dependencies.configuration
        let logger = dependencies.logger
        let refusals = CredentialRefusals()
        let connected = try dependencies.platforms.filter(\.status.isOn).map { platform in
            let name = type(of: platform).name
            var platformLogger = logger
            platformLogger[metadataKey: "platform"] = .string(name)
            let credentials = refusals.reporter(platform: name, clock: dependencies.clock, logger: platformLogger)
            // The store leases the connections a platform allows once, so that of the replicas
            // sharing it one holds each (docs/replicas.md).
            let context = PlatformContext(
                transport: dependencies.transport, clock: dependencies.clock, logger: platformLogger, relaySecret: dependencies.relaySecret,
                leases: dependencies.store, leasesShared: dependencies.store.isShared, replica: dependencies.replica,
                leaseTiming: configuration.connectionLease, credentials: credentials)
            return (name: name, platform: platform, credentials: credentials, connection: try platform.connect(context))
        }
        let readers = Dictionary(connected.compactMap { item in item.connection.reader.map { (item.name, $0) } }, uniquingKeysWith: { first, _ in first })
        // Voice notes, when a transcription service is configured: on the same shared transport.
        let transcriber = configuration.transcription.map {
            OpenAITranscriptionClient(configuration: $0, transport: dependencies.transport, logger: logger)
        }
        // Token and cost metrics by the council's model names; a gateway's models under `rhea`.
        let metered: MeteredTribunal =
            switch configuration.backend {
            case .council(let council): MeteredTribunal(dependencies.backend, modelLabels: Set(council.models.map(\.name)))
            case .rhea: MeteredTribunal(dependencies.backend, otherModels: "rhea")
            }
        var relay = Relay(
            tribunal: metered, store: dependencies.store, configuration: configuration.relay,
            clock: dependencies.clock, readers: readers, failures: .chat(log: { logger.failure($0) }), transcriber: transcriber)
        // The console's links and sessions are signed with a key from the relay's lasting secret,
        // which every replica sharing the store derives alike.
        let console = configuration.console.isOn ? dependencies.relaySecret.map { ConsoleTokens(relaySecret: $0, settings: configuration.console) } : nil
        if configuration.console.isOn, console == nil { logger.warning("console: off, as this relay has no lasting secret to sign its links with") }
        relay.console = console
        // Secrets waiting in the outbox (a console link) are sealed with the relay's lasting secret.
        let sealer = dependencies.relaySecret.map { secret in
            let box = OutboxSecretBox(secret: secret, purpose: "secret replies")
            return SecretSealer(seal: box.seal, open: box.open)
        }
        let outbox = Outbox(store: dependencies.store, clock: dependencies.clock, lease: configuration.delivery.lease, sealer: sealer)
        let dispatcher = RunDispatcher(
            relay: relay, outbox: outbox, limits: configuration.runs, grace: configuration.shutdownGrace, senders: connected.map(\.connection.sender),
            logger: logger)
        let inbox: any RelayInbox = dispatcher

        let router = Router()
        router.add(middleware: MetricsMiddleware())
        let routeMethods = RouteMethods()
        router.add(middleware: JSONNotFoundMiddleware(methods: routeMethods))
        HealthRoutes(
            store: dependencies.store, tribunal: relay.tribunal, platforms: AppConfiguration.status(of: dependencies.platforms),
            refusals: refusals, registry: dependencies.registry,
            runsInFlight: { dispatcher.inFlight }, takingRuns: { dispatcher.isTakingRuns },
            admin: configuration.http.adminToken.map(AdminToken.init)
        ).add(to: router)
        for item in connected { item.connection.addRoutes(to: router, inbox: inbox) }
        if let console {
            let platforms = AppConfiguration.status(of: dependencies.platforms)
            ConsoleRoutes(
                relay: relay, tokens: console, clock: dependencies.clock, logger: logger,
                platformStates: { HealthRoutes.states(platforms, refusals: refusals) }
            ).add(to: router)
        }
        if configuration.api.enabled {
            let backendName =
                switch configuration.backend {
                case .council: "council"
                case .rhea: "rhea"
                }
            RheaAPIRoutes(
                settings: configuration.api, tribunal: relay.tribunal, models: configuration.servedModels, backendName: backendName,
                clock: dependencies.clock, failures: .chat(log: { logger.failure($0) }),
                record: { [store = dependencies.store, retention = configuration.relay.defaultRetention] entry in
                    // The relay's default retention decides for API callers, who have no settings.
                    guard retention != .off else { return }
                    do {
                        _ = try await store.recordConsensus(retention == .full ? entry : entry.withoutTexts)
                    } catch {
                        logger.error("ledger: an API consensus could not be recorded", metadata: ["error": "\(error)"])
                    }
                },
                // Replicas count each key's calls in the shared store, so the limits hold for the deployment.
                sharedCounts: dependencies.store.isShared ? dependencies.store as? any CallCountStore : nil, logger: logger
            ).add(to: router)
        }
        // Every route is added: a known path asked with another method is a 405.
        routeMethods.record(router)

        let worker = OutboxWorker(
            outbox: outbox, senders: connected.map(\.connection.sender), policy: configuration.delivery,
            parkedRuns: { entry, event in await dispatcher.resume(entry, event: event) }, logger: logger)
        // Shut down in reverse: the server stops accepting first, then platform connections,
        // then runs are finished or parked, then the outbox drains, then the store closes.
        let retention = DataRetention(
            store: dependencies.store, clock: dependencies.clock, interval: configuration.retentionInterval,
            outboxKeep: configuration.delivery.keepFinished, relay: configuration.relay, logger: logger, holder: dependencies.replica)
        // On a shared store, the replies of a platform whose limits count per bot are sent by the
        // holder of its delivery lease.
        // Listed before the worker, so they stop after it: the worker drains, then the leases
        // are released.
        let deliveryLeases = DeliveryLease.services(senders: connected.map(\.connection.sender), worker: worker, dependencies)
        var services: [any Service] = [Closer(close: dependencies.close)] + deliveryLeases + [worker, dispatcher, retention]
        services += connected.flatMap { $0.connection.services(inbox: inbox) }
        if dependencies.checkCredentialsAtStart {
            services.append(CredentialStartCheck(platforms: connected.map { ($0.platform, $0.credentials) }, logger: logger))
        }
        return Application(
            router: router,
            server: server(configuration.http),
            configuration: .init(address: .hostname(configuration.http.host, port: configuration.http.port), serverName: "rhea-relay"),
            services: services,
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? configuration.http.port) },
            logger: logger)
    }

    /// HTTP/1 with the configured idle timeout (which also bounds the time to send headers) and
    /// a whole-request read timeout (`RequestReadTimeoutHandler`).
    static func server(_ http: HTTPSettings) -> HTTPServerBuilder {
        let readTimeout = TimeAmount(http.readTimeout)
        let limiter = ConnectionLimiter(maximum: http.maxConnections)
        return .http1(
            configuration: .init(
                additionalChannelHandlers: [ConnectionLimitHandler(limiter: limiter), RequestReadTimeoutHandler(timeout: readTimeout)],
                idleTimeout: TimeAmount(http.idleTimeout)))
    }
}

/// Closes the store and the shared HTTP client once everything else has stopped.
struct Closer: Service {
    let close: @Sendable () async -> Void

    func run() async throws {
        try? await gracefulShutdown()
        await close()
    }
}

extension Logger {
    /// The log line behind an error id in a chat reply: the id in the message (so a search for it
    /// finds the line), the details in metadata.
    func failure(_ failure: LoggedFailure) {
        error(
            "run failed, error id \(failure.id): \(failure.detail)",
            metadata: [
                "error_id": .string(failure.id), "error": .string(failure.kind), "call": .string(failure.call), "platform": .string(failure.platform),
                "team": .string(failure.team), "channel": .string(failure.channel),
            ])
    }
}
