public import RelayCore
public import RelayTribunal
public import SlackAdapter

/// Everything the relay needs to start, from YAML plus environment (environment wins).
public struct AppConfiguration: Sendable {
    /// Which backend every command, chain and verify gate uses.
    public enum Backend: Sendable {
        /// The Rhea Tribunal HTTP API (`tribunal.*`).
        case rhea
        /// The built-in council of OpenAI-compatible models (`council.*`).
        case council(CouncilConfiguration)
    }

    public var relay: RelayConfiguration
    public var backend: Backend
    public var tribunal: RheaTribunalConfiguration
    /// The SQLite file; created on first run.
    public var storePath: String
    /// swift-log level name (`info`, `debug`…).
    public var logLevel: String
    /// Where `serve` listens (`HTTP_HOST`, `HTTP_PORT`).
    public var http: HTTPSettings
    /// Slack credentials and options; Slack is off when none are set.
    public var slack: SlackConfiguration
    /// How the outbox worker retries and paces.
    public var delivery: DeliveryPolicy
    /// Seconds runs in flight get to finish at shutdown before they are parked for the next start.
    public var shutdownGrace: Double

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
        self.slack = SlackConfiguration()
        self.delivery = DeliveryPolicy()
        self.shutdownGrace = 20
    }

    /// Each platform and whether it is on, with the reason when it is not (for the start-up log
    /// and `/readyz`).
    public var platformStatus: [String: String] {
        ["slack": slack.status]
    }

    public static let defaultStorePath = "rhea-relay.sqlite"
}

/// Where the HTTP server listens.
public struct HTTPSettings: Sendable, Hashable {
    public var host: String
    public var port: Int

    public init(host: String = "127.0.0.1", port: Int = 8080) {
        self.host = host
        self.port = port
    }
}

/// A configuration value that is missing, malformed or out of range: names the key and its
/// environment variable, and says what is accepted.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
