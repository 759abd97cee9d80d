public import RelayConsole
public import RelayCore
public import RelayPipeline
public import RelayPlatform
public import RelayStore
public import RelayTribunal
public import RheaAPI

/// Everything the relay needs to start, from YAML plus environment (environment wins).
public struct AppConfiguration: Sendable {
    /// Which backend every command, chain and verify gate uses.
    public enum Backend: Sendable {
        /// The Rhea Tribunal HTTP API (`tribunal.*`).
        case rhea
        /// The built-in council of OpenAI-compatible models (`council.*`).
        case council(CouncilConfiguration)
    }

    /// Whether the backend was configured, or left for `LocalModel.chooseBackend` to pick.
    public enum BackendSource: Sendable, Equatable {
        /// `tribunal.backend`, `tribunal.url` or the tribunal's credentials were set.
        case configured
        /// Nothing was: the local model at `localModelURL`, if it answers.
        case unset
        /// Nothing was, and the local model at `localModelURL` answered.
        case localModel
    }

    public var relay: RelayConfiguration
    public var backend: Backend
    public var backendSource: BackendSource = .configured
    /// Where `scripts/local-model` serves (`localModel.url`, `LOCAL_MODEL_URL`): the backend when
    /// none is configured.
    public var localModelURL = LocalModel.defaultURL
    /// What the local model's tokens cost (`localModel.priceIn`/`priceOut`, `LOCAL_MODEL_PRICE_IN`/
    /// `_OUT`): its electricity, if the operator wants it counted; nil: no price.
    public var localModelPrice: ModelPrice?
    /// `council.timeout` and `council.deadline` as configured (nil: the council's defaults):
    /// read, and checked, whatever the backend, since the local model's council keeps them too.
    public var councilTiming = CouncilTiming()
    public var tribunal: RheaTribunalConfiguration
    /// The speech-to-text service voice notes go to (`transcription.*`); nil: voice notes are off.
    public var transcription: TranscriptionConfiguration?
    /// The SQLite file; created on first run. Unused when `storeURL` is set.
    public var storePath: String
    /// The PostgreSQL database every replica shares (`store.url`, `STORE_URL`, or the file
    /// `store.urlFile` names); nil: the embedded SQLite file at `storePath`.
    public var storeURL: PostgresURL?
    /// swift-log level name (`info`, `debug`…).
    public var logLevel: String
    /// Where `serve` listens (`HTTP_HOST`, `HTTP_PORT`).
    public var http: HTTPSettings
    /// Every platform the server knows, each with its own section read; those that are off
    /// say why in `platformStatus`.
    public var platforms: [any ChatPlatform]
    /// How the outbox worker retries and paces.
    public var delivery: DeliveryPolicy
    /// Runs in flight at most, and the inbox depth beyond which commands are answered "busy".
    public var runs: RunLimits
    /// How long runs in flight get to finish at shutdown before they are left in the inbox for
    /// the next start.
    public var shutdownGrace: Duration
    /// How often finished outbox entries and old or no-longer-wanted history are purged.
    public var retentionInterval: Duration
    /// The Rhea Tribunal API served by `serve` (`api.*`, `RHEA_API_*`); off by default.
    public var api: RheaAPISettings
    /// The team admins' web console (`console.*`, `CONSOLE_*`, `PUBLIC_URL`); off by default.
    public var console = ConsoleSettings()
    /// How long the leases on connections a platform allows once (gateway, long polling,
    /// Socket Mode) last and how often they are renewed: not configurable, since the defaults
    /// bound a takeover to 10 s; tests shorten them.
    public var connectionLease: ConnectionLease.Timing
    /// Variables with the relay's prefixes that nothing read, each with what was likely meant.
    public var unreadVariables: [String] = []
    /// Said at start, before anything else: the unread variables, as warnings.
    public var warnings: [String] { unreadVariables.map { "warning: " + $0 } }

