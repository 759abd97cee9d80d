public import RelayCore
public import RelayTribunal

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

    public init(
        relay: RelayConfiguration = RelayConfiguration(), backend: Backend = .rhea, tribunal: RheaTribunalConfiguration = RheaTribunalConfiguration(),
        storePath: String = AppConfiguration.defaultStorePath, logLevel: String = "warning"
    ) {
        self.relay = relay
        self.backend = backend
        self.tribunal = tribunal
        self.storePath = storePath
        self.logLevel = logLevel
    }

    public static let defaultStorePath = "rhea-relay.sqlite"
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