    public init(
        relay: RelayConfiguration = RelayConfiguration(), backend: Backend = .rhea, tribunal: RheaTribunalConfiguration = RheaTribunalConfiguration(),
        storePath: String = AppConfiguration.defaultStorePath, logLevel: String = "warning"
    ) {
        self.relay = relay
        self.backend = backend
        self.tribunal = tribunal
        self.storePath = storePath
        self.logLevel = logLevel
        self.http = HTTPSettings()
        self.platforms = []
        self.delivery = DeliveryPolicy()
        self.runs = RunLimits()
        self.shutdownGrace = .seconds(20)
        self.retentionInterval = .seconds(3600)
        self.api = RheaAPISettings()
        self.connectionLease = ConnectionLease.Timing()
    }

    /// Where the store is, for start-up lines and `/readyz`: the file, or the URL with its
    /// password masked.
    public var storeDescription: String { storeURL.map { "\($0)" } ?? storePath }

    /// The models the backend can use, as the served API's `GET /models` lists them.
    public var servedModels: [ServedModel] {
        switch backend {
        case .council(let council): council.models.map { ServedModel(name: $0.name, model: $0.model, tier: $0.tier) }
        case .rhea: [ServedModel(name: "rhea-tribunal", model: "rhea-tribunal", tier: relay.defaultTier)]
        }
    }

    /// Each platform and whether it is on, with the reason when it is not (for the start-up log
    /// and `/readyz`).
    public var platformStatus: [String: String] { Self.status(of: platforms) }

    /// Each platform's name and state in words.
    public static func status(of platforms: [any ChatPlatform]) -> [String: String] {
        Dictionary(platforms.map { (type(of: $0).name, $0.status.description) }, uniquingKeysWith: { first, _ in first })
    }

    public static let defaultStorePath = "rhea-relay.sqlite"
}

/// Where the HTTP server listens, how long it waits for requests, and who may read its reports.
public struct HTTPSettings: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    /// Outbound connections per host in the shared HTTP client's pool (`http.outboundConnections`):
    /// replies and model calls are slow, so this bounds how many can be in flight to one host.
    public var outboundConnectionsPerHost: Int
    /// A connection that sends nothing for this long is closed (`http.idleTimeout`); this also
    /// bounds the time a client may take to send its headers.
    public var idleTimeout: Duration
    /// A request must arrive whole (head to last body byte) within this (`http.readTimeout`), or
    /// its connection is closed: a body trickled a byte at a time cannot hold a connection open.
    public var readTimeout: Duration
    /// Connections held at once (`http.maxConnections`); past it a new connection closes the one
    /// whose request has been arriving longest (see `ConnectionLimiter`).
    public var maxConnections: Int
    /// The bearer token for the detailed `/readyz` report and `/metrics` (`http.adminToken`, env
    /// `HTTP_ADMIN_TOKEN`, or `http.adminTokenFile`); nil: no detailed report, open metrics.
    public var adminToken: String?

    public init(
        host: String = "127.0.0.1", port: Int = 8080, outboundConnectionsPerHost: Int = 256, idleTimeout: Duration = .seconds(30),
        readTimeout: Duration = .seconds(10), maxConnections: Int = 512, adminToken: String? = nil
    ) {
        self.host = host
        self.port = port
        self.outboundConnectionsPerHost = outboundConnectionsPerHost
        self.idleTimeout = idleTimeout
        self.readTimeout = readTimeout
        self.maxConnections = maxConnections
        self.adminToken = adminToken
    }

    /// Says whether an admin token is set, never what it is.
    public var description: String {
        "HTTPSettings(\(host):\(port), idle \(idleTimeout), read \(readTimeout), at most \(maxConnections) connections, admin token \(adminToken == nil ? "unset" : "set"))"
    }
}

/// The council's time limits as configured; nil where the default applies.
public struct CouncilTiming: Sendable, Hashable {
    /// Per model call (`council.timeout`).
    public var timeout: Duration?
    /// A whole consensus (`council.deadline`).
    public var deadline: Duration?

    public init(timeout: Duration? = nil, deadline: Duration? = nil) {
        self.timeout = timeout
        self.deadline = deadline
    }

    /// `council` with these limits where they are set.
    public func applied(to council: CouncilConfiguration) -> CouncilConfiguration {
        var council = council
        council.defaultTimeout = timeout ?? council.defaultTimeout
        council.deadline = deadline ?? council.deadline
        return council
    }
}
